// `kvbench chat-template`: outputs per line, raised template errors as {"id","error"}, and bad
// input as one error naming file:line and the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "cli/run_binary.hpp"
#include "harness/temp_dir.hpp"

namespace kvbench::testing {
namespace {

// A tokenizer directory holding only tokenizer_config.json with the given template.
std::string config_dir(const TempDir& dir, const std::string& chat_template) {
  std::ofstream(dir / "tokenizer_config.json")
      << nlohmann::json{{"bos_token", {{"content", "<s>"}, {"lstrip", false}}}, {"eos_token", "</s>"},
                        {"chat_template", chat_template}}
             .dump();
  return dir.path();
}

// Mistral-7B-Instruct-v0.2's template (alternation enforced with raise_exception).
const char* kMistral =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}";

CommandResult run_with_input(const TempDir& dir, const std::string& tokenizer, const std::string& jsonl) {
  std::ofstream(dir / "in.jsonl") << jsonl;
  return run_kvbench("chat-template --tokenizer " + tokenizer + " --input " + (dir / "in.jsonl") + " 2>&1");
}

TEST(ChatTemplateCommand, RendersAndReportsRaisedErrorsPerLine) {
  TempDir dir;
  const std::string tok = config_dir(dir, kMistral);
  CommandResult r = run_with_input(
      dir, tok,
      R"({"id": "ok", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}], "add_generation_prompt": false})"
      "\n\n"
      R"({"id": "bad", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "add_generation_prompt": true, "kwargs": {"tools": [{"name": "é"}]}})"
      "\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line), (nlohmann::json{{"id", "ok"}, {"rendered", "<s>[INST] Hi [/INST]Yo</s>"}}));
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line),
            (nlohmann::json{{"id", "bad"}, {"error", "Conversation roles must alternate user/assistant/user/assistant/..."}}));
}

TEST(ChatTemplateCommand, BadInputNamesFileLineAndField) {
  TempDir dir;
  const std::string tok = config_dir(dir, kMistral);
  const std::string ok = R"({"id": 1, "messages": [], "add_generation_prompt": true})";
  struct Case {
    std::string line, expected;
  };
  const std::vector<Case> cases = {
      {R"({"id": 1, "messages": [], "add_generation_prompt": "yes"})", ":2: field 'add_generation_prompt': expected true or false"},
      {R"({"id": 1, "messages": [{"content": "x"}], "add_generation_prompt": true})", ":2: field 'messages[0].role'"},
      {R"({"id": 1, "messages": [{"role": "user"}], "add_generation_prompt": true})", ":2: field 'messages[0].content': missing"},
      {R"({"id": 1, "messages": {}, "add_generation_prompt": true})", ":2: field 'messages': expected a list"},
      {R"({"messages": [], "add_generation_prompt": true})", ":2: field 'id': missing"},
      {R"({"id": 1, "messages": [], "add_generation_prompt": true, "extra": 1})", ":2: field 'extra': unknown"},
      {R"({"id": 1, "messages": [], "add_generation_prompt": true, "kwargs": []})", ":2: field 'kwargs': expected an object"},
      {R"({"id": 1, "messages": [)", ":2: invalid JSON"},
  };
  for (const auto& c : cases) {
    CommandResult r = run_with_input(dir, tok, ok + "\n" + c.line + "\n");
    EXPECT_NE(r.exit_code, 0) << c.line;
    EXPECT_NE(r.output.find((dir / "in.jsonl") + c.expected), std::string::npos) << c.line << "\n" << r.output;
  }
}

TEST(ChatTemplateCommand, TemplateProblemsAreClearErrors) {
  TempDir dir;
  CommandResult unclosed = run_with_input(dir, config_dir(dir, "{% for m in messages %}\n{{ m.content }}"),
                                          R"({"id": 1, "messages": [], "add_generation_prompt": true})");
  EXPECT_NE(unclosed.exit_code, 0);
  EXPECT_NE(unclosed.output.find("tokenizer_config.json: chat_template: template syntax error at line 2"),
            std::string::npos)
      << unclosed.output;
  EXPECT_NE(unclosed.output.find("'for' opened at line 1, column 4 was never closed"), std::string::npos);

  TempDir empty;
  std::ofstream(empty / "tokenizer_config.json") << R"({"eos_token": "</s>"})";
  CommandResult none = run_with_input(empty, empty.path(), R"({"id": 1, "messages": [], "add_generation_prompt": true})");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.output.find("the model has no chat template"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace kvbench::testing
