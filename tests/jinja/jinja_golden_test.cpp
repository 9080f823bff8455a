// The interpreter against Jinja2 itself: every case in tests/fixtures/chat_templates (recorded by
// scripts/make_chat_template_goldens.py with Jinja2 configured as transformers does) and the
// shared golden renderings of the Llama-3 and Qwen3 templates must match byte for byte; where
// Jinja2 raised, we must raise too (with the same message for raise_exception and undefined values).
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "jinja/template.hpp"

namespace kvbench::jinja {
namespace {

using Json = nlohmann::ordered_json;

Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return Json::parse(in);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kFixtures = std::string(KVBENCH_TESTS_DIR) + "/fixtures/chat_templates/";

// The goldens' fixed clock: 2026-11-23 12:00:00.
RenderOptions fixed_clock() {
  RenderOptions options;
  options.strftime_now = [](const std::string& format) {
    std::tm t{};
    t.tm_year = 2026 - 1900;
    t.tm_mon = 10;
    t.tm_mday = 23;
    t.tm_hour = 12;
    t.tm_wday = 1;  // a Monday
    t.tm_yday = 326;
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &t);
    return std::string(buf, n);
  };
  return options;
}

// Compares one rendering (or failure) with Jinja2's.
void expect_same(const std::string& id, const std::string& source, const Value& context, const Json& expected) {
  SCOPED_TRACE(id);
  std::string rendered;
  std::string error, error_kind;
  try {
    rendered = Template(source).render(context, fixed_clock());
  } catch (const TemplateRaised& e) {
    error = e.message();
    error_kind = "raised";
  } catch (const TemplateSyntaxError& e) {
    error = e.message();
    error_kind = "syntax";
  } catch (const TemplateError& e) {
    error = e.message();
    error_kind = "error";
  }
  if (expected.contains("rendered")) {
    EXPECT_EQ(error, "") << "Jinja2 rendered:\n" << expected["rendered"].get<std::string>();
    EXPECT_EQ(rendered, expected["rendered"].get<std::string>());
    return;
  }
  const std::string type = expected["error_type"].get<std::string>();
  const std::string message = expected["error"].get<std::string>();
  EXPECT_NE(error_kind, "") << "Jinja2 raised " << type << ": " << message << "; we rendered:\n" << rendered;
  if (type == "TemplateSyntaxError") {
    EXPECT_EQ(error_kind, "syntax");
  } else if (error_kind == "syntax") {
    // Constructs the chat-template environment cannot run ({% extends %} needs a loader): Jinja2
    // fails at render time, we refuse them at parse time.
    EXPECT_EQ(id.rfind("syntax-", 0), 0u) << "syntax error where Jinja2 raised " << type << ": " << error;
  } else if (type == "TemplateError") {
    EXPECT_EQ(error_kind, "raised");
    EXPECT_EQ(error, message);
  } else if (type == "UndefinedError" || type == "SecurityError" || type == "TypeError" ||
             type == "ZeroDivisionError" || type == "TemplateRuntimeError" || type == "ValueError") {
    EXPECT_EQ(error_kind, "error");
    EXPECT_EQ(error, message);
  }
}

TEST(JinjaUnitCases, EveryFeatureCaseMatchesJinja2) {
  const Json cases = read_json(kFixtures + "unit_cases.json");
  ASSERT_GT(cases["cases"].size(), 100u);
  for (const auto& c : cases["cases"])
    expect_same(c["id"].get<std::string>(), c["template"].get<std::string>(), Value::from_json(c["context"]), c);
}

std::string template_source(const Json& spec) {
  const std::string ref = spec["source"].get<std::string>();
  if (ref.rfind("shared:", 0) == 0)
    return read_json(std::string(KVBENCH_SHARED_DIR) + "/" + ref.substr(7))["chat_template"].get<std::string>();
  return read_text(kFixtures + "templates/" + ref);
}

// What transformers passes: messages, tools (None unless given), documents=None,
// add_generation_prompt, the special tokens, then the extra kwargs.
Value transformers_context(const Json& c, const Json& special_tokens) {
  Json context = Json::object();
  context["messages"] = c["messages"];
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = c["add_generation_prompt"];
  for (auto it = special_tokens.begin(); it != special_tokens.end(); ++it) context[it.key()] = it.value();
  if (c.contains("kwargs"))
    for (auto it = c["kwargs"].begin(); it != c["kwargs"].end(); ++it) context[it.key()] = it.value();
  return Value::from_json(context);
}

TEST(JinjaRealTemplates, EveryConversationMatchesJinja2) {
  const Json goldens = read_json(kFixtures + "goldens.json");
  std::map<std::string, std::string> sources;
  for (auto it = goldens["templates"].begin(); it != goldens["templates"].end(); ++it)
    sources[it.key()] = template_source(it.value());
  ASSERT_GE(sources.size(), 15u);
  size_t rendered = 0;
  for (const auto& c : goldens["cases"]) {
    const std::string name = c["template"].get<std::string>();
    expect_same(c["id"].get<std::string>(), sources.at(name),
                transformers_context(c, goldens["templates"][name]["special_tokens"]), c);
    rendered += c.contains("rendered");
  }
  EXPECT_GT(rendered, 300u);
}

// The step budget (jinja/limits.hpp) stops runaway templates; real ones rendering long
// conversations must stay far below it: every template Jinja2 renders in the goldens renders 400
// messages (with tools where its goldens have them) within a twentieth of the budget.
TEST(JinjaRealTemplates, LongConversationsStayFarBelowTheStepBudget) {
  const Json goldens = read_json(kFixtures + "goldens.json");
  RenderOptions options = fixed_clock();
  options.max_steps = kMaxSteps / 20;
  std::map<std::string, const Json*> with_tools;  // one golden case per template, tools if any
  for (const auto& c : goldens["cases"]) {
    const std::string name = c["template"].get<std::string>();
    if (!c.contains("rendered")) continue;
    const bool tools = c.contains("kwargs") && c["kwargs"].contains("tools");
    if (!with_tools.count(name) || tools) with_tools[name] = &c;
  }
  ASSERT_GE(with_tools.size(), 15u);
  const std::string text = "A long message about key-value caches, with some detail to render. ";
  for (const auto& [name, golden] : with_tools) {
    SCOPED_TRACE(name);
    Json c = *golden;
    Json messages = Json::array();
    for (int i = 0; i < 400; ++i) {
      std::string content;
      for (int k = 0; k < 8; ++k) content += text;
      messages.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", content + std::to_string(i)}});
    }
    c["messages"] = messages;
    c["add_generation_prompt"] = true;
    const Template tmpl(template_source(goldens["templates"][name]));
    const std::string out = tmpl.render(transformers_context(c, goldens["templates"][name]["special_tokens"]), options);
    EXPECT_GT(out.size(), 400 * 8 * text.size());
  }
}

TEST(JinjaRealTemplates, SharedGoldenRenderingsMatchByteForByte) {
  for (const std::string model : {"llama3", "qwen3"}) {
    const std::string dir = std::string(KVBENCH_SHARED_DIR) + "/";
    const Json config = read_json(dir + "models/" + model + "-tokenizer/tokenizer_config.json");
    const Json golden = read_json(dir + "golden/tokenizers/" + model + "-chat.json");
    Json special = Json::object();
    for (const char* key : {"bos_token", "eos_token", "pad_token", "unk_token"})
      if (config.contains(key) && config[key].is_string()) special[key] = config[key];
    const Template tmpl(config["chat_template"].get<std::string>());
    ASSERT_FALSE(golden["cases"].empty());
    for (const auto& c : golden["cases"]) {
      SCOPED_TRACE(model + "/" + c["id"].get<std::string>());
      EXPECT_EQ(tmpl.render(transformers_context(c, special)), c["rendered"].get<std::string>());
    }
  }
}

}  // namespace
}  // namespace kvbench::jinja
