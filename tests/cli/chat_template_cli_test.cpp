// `kvbench chat-template`: outputs per line, raised template errors as {"id","error"}, and bad
// input as one error naming file:line and the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <vector>

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

// Issue #31, U3: a conversation past a limit of the interpreter is that line's {"id", "error"},
// and the lines after it still render, with the models' own templates (Llama-3, Qwen3). Content
// nested 600 levels deep exceeded the 512-level bound while becoming template values, and the
// error stopped the whole file.
TEST(ChatTemplateCommand, AConversationPastALimitIsItsOwnErrorLine) {
  std::string deep = "\"x\"";
  for (int i = 0; i < 600; ++i) deep = "[" + deep + "]";
  const std::string input =
      R"({"id": "first", "messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true})" "\n"
      R"({"id": "deep", "messages": [{"role": "user", "content": )" + deep + R"(}], "add_generation_prompt": true})" "\n"
      R"({"id": "last", "messages": [{"role": "user", "content": "Bye"}], "add_generation_prompt": true})" "\n";
  for (const char* model : {"llama3-tokenizer", "qwen3-tokenizer"}) {
    TempDir dir;
    CommandResult r = run_with_input(dir, std::string(KVBENCH_SHARED_DIR) + "/models/" + model, input);
    ASSERT_EQ(r.exit_code, 0) << model << "\n" << r.output;
    std::istringstream lines(r.output);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(out.size(), 3u) << r.output;
    EXPECT_EQ(out[0]["id"], "first");
    EXPECT_NE(out[0]["rendered"].get<std::string>().find("Hi"), std::string::npos);
    EXPECT_EQ(out[1], (nlohmann::json{{"id", "deep"}, {"error", "value nested too deeply (limit: 512 levels)"}}));
    EXPECT_EQ(out[2]["id"], "last");
    EXPECT_NE(out[2]["rendered"].get<std::string>().find("Bye"), std::string::npos);
  }
  // A limit the template itself reaches from a conversation's values (a width from the kwargs).
  TempDir dir;
  CommandResult wide = run_with_input(
      dir, config_dir(dir, "{{ 'a'|center(width) }}"),
      R"({"id": 1, "messages": [], "add_generation_prompt": true, "kwargs": {"width": 1099511627776}})" "\n"
      R"({"id": 2, "messages": [], "add_generation_prompt": true, "kwargs": {"width": 3}})" "\n");
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  std::istringstream lines(wide.output);
  std::string line;
  std::getline(lines, line);
  const auto first = nlohmann::json::parse(line);
  EXPECT_EQ(first["id"], 1);
  EXPECT_NE(first["error"].get<std::string>().find("exceeds the limit"), std::string::npos) << line;
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line), (nlohmann::json{{"id", 2}, {"rendered", " a "}}));
}

}  // namespace
}  // namespace kvbench::testing
