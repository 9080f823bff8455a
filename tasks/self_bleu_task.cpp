// self_bleu: the diversity of generated text (BUZZ §4.2.3, Fig. 7), Self-BLEU with nltk
// sentence_bleu, SmoothingFunction().method1, uniform weights over `ngram` orders (BUZZ: 3).
// Two modes:
//  - sentences (BUZZ's run_bleu_eval.py, the default): one generation per CNN/DailyMail article
//    with the prompt "Text: {article}\nSUMMARIZE the previous text to 150 words!", the output
//    split on "." and each piece stripped (empty pieces kept, as res.split(".") gives them), and
//    Self-BLEU over those sentences; the score of the task is the mean over articles;
//  - samples: `samples` generations per prompt with temperature sampling (sample j uses seed
//    job seed + j, so the job stays reproducible), Self-BLEU over the samples.
// BUZZ uses CNN/DailyMail 2.0.0 validation; the staged data is the 3.0.0 test split's head (same
// articles' format). BUZZ's generation length is not published: max_new_tokens (default 256).
// Prompts longer than the model's context minus max_new_tokens lose their middle (LongBench's
// rule) so short-context models can run; BUZZ's 4k-context Llama-2 needed no truncation.
// An output with fewer than two sentences has no Self-BLEU (nltk has no reference): it is
// reported as null and left out of the mean ("undefined" counts them).
#include <algorithm>
#include <cmath>

#include "datasets/data_root.hpp"
#include "metrics/self_bleu.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/python_str.hpp"
#include "datasets/jsonl_reader.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

const char* kFile = "cnn_dailymail/cnn_dailymail_test_head.jsonl";
const char* kSelfBleuSource = "abisee/cnn_dailymail on Hugging Face (BUZZ: 2.0.0 validation; fields id, article, highlights)";
const char* kTemplate = "Text: {article}\nSUMMARIZE the previous text to 150 words!";

// Python: [x.strip() for x in text.split(".")].
std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    size_t dot = text.find('.', begin);
    out.push_back(strip(text.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin)));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return out;
}

class SelfBleuTask : public Task {
 public:
  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("mode", "sentences", {"sentences", "samples"}, "Self-BLEU over one output's sentences, or over samples"),
            Param::integer("ngram", 3, "BLEU order", 1),
            Param::integer("samples", 5, "samples mode: generations per prompt", 2),
            Param::text("template", kTemplate, "the prompt template"),
            Param::integer("max_new_tokens", 256, "tokens generated", 1),
            Param::number("temperature", 0.7, "samples mode: sampling temperature", 0),
            Param::number("top_p", 1.0, "samples mode: nucleus sampling", 0, 1),
            record_prompts_param()};
  }

  nlohmann::json settings() const override {
    return {{"protocol", "generate, then Self-BLEU within each prompt's output(s)"},
            {"data", kFile},
            {"prompt_template", kTemplate},
            {"truncation", "middle of the prompt, to the model context minus max_new_tokens"},
            {"decoding", {{"sentences", "greedy"}, {"samples", "temperature sampling, seed = job seed + sample"}}},
            {"stop", "EOS"},
            {"metric", "Self-BLEU (nltk sentence_bleu, method1, weights 1/ngram), np.mean per prompt, mean over prompts"}};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, kFile, kSelfBleuSource)};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const std::string mode = ctx.param<std::string>("mode");  // declared choices: sentences | samples
    const int ngram = static_cast<int>(ctx.param<int64_t>("ngram"));
    const int64_t samples = ctx.param<int64_t>("samples");
    if (mode == "samples" && samples < 2) throw std::invalid_argument("self_bleu: task_params.samples must be >= 2");
    const std::string tmpl = ctx.param<std::string>("template");
    const size_t slot = tmpl.find("{article}");
    if (slot == std::string::npos) throw std::invalid_argument("self_bleu: template has no {article}");
    DecodingSettings dec;
    dec.max_new_tokens = ctx.param<int64_t>("max_new_tokens");
    if (mode == "samples") {
      dec.sampling.temperature = ctx.param<double>("temperature");
      dec.sampling.top_p = ctx.param<double>("top_p");
      if (dec.sampling.temperature <= 0) throw std::invalid_argument("self_bleu: samples mode needs temperature > 0");
    }
    const int64_t max_prompt = ctx.max_context() - dec.max_new_tokens;
    if (max_prompt < 2) throw std::invalid_argument("self_bleu: max_new_tokens leaves no room for the prompt");

    const std::vector<datasets::JsonRecord> lines = datasets::read_jsonl(data_files(ctx).front(), ctx.limit);
    ExampleLoop loop(ctx, static_cast<int64_t>(lines.size()));
    int64_t defined = 0, undefined = 0;
    for (const datasets::JsonRecord& line : lines) {
      const std::string where = line.file + ":" + std::to_string(line.line);
      std::string prompt = tmpl;
      prompt.replace(slot, 9, line.string_field("article"));
      std::vector<int64_t> ids = encode_prompt(ctx, prompt);
      std::string original_prompt;  // recorded beside the prompt fed when the middle was cut
      if (static_cast<int64_t>(ids.size()) > max_prompt) {
        std::vector<int64_t> cut(ids.begin(), ids.begin() + max_prompt / 2);
        cut.insert(cut.end(), ids.end() - (max_prompt - max_prompt / 2), ids.end());
        ids = std::move(cut);
        original_prompt = prompt;
        prompt = ctx.tokenizer->decode({ids.begin(), ids.end()});
      }
      std::vector<std::string> outputs, units;
      if (mode == "sentences") {
        outputs.push_back(complete(ctx, ids, dec).text);
        units = split_sentences(outputs.front());
      } else {
        for (int64_t j = 0; j < samples; ++j) {
          TaskContext sample = ctx;
          sample.seed = ctx.seed + static_cast<uint64_t>(j);
          outputs.push_back(complete(sample, ids, dec).text);
        }
        units = outputs;
      }
      // An output of fewer than two sentences has no Self-BLEU (null, left out of the mean).
      const nlohmann::json score = units.size() >= 2 ? nlohmann::json(metrics::self_bleu(units, ngram).mean_numpy) : nullptr;
      ++(score.is_null() ? undefined : defined);
      Example e{line.string_field_or("id", where), static_cast<int64_t>(ids.size()), outputs.front(), {},
                {{"self_bleu", score}}, {{"outputs", outputs}, {"units", units.size()}}, prompt};
      if (!original_prompt.empty()) e.recorded_with_prompt["original_prompt"] = original_prompt;
      loop.record(std::move(e));
    }
    require_scored("self_bleu", defined, std::to_string(undefined) + " outputs with fewer than two sentences/samples");
    return loop.finish({{"self_bleu", loop.mean("self_bleu")},
                        {"scored", defined},
                        {"undefined", undefined},
                        {"mode", mode},
                        {"ngram", ngram}});
  }
};

const TaskRegistration self_bleu({"self_bleu", "Self-BLEU diversity of generations (BUZZ Fig. 7), CNN/DailyMail",
                                  {},
                                  [](const std::string&) { return std::make_unique<SelfBleuTask>(); }});

}  // namespace
}  // namespace kvbench::tasks
