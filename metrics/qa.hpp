// Extractive-QA scorers: SQuAD v1.1 (= LongBench's normalize_answer / qa_f1_score),
// lost-in-the-middle's best_subspan_em, and the strict EM used for BUZZ's multi-document QA.
#pragma once

#include <string>
#include <vector>

namespace kvbench::metrics {

// SQuAD normalize_answer: Python str.lower(); drop ASCII string.punctuation only (curly quotes,
// dashes, '¿' stay); re.sub(r"\b(a|an|the)\b", " ") with Unicode \b ("thé" keeps "the");
// " ".join(s.split()) with Unicode whitespace.
std::string normalize_answer(const std::string& s);

// 1.0 if normalize_answer(prediction) == normalize_answer(ground_truth) else 0.0.
double exact_match_score(const std::string& prediction, const std::string& ground_truth);

// SQuAD token F1 on normalize_answer(x).split(), Counter intersection; 0 when no token is
// common (so "" vs "" is 0 although its EM is 1).
double qa_token_f1(const std::string& prediction, const std::string& ground_truth);

// max over references, starting from 0 (0 for an empty list).
double exact_match(const std::string& prediction, const std::vector<std::string>& ground_truths);
double token_f1(const std::string& prediction, const std::vector<std::string>& ground_truths);

// lost-in-the-middle best_subspan_em: 1.0 if some normalized ground truth is a substring of the
// normalized prediction (an empty normalized ground truth always is), else 0.0.
double best_subspan_em(const std::string& prediction,
                       const std::vector<std::string>& ground_truths);

// BUZZ "EM accuracy" (paper §4, multi-document QA of lost-in-the-middle, Fig. 6). The paper does
// not define it beyond "exact matches accuracy"; we take the strict reading: 1.0 if the
// normalized prediction equals some normalized reference (SQuAD EM, max over references). This
// is stricter than best_subspan_em, which lost-in-the-middle itself reports: a verbose but
// correct answer scores 1 there and 0 here. Tasks choose which to report.
double strict_em(const std::string& prediction, const std::vector<std::string>& ground_truths);

}  // namespace kvbench::metrics
