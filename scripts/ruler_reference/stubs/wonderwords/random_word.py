"""Stand-in for wonderwords.random_word: only _get_words_from_text_file.

The real function (wonderwords 3.0.0, wonderwords/random_word.py) opens the packaged asset in text
mode (universal newlines, UTF-8 here) and returns [line.rstrip() for line in f.readlines()].
This one does the same on the staged copies in data/ruler/wonderwords/ of the kvbench repo.
"""
import os

_DIR = os.environ.get(
    "RULER_WONDERWORDS_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "data", "ruler", "wonderwords"),
)


def _get_words_from_text_file(word_file):
    with open(os.path.join(_DIR, word_file), "r", encoding="utf-8") as f:
        words = f.readlines()
    return [word.rstrip() for word in words]
