// One declaration per parameter: validation, defaults, listings and the registry template.
#include <gtest/gtest.h>

#include "base/param.hpp"
#include "base/param_listing.hpp"
#include "base/registry.hpp"

namespace kvbench::params {
namespace {

const Params kDeclared = {Param::integer("window", 32, "observation window", 1),
                          Param::choice("pooling", "max", {"max", "avg"}, "pooling"),
                          Param::number("ratio", 0.5, "a share", 0, 1),
                          Param::integer("auto_size", nullptr, "null = auto").or_null(),
                          Param::text("computed", nullptr, "default computed by the task"),
                          Param::flag("flag", false, "a switch")};
const Owner kOwner{"policy 'p'", "policy_params"};

std::string error_of(const nlohmann::json& given) {
  try {
    check(kOwner, kDeclared, given);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Params, UnknownKeysAndBadValuesAreOneClearError) {
  EXPECT_EQ(error_of({{"windoe", 4}}),
            "policy_params: field 'windoe' is not a parameter of policy 'p' (valid: auto_size, computed, flag, "
            "pooling, ratio, window)");
  EXPECT_EQ(error_of({{"window", 0}}), "policy_params: field 'window' of policy 'p' must be an integer >= 1, got 0");
  EXPECT_EQ(error_of({{"window", 2.5}}),
            "policy_params: field 'window' of policy 'p' must be an integer >= 1, got 2.5");
  EXPECT_EQ(error_of({{"pooling", "median"}}),
            "policy_params: field 'pooling' of policy 'p' must be one of max, avg, got \"median\"");
  EXPECT_EQ(error_of({{"ratio", 1.5}}),
            "policy_params: field 'ratio' of policy 'p' must be a number >= 0 and <= 1, got 1.5");
  EXPECT_EQ(error_of({{"flag", 1}}), "policy_params: field 'flag' of policy 'p' must be true or false, got 1");
  EXPECT_EQ(error_of({{"window", nullptr}}),
            "policy_params: field 'window' of policy 'p' must be an integer >= 1, got null");
  EXPECT_EQ(error_of({{"auto_size", nullptr}}), "(no error)");
  EXPECT_EQ(error_of({{"auto_size", 3}}), "(no error)");
  EXPECT_EQ(error_of({{"auto_size", "x"}}),
            "policy_params: field 'auto_size' of policy 'p' must be an integer or null, got \"x\"");
  EXPECT_EQ(error_of(nlohmann::json::array()), "job spec: field 'policy_params' must be an object");
}

TEST(Params, DefaultsFillWhatWasNotGivenExceptComputedOnes) {
  const nlohmann::json resolved = with_defaults(kOwner, kDeclared, {{"window", 8}});
  EXPECT_EQ(
      resolved,
      nlohmann::json({{"window", 8}, {"pooling", "max"}, {"ratio", 0.5}, {"auto_size", nullptr}, {"flag", false}}));
  EXPECT_FALSE(resolved.contains("computed"));  // the task computes it, so it is not stated as a value
}

TEST(Params, ADefaultOutsideItsOwnDeclarationIsAProgrammingError) {
  EXPECT_THROW(Param::integer("window", 0, "", 1), std::logic_error);
  EXPECT_THROW(Param::choice("pooling", "median", {"max", "avg"}, ""), std::logic_error);
  EXPECT_THROW(check_unique_names("policy 'p'", {Param::flag("a", true, ""), Param::flag("a", false, "")}),
               std::logic_error);
  EXPECT_THROW(find(kDeclared, "nope"), std::logic_error);
}

TEST(Params, ListingsCarryTypeDefaultRangeChoicesAndHelp) {
  const nlohmann::json d = describe(kDeclared);
  ASSERT_EQ(d.size(), kDeclared.size());
  EXPECT_EQ(
      d[0],
      nlohmann::json(
          {{"name", "window"}, {"type", "integer"}, {"default", 32}, {"help", "observation window"}, {"min", 1.0}}));
  EXPECT_EQ(d[1]["choices"], nlohmann::json({"max", "avg"}));
  EXPECT_EQ(d[3]["nullable"], true);
  const std::string table = markdown_table(kDeclared);
  EXPECT_NE(table.find("| `window` | integer, >= 1 | `32` | observation window |"), std::string::npos) << table;
  EXPECT_NE(table.find("| `pooling` | string, max \\| avg | `\"max\"` | pooling |"), std::string::npos) << table;
  EXPECT_NE(table.find("| `computed` | string | computed | default computed by the task |"), std::string::npos)
      << table;
  EXPECT_NE(text_listing(kDeclared, "  ").find("  ratio (number, default 0.5, 0..1): a share\n"), std::string::npos);
}

struct Named {
  std::string name;
  int value = 0;
};

TEST(Registry, KeepsNamesSortedRefusesRepeatsAndWordsUnknownNamesOnce) {
  base::Registry<Named> registry("widget");
  registry.add({"b", 2});
  registry.add({"a", 1});
  EXPECT_EQ(registry.all().front().name, "a");
  EXPECT_EQ(registry.at("b").value, 2);
  EXPECT_EQ(registry.find("c"), nullptr);
  EXPECT_THROW(registry.add({"a", 3}), std::logic_error);
  try {
    registry.at("c");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown widget 'c' (known: a, b)");
  }
}

}  // namespace
}  // namespace kvbench::params
