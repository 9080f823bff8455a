"""Stand-in for NeMo's SentencePieceTokenizer: text_to_tokens(text) = encode_as_pieces(text),
which is what NeMo does with its default legacy=False (no special-token splitting)."""
import sentencepiece


class SentencePieceTokenizer:
    def __init__(self, model_path, **kwargs):
        self.tokenizer = sentencepiece.SentencePieceProcessor()
        self.tokenizer.Load(model_path)

    def text_to_tokens(self, text):
        return self.tokenizer.encode_as_pieces(text)

    def tokens_to_text(self, tokens):
        return self.tokenizer.decode_pieces(tokens)
