// `kvbench chat-template --tokenizer DIR --input F.jsonl`: renders the model's own chat template
// (tokenizer_config.json) for each line {"id", "messages", "add_generation_prompt", "kwargs"?}, as
// transformers' apply_chat_template(messages, add_generation_prompt=..., **kwargs, tokenize=False)
// would. Prints one JSON line per input: {"id", "rendered"}, or {"id", "error"} when the template
// raises (raise_exception, or an error Jinja2 would raise too) or the conversation reaches a limit
// of the interpreter; the lines after it still render. Bad input lines are errors naming
// file:line and the field.
#include <fstream>
#include <iostream>

#include "datasets/data_error.hpp"
#include "harness/command.hpp"
#include "jinja/error.hpp"
#include "jinja/value.hpp"
#include "models/model_chat_template.hpp"

namespace kvbench::harness {
namespace {

using Json = nlohmann::ordered_json;

struct ChatRequest {
  Json id;
  Json messages;
  bool add_generation_prompt = false;
  Json kwargs = Json::object();
};

std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean " + v.dump();
    case Json::value_t::string: return "string " + v.dump().substr(0, 60);
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "number " + v.dump();
  }
}

ChatRequest parse_request(const std::string& file, int64_t line_no, const std::string& text) {
  auto fail = [&](const std::string& what) { return datasets::DataError(file, line_no, what); };
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw fail(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw fail("expected a JSON object, got " + describe(j));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "id" && it.key() != "messages" && it.key() != "add_generation_prompt" && it.key() != "kwargs")
      throw fail("field '" + it.key() + "': unknown (expected id, messages, add_generation_prompt, kwargs)");
  ChatRequest r;
  if (!j.contains("id")) throw fail("field 'id': missing");
  if (!j["id"].is_string() && !j["id"].is_number_integer())
    throw fail("field 'id': expected a string or an integer, got " + describe(j["id"]));
  r.id = j["id"];
  if (!j.contains("messages")) throw fail("field 'messages': missing");
  if (!j["messages"].is_array()) throw fail("field 'messages': expected a list, got " + describe(j["messages"]));
  for (size_t i = 0; i < j["messages"].size(); ++i) {
    const Json& m = j["messages"][i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw fail("field '" + field + "': expected an object, got " + describe(m));
    if (!m.contains("role") || !m["role"].is_string())
      throw fail("field '" + field + ".role': expected a string, got " + (m.contains("role") ? describe(m["role"]) : "nothing"));
    if (!m.contains("content")) throw fail("field '" + field + ".content': missing");
  }
  r.messages = j["messages"];
  if (!j.contains("add_generation_prompt")) throw fail("field 'add_generation_prompt': missing");
  if (!j["add_generation_prompt"].is_boolean())
    throw fail("field 'add_generation_prompt': expected true or false, got " + describe(j["add_generation_prompt"]));
  r.add_generation_prompt = j["add_generation_prompt"].get<bool>();
  if (j.contains("kwargs")) {
    if (!j["kwargs"].is_object()) throw fail("field 'kwargs': expected an object, got " + describe(j["kwargs"]));
    for (const char* reserved : {"messages", "add_generation_prompt"})
      if (j["kwargs"].contains(reserved))
        throw fail(std::string("field 'kwargs.") + reserved + "': given as its own field, not a kwarg");
    r.kwargs = j["kwargs"];
  }
  return r;
}

int run_chat_template(const std::string& tokenizer, const std::string& input) {
  const auto tmpl = models::ModelChatTemplate::for_tokenizer(tokenizer);
  std::ifstream in(input);
  if (!in) throw std::runtime_error(input + ": cannot open");
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const ChatRequest r = parse_request(input, line_no, line);
    Json out = Json::object();
    out["id"] = r.id;
    // A conversation the template cannot render is that line's error, and the others still run:
    // the template raised, or a limit of the interpreter was hit, while rendering (TemplateError)
    // or while the conversation became its values (OperationError: nested past 512 levels).
    try {
      out["rendered"] = tmpl->render(r.messages, r.add_generation_prompt, r.kwargs);
    } catch (const jinja::TemplateError& e) {
      out["error"] = e.message();
    } catch (const jinja::OperationError& e) {
      out["error"] = e.what();
    }
    std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  }
  return 0;
}

const CommandRegistration chat_template_registration(
    "chat-template", "Render the model's own chat template (tokenizer_config.json) for JSONL conversations",
    [](CLI::App& app) {
      auto tokenizer = std::make_shared<std::string>();
      auto input = std::make_shared<std::string>();
      app.add_option("--tokenizer", *tokenizer, "directory (or tokenizer file) with tokenizer_config.json")->required();
      app.add_option("--input", *input, "JSONL: {\"id\", \"messages\", \"add_generation_prompt\", \"kwargs\"?} per line")
          ->required();
      return [tokenizer, input] { return run_chat_template(*tokenizer, *input); };
    });

}  // namespace
}  // namespace kvbench::harness
