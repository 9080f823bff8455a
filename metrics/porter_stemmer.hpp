// NLTK's PorterStemmer in its default NLTK_EXTENSIONS mode (nltk 3.8), bit for bit:
// the irregular-forms pool (sky/skies, dying, lying, tying, news, innings, outings, cannings,
// howe, proceed, exceed, succeed), words of <= 2 characters returned unchanged, 'ies'/'ied' on
// 4-letter words -> 'ie', the two-letter *o rule, ALLI -> AL applied first then step 2 again,
// BLI -> BLE, FULLI -> FUL, and LOGI -> LOG measured on the stem with its 'l'.
// Words are handled as Unicode code points (Python str semantics); every non [aeiou] letter,
// non-ASCII included, counts as a consonant, as in nltk.
#pragma once

#include <string>

namespace kvbench::metrics {

// stem(word) with nltk's default to_lowercase=True (Python str.lower()). Note nltk checks the
// pool with the word *before* lowercasing ("Sky" is not pooled), which is reproduced.
std::string porter_stem(const std::string& word);

}  // namespace kvbench::metrics
