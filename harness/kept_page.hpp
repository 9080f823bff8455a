#pragma once
// The page `kvbench kept --html` writes: the text once per layer, each token shaded by the share of
// the layer's heads that keep it — what a policy keeps, at a glance.
#include <string>
#include <vector>

namespace kvbench::harness {

struct KeptView {
  std::string title;                               // policy, budget, model
  std::vector<std::string> tokens;                 // display text of every token fed
  std::vector<std::vector<double>> kept_share;     // per layer, per token: heads keeping it / heads
};

std::string kept_page(const KeptView& view);  // a self-contained HTML page, every text escaped

}  // namespace kvbench::harness
