#pragma once
// Checks a loaded checkpoint must pass before it runs: finite weights, and a tokenizer whose ids
// all have an embedding row.
#include <cstdint>
#include <string>

#include "models/model_loader.hpp"
#include "models/model_weights.hpp"

namespace kvbench::models {

// Every weight finite: a NaN or infinity (a broken conversion or download) would make every
// metric NaN without a word. Throws ModelLoadError naming the first such tensor.
void check_finite_weights(const ModelWeights& weights, const std::string& origin);

// A tokenizer with more ids than the model's embedding rows would index past it ("index out of
// range in self" at the first such token): an error naming both files and sizes. A smaller
// tokenizer is fine (models pad their vocabulary).
void check_tokenizer_vocab(int64_t tokenizer_vocab, const LoadedModel& model);

}  // namespace kvbench::models
