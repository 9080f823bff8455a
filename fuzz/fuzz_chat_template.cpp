// fuzz-sources: jinja/access.cpp jinja/arguments.cpp jinja/evaluator.cpp jinja/filters.cpp jinja/filters_number.cpp jinja/filters_sequence.cpp jinja/filters_string.cpp jinja/json_dumps.cpp jinja/lexer.cpp jinja/limits.cpp jinja/operators.cpp jinja/parser.cpp jinja/parser_expressions.cpp jinja/string_methods.cpp jinja/template.cpp jinja/tests.cpp jinja/utf8.cpp jinja/value.cpp
// libFuzzer target: any bytes as a chat template, parsed and rendered with a small conversation.
// Template errors (syntax, runtime, raise_exception) are expected; anything else — a crash, an
// exception of another type, a sanitizer report — is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "jinja/template.hpp"

namespace {

const kvbench::jinja::Value& context() {
  static const kvbench::jinja::Value value = kvbench::jinja::Value::from_json(nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Hi <b>there</b> — ünïcode 😀"},
      {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello!",
       "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
      {"role": "tool", "tool_call_id": "call12345", "content": "{\"y\": 2}"},
      {"role": "user", "content": "  bye  "}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "documents": null,
    "add_generation_prompt": true,
    "bos_token": "<s>",
    "eos_token": "</s>",
    "enable_thinking": false
  })"));
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  kvbench::jinja::RenderOptions options;
  options.strftime_now = [](const std::string& format) { return "fixed:" + format; };
  // Under the sanitizers a render that spends the whole default budget takes ~20 s, past the
  // fuzzer's timeout; real templates need under 70,000 steps.
  options.max_steps = 1'000'000;
  try {
    const kvbench::jinja::Template t(source);
    t.render(context(), options);
  } catch (const kvbench::jinja::TemplateError&) {
  }
  return 0;
}
