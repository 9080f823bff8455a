// RULER scripts/data/synthetic/qa.py: a SQuAD or HotpotQA question among its gold documents and
// as many distractors as fit ("Document i:\n..."), shuffled with random.Random(random_seed).
#include <algorithm>
#include <unordered_set>

#include "datasets/python_format.hpp"
#include "datasets/ruler/generator_run.hpp"

namespace kvbench::datasets::ruler {
namespace {

struct Qa {
  GeneratorRun& run;
  const QaDataset& data;

  explicit Qa(GeneratorRun& r) : run(r), data(r.data.qa(r.text_arg("dataset"))) {}

  std::pair<std::string, std::vector<std::string>> make(std::size_t index, int64_t num_docs) {
    if (index >= data.questions.size())
      throw std::out_of_range("RULER qa: sample " + std::to_string(index) + " asked of a dataset with " +
                              std::to_string(data.questions.size()) + " answerable questions");
    const QaItem& q = data.questions[index];
    const auto n = static_cast<std::size_t>(std::max<int64_t>(num_docs, 0));
    std::vector<std::string> docs;
    if (n < data.docs.size()) {
      std::vector<std::size_t> chosen = q.context;
      if (num_docs - static_cast<int64_t>(q.context.size()) > static_cast<int64_t>(q.more_context.size())) {
        std::unordered_set<std::size_t> taken(q.context.begin(), q.context.end());
        taken.insert(q.more_context.begin(), q.more_context.end());
        std::vector<std::size_t> addition;
        for (std::size_t i = 0; i < data.docs.size(); ++i)
          if (!taken.count(i)) addition.push_back(i);
        chosen.insert(chosen.end(), q.more_context.begin(), q.more_context.end());
        const int64_t extra = std::max<int64_t>(0, num_docs - static_cast<int64_t>(q.context.size() + q.more_context.size()));
        const std::vector<std::size_t> drawn = run.random.sample(addition, static_cast<std::size_t>(extra));
        chosen.insert(chosen.end(), drawn.begin(), drawn.end());
      } else {
        const int64_t k = num_docs - static_cast<int64_t>(q.context.size());
        if (k < 0) throw std::invalid_argument("RULER qa: fewer documents than the question's own");
        const std::vector<std::size_t> drawn = run.random.sample(q.more_context, static_cast<std::size_t>(k));
        chosen.insert(chosen.end(), drawn.begin(), drawn.end());
      }
      for (std::size_t i : chosen) docs.push_back(data.docs[i]);
    } else {
      for (std::size_t i = 0; i < n; ++i) docs.push_back(data.docs[i % data.docs.size()]);  // repeated, cut at num_docs
    }
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(docs);
    std::string context;
    for (std::size_t i = 0; i < docs.size(); ++i)
      context += (i ? "\n\n" : "") + python_format("Document {i}:\n{document}", {{"i", std::to_string(i + 1)}, {"document", docs[i]}});
    return {python_format(run.template_text, {{"context", context}, {"query", q.query}}), q.outputs};
  }
};

}  // namespace

std::vector<Sample> generate_qa(GeneratorRun& run) {
  Qa qa(run);
  const int64_t max_seq_length = run.request.max_seq_length;
  const int64_t incremental = 10;
  const int64_t num_docs = search_haystack(run, incremental, max_seq_length, run.tokens_to_generate,
                                           [&](int64_t n) { return qa.make(0, n).first; });
  return draw_samples(run, num_docs, incremental,
                      [&](int64_t index, int64_t n) { return qa.make(static_cast<std::size_t>(index), n); });
}

}  // namespace kvbench::datasets::ruler
