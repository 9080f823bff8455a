// The CPython string semantics the scorers depend on.
#include <gtest/gtest.h>

#include "metrics/unicode.hpp"

using namespace kvbench::metrics;

TEST(Unicode, PythonLower) {
  EXPECT_EQ(python_lower("ABC xyZ"), "abc xyz");
  EXPECT_EQ(python_lower("İ"), "i\u0307");        // the one multi-character mapping
  EXPECT_EQ(python_lower("\u212A"), "k");          // Kelvin sign
  EXPECT_EQ(python_lower("ẞ"), "ß");
  EXPECT_EQ(python_lower("ΣΑΣ"), "σας");           // Final_Sigma
  EXPECT_EQ(python_lower("Σ"), "σ");               // no cased letter before
  EXPECT_EQ(python_lower("ΑΣ'Α"), "ασ'α");         // apostrophe is case-ignorable: not final
  EXPECT_EQ(python_lower("ΑΣ."), "ας.");
  EXPECT_EQ(python_lower("ǅ"), "ǆ");
}

TEST(Unicode, SplitAndClasses) {
  EXPECT_EQ(python_split_ws(" a\u00a0b\u3000c\x1f d\u2028"),
            (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(python_split_ws("a\u200bb"), (std::vector<std::string>{"a\u200bb"}));  // ZWSP is not space
  EXPECT_TRUE(python_split_ws(" \t\n ").empty());
  EXPECT_EQ(python_collapse_ws("  x   y "), "x y");
  EXPECT_TRUE(python_re_digit(U'7'));
  EXPECT_TRUE(python_re_digit(0xFF11));   // full-width 1
  EXPECT_TRUE(python_re_digit(0x0663));   // Arabic-Indic 3
  EXPECT_FALSE(python_re_digit(0x00B2));  // superscript 2 is No, not Nd
  EXPECT_TRUE(python_re_word(U'_'));
  EXPECT_TRUE(python_re_word(0x00E9));    // é
  EXPECT_FALSE(python_re_word(0x0301));   // combining acute (Mn) is not \w
  EXPECT_EQ(utf8_encode(utf8_decode("héllo 😀")), "héllo 😀");
  EXPECT_EQ(utf8_decode("\xff").size(), 1u);  // invalid byte -> U+FFFD
}
