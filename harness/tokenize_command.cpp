// `kvbench tokenize`: a tokenizer's ids for texts, so other tools can check kvbench against
// Hugging Face tokenizers. Each input line {"id", "text"} prints one line {"id", "ids",
// "ids_with_special_tokens", "decoded"}: ids = encode(text, add_special_tokens=False),
// ids_with_special_tokens = encode(text, add_special_tokens=True), decoded = decode(ids) with the
// special tokens kept.
#include <iostream>
#include <memory>

#include "datasets/jsonl_reader.hpp"
#include "harness/command.hpp"
#include "tokenizers/tokenizer.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::harness {
namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::string input;
  std::string text;
  bool has_text = false;
};

nlohmann::json tokenize_one(const models::Tokenizer& tok, const nlohmann::json& id, const std::string& text) {
  const std::vector<int> ids = tok.encode(text, /*add_special_tokens=*/false);
  return {{"id", id},
          {"ids", ids},
          {"ids_with_special_tokens", tok.encode(text, /*add_special_tokens=*/true)},
          {"decoded", tok.decode(ids, /*skip_special_tokens=*/false)}};
}

void print_line(const nlohmann::json& j) {
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

int run_tokenize(const TokenizeArgs& args) {
  if (args.has_text == !args.input.empty()) throw std::invalid_argument("tokenize: give exactly one of --input and --text");
  const models::Tokenizer tok(args.tokenizer);
  if (args.has_text) {
    models::utf8::require_valid(args.text, "--text");  // named, not "tokenizer input" (JSONL text is checked by its parser)
    print_line(tokenize_one(tok, 0, args.text));
    return 0;
  }
  datasets::for_each_jsonl(args.input, [&](const datasets::JsonRecord& r) {
    for (auto it = r.value.begin(); it != r.value.end(); ++it)
      if (it.key() != "id" && it.key() != "text") throw r.field_error(it.key(), "unknown key (a line is {\"id\", \"text\"})");
    const nlohmann::json& id = r.field("id");
    if (!id.is_string() && !id.is_number_integer())
      throw r.field_error("id", "expected a string or an integer, got " + datasets::describe_json(id));
    const std::string text = r.string_field("text");
    try {
      print_line(tokenize_one(tok, id, text));
    } catch (const std::invalid_argument& e) {
      throw r.field_error("text", e.what());
    }
    return true;
  });
  return 0;
}

const CommandRegistration tokenize_registration(
    "tokenize", "Token ids of texts (JSONL {id, text} -> {id, ids, ids_with_special_tokens, decoded})",
    [](CLI::App& app) {
      auto args = std::make_shared<TokenizeArgs>();
      app.add_option("--tokenizer", args->tokenizer,
                     "tokenizer.json, tokenizer.model, vocab.json, or a directory holding one")
          ->required();
      app.add_option("--input", args->input, "JSONL file, one {\"id\", \"text\"} per line");
      app.add_option("--text", args->text, "one text (printed with id 0)")->each([args](const std::string&) { args->has_text = true; });
      return [args] { return run_tokenize(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
