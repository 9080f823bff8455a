// pltrdy `rouge` 1.0.1 (git c1b90a7, `Rouge().get_scores(hyp, ref)`), the ROUGE that LongBench,
// H2O and BUZZ use, reproduced bit for bit.
//
// - Sentences: text.split("."), empty pieces dropped, each piece " ".join(piece.split()) with
//   Unicode whitespace; a whitespace-only piece becomes the sentence "" (word list [""]).
// - Words: sentence.split(" "). N-grams are *sets* (unique n-grams, no counts).
// - rouge-n: p = |H∩R|/|H|, r = |H∩R|/|R| (0.0 for an empty side), f = 2*((p*r)/(p+r+1e-8)).
// - rouge-l (summary level): m, n = numbers of unique words of reference / hypothesis; for each
//   reference sentence, the LCS words with every hypothesis sentence (pltrdy's recursive `_recon`:
//   on a mismatch it goes to (i-1, j) only if table[i-1][j] > table[i][j-1], else (i, j-1)) are
//   unioned as a *set of words*, the union carrying over across reference sentences; llcs is the
//   sum of the union's growth.
// - Errors as PltrdyError with the reference's message: "Hypothesis is empty." (checked first)
//   and "Reference is empty." when every "."-piece is empty, and RecursionError.
//
// RecursionError rule. `_recon` recurses once per backtrack step, so one (reference sentence,
// hypothesis sentence) pair needs depth = steps + 1 = i + j - (LCS length) + 1 frames, where i, j
// are the sentences' word counts. Python raises when the frames on the stack exceed
// sys.getrecursionlimit() = 1000; the caller chain above `_recon` (eval.py main -> scorer ->
// rouge_score -> get_scores -> _get_scores -> lambda -> rouge_l_summary_level -> _union_lcs ->
// _recon_lcs, plus the interpreter's module frame) holds ~10 of them. We raise RecursionError
// when depth > max_recon_depth, default 990 = 1000 - 10. The reference's own threshold moves
// with its caller's depth; the golden vectors stay clear of that zone (successes need <= 120,
// the failing case 1501), so any value there reproduces them. Since a pair of sentences of i and
// j words needs at least min(i, j) + 1 frames, the error is raised before any table is filled
// when the longest sentences of both sides are that long.
//
// Stated bound (scorer_limits.hpp): beyond kMaxLcsTableCells table cells summed over the
// sentence pairs (and no certain RecursionError), ScorerLimitError -- not a PltrdyError, so
// LongBench's catch-all does not turn it into 0.0.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench::metrics {

struct PltrdyPRF {
  double r = 0.0;
  double p = 0.0;
  double f = 0.0;
};

struct PltrdyScores {
  PltrdyPRF rouge1;
  PltrdyPRF rouge2;
  PltrdyPRF rougel;
};

class PltrdyError : public std::runtime_error {
 public:
  enum class Kind { HypothesisEmpty, ReferenceEmpty, Recursion };
  PltrdyError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct PltrdyOptions {
  // See the RecursionError rule above; 0 disables the check (compute any depth).
  size_t max_recon_depth = 990;
};

// Rouge().get_scores(hypothesis, reference)[0]. Throws PltrdyError; what() is
// "ValueError: Hypothesis is empty.", "ValueError: Reference is empty." or
// "RecursionError: maximum recursion depth exceeded".
PltrdyScores pltrdy_rouge(const std::string& hypothesis, const std::string& reference,
                          const PltrdyOptions& options = {});

// pltrdy's sentence split (see above).
std::vector<std::string> pltrdy_sentences(const std::string& text);

// The deepest `_recon` recursion the rouge-l of this pair needs (0 if either side has no
// sentences): max over (reference sentence, hypothesis sentence) pairs of steps + 1.
size_t pltrdy_recon_depth_max(const std::string& hypothesis, const std::string& reference);

}  // namespace kvbench::metrics
