// Errors name the line and column they come from; unsupported constructs are refused at parse
// time, never rendered wrongly.
#include <gtest/gtest.h>

#include "expect_error.hpp"
#include "jinja/template.hpp"

namespace kvbench::jinja {
namespace {

TEST(JinjaErrors, UnknownTagNamesLineAndColumn) {
  const auto e = expect_error<TemplateSyntaxError>("hello\n  {% frobnicate x %}");
  EXPECT_EQ(e.where().line, 2);
  EXPECT_EQ(e.where().column, 6);
  EXPECT_NE(std::string(e.what()).find("unknown tag 'frobnicate'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("line 2, column 6"), std::string::npos) << e.what();
}

TEST(JinjaErrors, UnclosedBlockNamesWhereItWasOpened) {
  const auto e = expect_error<TemplateSyntaxError>("x\n  {% for m in messages %}\n{% if m %}{{ m }}{% endif %}");
  EXPECT_NE(std::string(e.what()).find("'for' opened at line 2, column 6 was never closed"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("'endfor'"), std::string::npos) << e.what();
  const auto nested = expect_error<TemplateSyntaxError>("{% if a %}{% for x in y %}{% endif %}");
  EXPECT_NE(std::string(nested.what()).find("unexpected 'endif'"), std::string::npos) << nested.what();
}

TEST(JinjaErrors, UnclosedTagsAndComments) {
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("ok {{ 'a' ").what()).find("never closed"), std::string::npos);
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("{# note").what()).find("comment"), std::string::npos);
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("{{ 'abc }}").what()).find("unterminated string"),
            std::string::npos);
}

TEST(JinjaErrors, UnsupportedConstructsAreRefusedByName) {
  for (const std::string tag : {"extends", "include", "import", "block", "do", "with", "autoescape"}) {
    const auto e = expect_error<TemplateSyntaxError>("a\n{% " + tag + " x %}");
    EXPECT_NE(std::string(e.what()).find("unsupported tag '" + tag + "'"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, 2);
  }
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("{% for x in y recursive %}{% endfor %}").what())
                .find("recursive"),
            std::string::npos);
  const auto filter = expect_error<TemplateSyntaxError>("{{ x | frob }}");
  EXPECT_NE(std::string(filter.what()).find("no filter named 'frob'"), std::string::npos);
  EXPECT_EQ(filter.where().column, 8);
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("{{ x is frob }}").what()).find("no test named 'frob'"),
            std::string::npos);
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>("{% break %}").what()).find("outside of a for loop"),
            std::string::npos);
}

TEST(JinjaErrors, RuntimeErrorsNameTheExpression) {
  Dict d;
  d.set(Value("d"), Value(Dict{}));
  const auto e = expect_error<TemplateRuntimeError>("line one\n  {{ d.a.b }}", Value(d));
  EXPECT_EQ(e.message(), "'dict object' has no attribute 'a'");
  EXPECT_EQ(e.where().line, 2);
}

TEST(JinjaErrors, RaiseExceptionCarriesTheTemplatesMessage) {
  const auto e = expect_error<TemplateRaised>("{% if true %}\n{{ raise_exception('Only user and assistant roles') }}{% endif %}");
  EXPECT_EQ(e.message(), "Only user and assistant roles");
  EXPECT_EQ(e.where().line, 2);
}

TEST(JinjaErrors, RunawayRecursionIsAnErrorNotACrash) {
  const auto e = expect_error<TemplateRuntimeError>("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(std::string(e.what()).find("recursion"), std::string::npos) << e.what();
  EXPECT_NE(std::string(expect_error<TemplateRuntimeError>("{{ range(200000)|length }}").what()).find("MAX_RANGE"),
            std::string::npos);
}

TEST(JinjaErrors, DeepNestingIsRefusedNotAStackOverflow) {
  const std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>(deep).what()).find("nested too deeply"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "{% if true %}";
  EXPECT_NE(std::string(expect_error<TemplateSyntaxError>(blocks).what()).find("nested too deeply"), std::string::npos);
  // Real depths are fine.
  EXPECT_EQ(Template("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}").render(Value(Dict{})), "1");
}

TEST(JinjaTemplate, GenerationTagRendersItsBody) {
  // transformers' AssistantTracker extension: {% generation %} marks assistant text, renders it unchanged.
  EXPECT_EQ(Template("a{% generation %}b{{ 1 }}{% endgeneration %}c").render(Value(Dict{})), "ab1c");
}

TEST(JinjaTemplate, StrftimeNowDefaultsToTheLocalClock) {
  const std::string year = Template("{{ strftime_now('%Y') }}").render(Value(Dict{}));
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
}

TEST(JinjaTemplate, ContextKeepsInsertionOrderForTojson) {
  // JSON input parsed in order (nlohmann::ordered_json) prints in the same order, as Python dicts.
  const auto ctx = Value::from_json(nlohmann::ordered_json::parse(R"({"t": {"z": 1, "a": [1.0, "é"]}})"));
  EXPECT_EQ(Template("{{ t|tojson }}").render(ctx), R"({"z": 1, "a": [1.0, "é"]})");
}

}  // namespace
}  // namespace kvbench::jinja
