// Hostile templates: chat templates come from downloaded model directories, so each of these
// must end in a TemplateSyntaxError or TemplateRuntimeError naming the limit it hit — never a
// crash (integer traps, stack overflow), an exhausted memory or a hang. Where Python gives an
// answer that fits in our values, we give the same one.
#include <gtest/gtest.h>

#include <string>

#include "expect_error.hpp"
#include "jinja/template.hpp"

namespace kvbench::jinja {
namespace {

std::string render(const std::string& source) { return Template(source).render(Value(Dict{})); }

// The message of the runtime error `source` must raise, which must contain `part`.
std::string runtime_error(const std::string& source, const std::string& part) {
  const std::string message = expect_error<TemplateRuntimeError>(source).message();
  EXPECT_NE(message.find(part), std::string::npos) << "for: " << source.substr(0, 120) << "\ngot: " << message;
  return message;
}

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kMin = "(-9223372036854775807 - 1)";  // INT64_MIN, which has no literal
const std::string kOverflow = "integer overflow (values beyond 64 bits are not supported)";
const std::string kStringLimit = "string exceeds the limit of 67108864 bytes (64 MiB)";
const std::string kListLimit = "list exceeds the limit of 1000000 items";
const std::string kStepLimit = "template exceeded the limit of 10000000 steps per render";

// ---- C1: integer traps ----

TEST(JinjaLimits, IntegerMinDividedByMinusOneIsAnOverflowNotATrap) {
  EXPECT_EQ(runtime_error("{{ " + kMin + " // -1 }}", kOverflow), kOverflow);
  EXPECT_EQ(render("{{ " + kMin + " % -1 }}"), "0");  // Python: 0, which fits
  EXPECT_EQ(render("{{ " + kMin + " is divisibleby(-1) }}"), "True");
  EXPECT_EQ(render("{{ -7 // 2 }} {{ -7 % 2 }} {{ 7 // -2 }} {{ 7 % -2 }} {{ " + kMin + " // 2 }}"),
            "-4 1 -4 -1 -4611686018427387904");
}

TEST(JinjaLimits, NegatingIntegerMinIsAnOverflow) {
  runtime_error("{{ -" + kMin + " }}", kOverflow);
  runtime_error("{{ " + kMin + "|abs }}", kOverflow);  // W1: printed -9223372036854775808
  EXPECT_EQ(render("{{ -(-9223372036854775807) }} {{ (-9223372036854775807)|abs }}"),
            "9223372036854775807 9223372036854775807");
}

// ---- C2: stack overflows ----

TEST(JinjaLimits, LongNotChainIsASyntaxError) {
  const auto e = expect_error<TemplateSyntaxError>("{{ " + repeated("not ", 10000) + "1 }}");
  EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << e.what();
  EXPECT_EQ(render("{{ " + repeated("not ", 50) + "1 }}"), "True");
}

TEST(JinjaLimits, LongPostfixAndOperatorChainsAreSyntaxErrors) {
  // Each link makes the tree, and so the evaluator's recursion, one level deeper.
  for (const std::string& chain :
       {"x" + repeated("|trim", 10000), "x" + repeated(".a", 10000), "x" + repeated("[0]", 10000),
        "x" + repeated("()", 10000), "x" + repeated(" is defined", 10000), "1" + repeated(" + 1", 10000),
        "'a'" + repeated(" ~ 'a'", 10000), "1" + repeated(" and 1", 10000), "2" + repeated(" ** 1", 10000),
        "1" + repeated(" if 1", 10000)}) {
    const auto e = expect_error<TemplateSyntaxError>("{{ " + chain + " }}");
    EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << chain.substr(0, 30) << ": " << e.what();
  }
  // Real lengths are fine.
  EXPECT_EQ(render("{{ ' a '" + repeated("|trim", 100) + " }}"), "a");
  EXPECT_EQ(render("{{ 0" + repeated(" + 1", 100) + " }}"), "100");
}

TEST(JinjaLimits, MacroRecursionWithDeepExpressionsIsBounded) {
  // 200 macro levels (the macro limit) of 120 nested list expressions each would recurse 24,000
  // levels deep in the evaluator.
  const std::string deep = repeated("[", 120) + "f(n + 1)" + repeated("]", 120);
  runtime_error("{% macro f(n) %}{{ " + deep + " }}{% endmacro %}{{ f(0) }}", "maximum recursion depth exceeded");
}

TEST(JinjaLimits, SelfContainingNamespaceCannotBePrinted) {
  // Python prints `<Namespace {'a': <Namespace {...}>}>`; we refuse (DESIGN.md, known differences).
  const std::string ns = "{% set ns = namespace(a=1) %}{% set ns.a = ns %}";
  runtime_error(ns + "{{ ns }}", "value nested too deeply to print (limit: 512 levels)");
  runtime_error(ns + "{{ [ns]|string }}", "value nested too deeply to print");
  EXPECT_EQ(render(ns + "{{ ns.a.a.a is sameas(ns) }} {{ [ns] == [ns] }}"), "True True");
}

TEST(JinjaLimits, DeeplyNestedListIsRefusedWhenBuilt) {
  runtime_error(
      "{% set ns = namespace(x=[]) %}{% for i in range(30000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
      "value nested too deeply (limit: 512 levels)");
  // Dicts and bound methods (which hold their list) nest too.
  runtime_error("{% set ns = namespace(x=1) %}{% for i in range(30000) %}{% set ns.x = {'k': ns.x} %}{% endfor %}",
                "value nested too deeply");
  runtime_error("{% set ns = namespace(x=[]) %}{% for i in range(30000) %}{% set ns.x = [ns.x].copy %}{% endfor %}",
                "value nested too deeply");
  EXPECT_EQ(render("{% set ns = namespace(x=[]) %}{% for i in range(100) %}{% set ns.x = [ns.x] %}{% endfor %}"
                   "{{ ns.x|tojson|length }}"),
            "202");
}

TEST(JinjaLimits, LongNamespaceChainIsFreedWithoutRecursion) {
  // Each namespace links to the next, so freeing the first would recurse 100,000 deep.
  const std::string chain =
      "{% set root = namespace(next=none) %}{% set ns = namespace(tail=root) %}"
      "{% for i in range(100000) %}{% set n = namespace(next=none) %}{% set t = ns.tail %}{% set t.next = n %}"
      "{% set ns.tail = n %}{% endfor %}";
  EXPECT_EQ(render(chain + "done"), "done");
  runtime_error(chain + "{{ root }}", "value nested too deeply to print");
}

// ---- S5: memory bombs ----

TEST(JinjaLimits, StringDoublingStopsAtTheStringLimit) {
  runtime_error(
      "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
      kStringLimit);
  runtime_error("{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                kStringLimit);
  runtime_error("{% set ns = namespace(l=[0]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
                kListLimit);
}

TEST(JinjaLimits, RepetitionIsCheckedBeforeAllocating) {
  runtime_error("{{ 'a' * 10**10 }}", kStringLimit);
  runtime_error("{{ 10**10 * 'ab' }}", kStringLimit);
  runtime_error("{{ [1] * 10**10 }}", kListLimit);
  runtime_error("{{ ([1, 2] * 600000)|length }}", kListLimit);
  EXPECT_EQ(render("{{ 'ab' * 3 }} {{ [1] * 2 }} {{ 'a' * -1 }} {{ '' * 10**18 }}"), "ababab [1, 1]  ");
}

TEST(JinjaLimits, FilterSizesAreCheckedBeforeAllocating) {
  runtime_error("{{ 'x'|center(2**40) }}", kStringLimit);
  runtime_error("{{ 'a'|indent(2**40) }}", kStringLimit);
  runtime_error("{{ [1]|tojson(indent=10**9) }}", kStringLimit);
  runtime_error("{{ [[1]]|tojson(indent=2**62) }}", kStringLimit);
  runtime_error("{{ [1, 2]|batch(10**10, 0)|list }}", kListLimit);
  // The indent only appears between items, so Python prints a lone string as usual.
  EXPECT_EQ(render("{{ 'a\\na'|tojson(indent=10**9) }}"), "\"a\\na\"");
  EXPECT_EQ(render("{{ [1, 2, 3]|batch(2, 0)|list }}"), "[[1, 2], [3, 0]]");
}

TEST(JinjaLimits, StringAndListGrowthIsChecked) {
  const std::string big = "{% set s = 'a' * 10000000 %}";  // 10 MB: allowed, but not 7 times over
  for (const std::string grow :
       {"s|replace('a' * 1000, 'a' * 7000)|length", "s.replace('a' * 1000, 'a' * 8000)|length", "([s] * 7)|join|length",
        "s.join([s] * 7)|length", "([s] * 7)|string|length", "([s] * 7)|tojson|length",
        "('%s' * 7)|format(s, s, s, s, s, s, s)|length", "('{}' * 7).format(s, s, s, s, s, s, s)|length",
        "('\\n' * 7)|indent(s, blank=true)|length", "([s] * 7)|sum(start='')|length"}) {
    const std::string message = expect_error<TemplateRuntimeError>(big + "{{ " + grow + " }}").message();
    EXPECT_NE(message.find("exceeds the limit"), std::string::npos) << grow << ": " << message;
  }
  runtime_error("{{ ('\\n' * 2000000).splitlines()|length }}", kListLimit);
  runtime_error("{{ (',' * 2000000).split(',')|length }}", kListLimit);
  runtime_error("{{ (' a' * 2000000).split()|length }}", kListLimit);
  runtime_error("{{ ('a' * 2000000)|list|length }}", kListLimit);
}

TEST(JinjaLimits, RenderedOutputIsBounded) {
  runtime_error("{% set s = 'a' * 1000000 %}{% for i in range(100000) %}{{ s }}{% endfor %}",
                "rendered output exceeds the limit of 67108864 bytes (64 MiB)");
  runtime_error(
      "{% set s = 'a' * 1000000 %}{% macro m() %}{% for i in range(100) %}{{ s }}{% endfor %}{% endmacro %}"
      "{{ m() }}",
      "rendered output exceeds the limit");
}

// ---- H4: unbounded work ----

TEST(JinjaLimits, ExponentialMacroRecursionRunsOutOfSteps) {
  const auto e = expect_error<TemplateRuntimeError>(
      "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}\n{{ f(40) }}");
  EXPECT_NE(e.message().find(kStepLimit), std::string::npos) << e.what();
  EXPECT_GE(e.where().line, 1);
}

TEST(JinjaLimits, NestedLoopsRunOutOfSteps) {
  runtime_error("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", kStepLimit);
  runtime_error("{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}", kStepLimit);
}

TEST(JinjaLimits, WorkOnBigDataIsChargedByItsSize) {
  // Few steps each, but every one scans a 100,000-item list or a 10 MB string.
  runtime_error("{% set l = range(100000)|list %}{% for i in range(100000) %}{% if -1 in l %}{% endif %}{% endfor %}",
                kStepLimit);
  runtime_error("{% set s = 'a' * 10000000 %}{% for i in range(100000) %}{% if 'b' in s %}{% endif %}{% endfor %}",
                kStepLimit);
  runtime_error("{% set s = 'a' * 10000000 %}{% for i in range(100000) %}{{ s[0] }}{% endfor %}", kStepLimit);
  runtime_error("{{ (range(100000)|list * 10)|unique|list|length }}", kStepLimit);
}

TEST(JinjaLimits, TheStepBudgetIsARenderOption) {
  RenderOptions options;
  options.max_steps = 1000;
  const std::string loop = "{% for i in range(300) %}{{ i }}{% endfor %}";
  const auto e = expect_error<TemplateRuntimeError>(loop, Value(Dict{}), options);
  EXPECT_NE(e.message().find("limit of 1000 steps"), std::string::npos) << e.what();
  EXPECT_EQ(Template(loop).render(Value(Dict{})).size(), 790u);
}

// ---- W1: differences from Jinja2 ----

TEST(JinjaLimits, IntegersBeyond64BitsAreAnErrorNotAWrongNumber) {
  runtime_error("{{ '99999999999999999999999'|int }}", kOverflow);
  runtime_error("{{ '-99999999999999999999999'|int }}", kOverflow);
  runtime_error("{{ 1e30|int }}", kOverflow);
  runtime_error("{{ '1e30'|int }}", kOverflow);
  runtime_error("{{ '%d'|format(1e30) }}", kOverflow);
  runtime_error("{{ '1e999'|int }}", "cannot convert float infinity to integer");  // Python: OverflowError
  EXPECT_EQ(render("{{ '9223372036854775807'|int }} {{ ' 42 '|int }} {{ '4.9'|int }} {{ 'x'|int(7) }} {{ 'nan'|int }}"),
            "9223372036854775807 42 4 7 0");
}

TEST(JinjaLimits, FloatParsingAndPowersFollowPython) {
  EXPECT_EQ(render("{{ '1e999'|float }} {{ '-1e999'|float }} {{ '1e-999'|float }} {{ 'x'|float }}"),
            "inf -inf 0.0 0.0");
  for (const std::string power : {"0 ** -1", "0.0 ** -1", "0 ** -0.5"})
    EXPECT_EQ(expect_error<TemplateRuntimeError>("{{ " + power + " }}").message(),
              "0.0 cannot be raised to a negative power");
  runtime_error("{{ 10.0 ** 400 }}", "(34, 'Numerical result out of range')");
  EXPECT_EQ(render("{{ 2 ** -1 }} {{ 0 ** 0 }} {{ 0.0 ** 2 }} {{ 2 ** 62 }}"), "0.5 1 0.0 4611686018427387904");
}

TEST(JinjaLimits, WrongArgumentTypesAreTypeErrors) {
  EXPECT_EQ(expect_error<TemplateRuntimeError>("{{ 'x'|center('x') }}").message(),
            "'str' object cannot be interpreted as an integer");
  EXPECT_EQ(expect_error<TemplateRuntimeError>("{{ 'x'|center(5.0) }}").message(),
            "'float' object cannot be interpreted as an integer");
  EXPECT_EQ(expect_error<TemplateRuntimeError>("{{ strftime_now(5) }}").message(),
            "strftime() argument 1 must be str, not int");
  EXPECT_EQ(render("{{ 'x'|center(5) }}|{{ 'ab'|center(True) }}"), "  x  |ab");
}

}  // namespace
}  // namespace kvbench::jinja
