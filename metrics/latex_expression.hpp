#pragma once
// The symbolic half of Qwen2.5-Math's math_equal (grader.py symbolic_equal, as R-KV runs it):
// both answers read as sympy's parse_latex reads LaTeX (sympy/parsing/latex/LaTeX.g4: numbers with
// thousands commas, single letters and \commands as symbols, \infty, implicit products, \frac with
// digit shorthands, \sqrt[n]{}, ^, _, !, |..|, \lfloor/\lceil, \binom, \sin..\artanh, \log/\ln/\lg,
// f(x) as an undefined function, relations), then equal when sympy's chain would say so:
// the same value at every sample point (sympy: structural equality, a.equals(b), simplify(a-b)==0),
// or, without free symbols, float values within a relative 1e-4 (sympy: numeric_equal(N(a), N(b))).
//
// What sympy would do that this does not (docs/tasks-reasoning.md): parse_expr and latex2sympy,
// the two parsers symbolic_equal tries after parse_latex fails (Python syntax such as "x**2",
// Unicode identifiers, latex2sympy's sets and matrices: those answers compare as text here);
// integrals, sums, limits, derivatives, \overline, bra-kets (outside the subset: not equal
// unless the texts are); where sympy's simplify cannot prove an identity that holds at every
// sample point, this says equal.
// Reading is linear in the text (each span read once); more than 1,000 tokens, or nesting past
// about 100 levels, is not read (as sympy's converter stops at Python's recursion limit).
#include <string>

namespace kvbench::metrics {

enum class SymbolicVerdict { kEqual, kNotEqual, kOutsideSubset };

// grader.symbolic_equal(a, b) on two answers as math_equal hands them over.
SymbolicVerdict latex_symbolic_equal(const std::string& a, const std::string& b);

// Whether parse_latex reads `text` (a prefix of it: like sympy, the rest after the longest
// expression is ignored); for tests.
bool latex_parses(const std::string& text);

}  // namespace kvbench::metrics
