#pragma once
// MATH answers as lm-evaluation-harness grades them (lm_eval/tasks/hendrycks_math/utils.py, from
// Hendrycks et al.'s MATH code): the last \boxed{...} / \fbox{...} by balanced braces (or the
// "\boxed " form), its content, and is_equiv: both answers normalised by strip_string and compared
// as text, falling back to comparing the raw answers when strip_string raises (as Python's
// try/except does: an unbalanced \frac, "\text{ " twice, a non-integer side of "a/b").
#include <optional>
#include <stdexcept>
#include <string>

namespace kvbench::metrics {

// An exception the reference's Python would raise (AssertionError, IndexError, ValueError).
struct PythonRaised : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// last_boxed_only_string: "\boxed{...}" with its braces, the text after the last "\boxed "
// up to a '$', or nullopt (Python None) when there is no box or its brace never closes.
std::optional<std::string> last_boxed_only_string(const std::string& text);
// remove_boxed: the content of "\boxed{...}" or "\boxed ..."; throws PythonRaised (the
// reference's AssertionError) on anything else, e.g. an "\fbox{...}".
std::string remove_boxed(const std::string& boxed);
// strip_string: the normalisation (\dfrac -> \frac, units and \left/\right removed, 0.5 ->
// \frac{1}{2}, "k = " dropped, \sqrt3 -> \sqrt{3}, a/b -> \frac{a}{b}, ...). Throws PythonRaised
// where Python raises.
std::string hendrycks_strip_string(const std::string& text);
// is_equiv(str1, str2): None is equivalent only to None.
bool hendrycks_is_equiv(const std::optional<std::string>& a, const std::optional<std::string>& b);

}  // namespace kvbench::metrics
