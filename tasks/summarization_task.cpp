// Tasks xsum and cnn_dailymail: 0/k-shot summarization in the HELM format (H2O, BumbleBee) or with
// BUZZ's prompt, ROUGE-1/2/L (Google rouge_score with the Porter stemmer as HELM, or pltrdy as the
// H2O and BUZZ scripts) and BUZZ's geometric mean. See tasks/summarization.hpp and docs/tasks.md.
#include "datasets/data_root.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/rouge_score.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/summarization.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

using summarization::Document;

struct DatasetSpec {
  std::string name;
  std::string default_file;
  std::string source;
  int num_sentences;       // HELM: 1 for XSum, 3 for CNN/DM
  int64_t helm_max_tokens;  // HELM: 64 / 128
};

struct RougeTriple {
  double r1 = 0, r2 = 0, rl = 0;
};

RougeTriple score_rouge(const std::string& backend, bool stemmer, const std::string& prediction, const std::string& reference) {
  if (backend == "pltrdy") {
    try {
      metrics::PltrdyScores s = metrics::pltrdy_rouge(prediction, reference);
      return {s.rouge1.f, s.rouge2.f, s.rougel.f};
    } catch (const metrics::PltrdyError&) {
      return {};  // empty prediction (or reference): pltrdy raises; scored 0 as LongBench's wrapper does
    }
  }
  metrics::RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, stemmer);
  auto s = scorer.score(reference, prediction);
  return {s["rouge1"].fmeasure, s["rouge2"].fmeasure, s["rougeL"].fmeasure};
}

class SummarizationTask : public Task {
 public:
  explicit SummarizationTask(DatasetSpec spec) : spec_(std::move(spec)) {}
  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("style", "helm", {"helm", "h2o", "buzz"}, "the reference pipeline: HELM, H2O's request files, or BUZZ"),
            Param::integer("shots", nullptr, "in-context examples (default: helm 5, h2o 0, buzz 0)", 0),
            Param::text("shots_file", nullptr, "the training split the shots are drawn from (default: the evaluated file)"),
            Param::integer("shots_seed", 0, "seed of the shots' draw (HELM's trial index)", 0),
            Param::integer("shot_min_words", 50, "HELM's training-pool filter: fewest words of an article", 0),
            Param::integer("shot_max_words", 150, "HELM's training-pool filter: most words of an article", 0),
            Param::flag("bos", nullptr, "prepend BOS (default: helm, buzz true; h2o false)"),
            Param::flag("clean", nullptr,
                        "HELM's _clean_and_truncate of every article (default: helm true; h2o false, as H2O feeds "
                        "its request files' articles verbatim; buzz false)"),
            Param::integer("doc_max_words", 512, "clean: words an article is cut to", 1),
            Param::integer("max_new_tokens", nullptr, "tokens generated (default: helm, h2o the dataset's; buzz 1000)", 1),
            Param::integer("max_length", nullptr, "prompt + new tokens allowed (default: the model context)", 2),
            Param::choice("truncation", "helm", {"helm", "middle", "left", "none"}, "how an over-long prompt is cut"),
            Param::choice("rouge", nullptr, {"google", "pltrdy"}, "the ROUGE implementation (default: helm google, else pltrdy)"),
            Param::flag("stemmer", true, "google ROUGE: Porter stemmer"),
            Param::number("temperature", 0.0, "sampling temperature (0: greedy; HELM/H2O sample at 0.3)", 0),
            Param::number("top_p", 1.0, "nucleus sampling", 0, 1),
            Param::text("data_file", spec_.default_file, "the evaluated file (absolute or relative to the data root)"),
            record_prompts_param(),
            chat_template_param(),
            Param::flag("h2o_stop_quirk", nullptr,
                        "text[:text.find('###')], which drops the last character when '###' is absent (default: h2o true)")};
  }


  nlohmann::json settings() const override {
    const std::string instruction = summarization::helm_instruction(spec_.num_sentences);
    nlohmann::json s = {{"task", spec_.name},
            {"data", spec_.default_file + " (task_params.data_file for a full download)"},
            {"protocol", "generate-and-score"},
            {"prompt_template",
             {{"helm", "HELM summarization adapter: shots '###\\nArticle: {article}\\n\\n" +
                           instruction.substr(0, instruction.size() - 1) +
                           "\\n{summary}\\n', the evaluated block without the instruction's newline "
                           "(output_prefix.rstrip()), joined by '\\n'; articles cleaned (newlines flattened, cut to 512 words)"},
              {"h2o", "the same blocks as H2O's request files (the evaluated block keeps the newline), no BOS"},
              {"buzz", "'Text: {article}\\n\\nSUMMARIZE the previous text to 50 words!' (BUZZ code), raw article"}}},
            {"shots", "helm (5) / h2o (0): from task_params.shots_file (the training split) as HELM draws them: "
                      "articles cleaned, 50-150 words (XSum: HELM's extra filter), sample_examples with Python's "
                      "random seeded by shots_seed (HELM's trial index 0); without shots_file, other documents of "
                      "the evaluated file (a permutation seeded by shots_seed that skips the document itself)"},
            {"truncation", "helm: drop shots from the end until prompt + max_new_tokens fits max_length, then cut the "
                           "prompt from the right (HELM _make_prompt_fit); also middle | left | none"},
            {"bos", "helm: true (HF tokenizer in HELM's client); h2o: false (add_special_tokens=False); buzz: true"},
            {"decoding", "greedy by default (HELM/H2O sample at temperature 0.3: set task_params.temperature)"},
            {"stop", "helm, h2o: '###' (HELM stop_sequences; h2o cuts text[:text.find('###')]); buzz: EOS only"},
            {"max_new_tokens", {{"helm", spec_.helm_max_tokens}, {"h2o", spec_.helm_max_tokens}, {"buzz", 1000}}},
            {"metric", "ROUGE-1/2/L F-measure averaged over documents; rouge_geomean = (R1*R2*RL)^(1/3) of the "
                       "averages (BUZZ); helm: Google rouge_score with stemmer; h2o, buzz: pltrdy rouge"}};
    return s;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    std::vector<std::string> files = {data_path(ctx)};
    if (ctx.given("shots_file"))
      files.push_back(datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("shots_file", ""), spec_.source));
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const Setup o = resolve(ctx);
    const Corpus corpus = read_corpus(ctx, o);
    ExampleLoop loop(ctx, static_cast<int64_t>(corpus.docs.size()));
    for (int64_t i = 0; i < loop.size(); ++i) {
      const Document& doc = corpus.docs[i];
      std::vector<const Document*> shot_docs;
      const std::vector<size_t> chosen = corpus.separate_pool && o.helm_format ? corpus.fixed_shots
          // The shots are part of the prompt, so task_params.shots_seed picks them, not the job's seed
          // (which samples and drives randomised policies: a seed axis must not change the prompts).
          : summarization::pick_shots(corpus.pool().size(), corpus.separate_pool ? corpus.pool().size() : i,
                                      static_cast<size_t>(o.shots), o.shots_seed);
      for (size_t j : chosen) shot_docs.push_back(&corpus.pool()[j]);
      const TruncatedText fitted = fit_prompt(ctx, o, shot_docs, doc);
      const std::string prompt = apply_chat_template(o.chat, fitted.text, *ctx.tokenizer);  // around the truncated prompt, as LongBench
      // The model's own template already wrote its BOS (kvpress).
      const std::vector<int> encoded = ctx.tokenizer->encode(prompt, o.bos && encode_adds_special_tokens(o.chat, prompt, *ctx.tokenizer));
      const std::vector<int64_t> ids(encoded.begin(), encoded.end());
      Completion c = complete(ctx, ids, o.decoding);
      std::string prediction = c.text;
      if (o.helm_format && o.quirk) prediction = prediction.substr(0, prediction.find("###") == std::string::npos
                                                                   ? (prediction.empty() ? 0 : prediction.size() - 1)
                                                                   : prediction.find("###"));
      const RougeTriple r = score_rouge(o.rouge, o.stemmer, prediction, doc.summary);
      loop.record({doc.id, static_cast<int64_t>(ids.size()), prediction, {doc.summary},
                   {{"rouge1", r.r1}, {"rouge2", r.r2}, {"rougeL", r.rl}},
                   {{"shots", static_cast<int64_t>(shot_docs.size())}, {"truncated", fitted.truncated}}, prompt});
    }
    nlohmann::json metrics = loop.means();
    if (loop.recorded() > 0)
      metrics["rouge_geomean"] = summarization::rouge_geometric_mean(metrics["rouge1"].get<double>(), metrics["rouge2"].get<double>(),
                                                                     metrics["rougeL"].get<double>());
    metrics["examples"] = loop.size();
    return loop.finish(metrics, {{"style", o.style}, {"shots", o.shots}, {"truncation", o.truncation}, {"max_length", o.max_length},
                                 {"bos", o.bos}, {"clean", o.clean}, {"h2o_stop_quirk", o.quirk},
                                 {"shot_source", !corpus.separate_pool ? "evaluated file (seeded permutation)"
                                                 : o.helm_format ? "shots_file, HELM sample_examples" : "shots_file (seeded permutation)"},
                                 {"rouge", o.rouge + (o.rouge == "google" ? (o.stemmer ? " (stemmer)" : " (no stemmer)") : "")},
                                 {"decoding", o.decoding.to_json()}});
  }

 private:
  // The settings a job runs with, the defaults computed from the style resolved.
  struct Setup {
    std::string style, truncation, rouge, chat;
    bool helm_format = true, stemmer = true, quirk = false, bos = true, clean = true;
    int64_t shots = 0, max_length = 0, prompt_budget = 0;
    uint32_t shots_seed = 0;
    summarization::ShotPoolRule rule;
    DecodingSettings decoding;
  };

  // The evaluated documents and the pool the shots come from.
  struct Corpus {
    std::vector<Document> docs;
    std::vector<Document> separate;  // task_params.shots_file's documents (HELM: filtered)
    bool separate_pool = false;
    std::vector<size_t> fixed_shots;  // HELM: one sample of the training split shared by every document
    const std::vector<Document>& pool() const { return separate_pool ? separate : docs; }
  };

  Setup resolve(const TaskContext& ctx) const {
    Setup o;
    o.style = ctx.param<std::string>("style");
    o.helm_format = o.style != "buzz";  // helm and h2o share HELM's blocks
    o.shots = ctx.param_or<int64_t>("shots", o.style == "helm" ? 5 : 0);
    if (!o.helm_format && o.shots > 0) throw std::invalid_argument(spec_.name + ": the buzz style is 0-shot");
    o.truncation = ctx.param<std::string>("truncation");
    o.rouge = ctx.param_or<std::string>("rouge", o.style == "helm" ? "google" : "pltrdy");
    o.stemmer = ctx.param<bool>("stemmer");
    o.quirk = ctx.param_or<bool>("h2o_stop_quirk", o.style == "h2o");
    o.bos = ctx.param_or<bool>("bos", o.style != "h2o");
    // H2O's run_summarization.py feeds request['article'] as it is: its files were made by HELM,
    // but cleaning them again still changes articles longer than 512 words (and whitespace).
    o.clean = ctx.param_or<bool>("clean", o.style == "helm");
    o.shots_seed = static_cast<uint32_t>(ctx.param<int64_t>("shots_seed"));
    o.rule.doc_max_words = ctx.param<int64_t>("doc_max_words");
    o.rule.min_words = ctx.param<int64_t>("shot_min_words");
    o.rule.max_words = ctx.param<int64_t>("shot_max_words");
    o.rule.xsum_filter = spec_.name == "xsum";
    o.chat = ctx.param<std::string>("chat_template");
    apply_chat_template(o.chat, "", *ctx.tokenizer);  // validates the name (and that the model has its own template)

    o.decoding.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", o.helm_format ? spec_.helm_max_tokens : 1000);
    o.decoding.sampling.temperature = ctx.param<double>("temperature");
    o.decoding.sampling.top_p = ctx.param<double>("top_p");
    if (o.helm_format && !o.quirk) o.decoding.stop_strings = {"###"};
    o.max_length = ctx.param_or<int64_t>("max_length", ctx.max_context());
    // A chat template's own tokens come on top of the truncated prompt (LongBench's rule).
    const int64_t template_tokens =
        o.chat == "none" ? 0 : static_cast<int64_t>(ctx.tokenizer->encode(apply_chat_template(o.chat, "", *ctx.tokenizer), false).size());
    o.prompt_budget = o.max_length - o.decoding.max_new_tokens - template_tokens;
    if (o.truncation != "none" && o.prompt_budget < 2)
      throw std::invalid_argument(spec_.name + ": max_length " + std::to_string(o.max_length) + " leaves no room for a prompt after " +
                                  std::to_string(o.decoding.max_new_tokens) + " new tokens");
    return o;
  }

  Corpus read_corpus(const TaskContext& ctx, const Setup& o) const {
    Corpus c;
    c.docs = summarization::read_documents(data_path(ctx), spec_.num_sentences);
    if (o.clean)  // HELM cleans every split (summaries too, without a length cut)
      for (Document& d : c.docs) d.article = summarization::helm_clean(d.article, o.rule.doc_max_words), d.summary = summarization::helm_clean(d.summary, 0);
    c.separate_pool = ctx.given("shots_file");
    if (c.separate_pool) {
      c.separate = summarization::read_documents(data_files(ctx)[1], spec_.num_sentences);
      if (o.helm_format) {
        c.separate = summarization::helm_training_pool(c.separate, o.rule);
        c.fixed_shots = summarization::helm_sample_examples(c.separate, static_cast<size_t>(o.shots), o.shots_seed);
      }
    }
    if (static_cast<int64_t>(c.pool().size()) - (c.separate_pool ? 0 : 1) < o.shots)
      throw std::invalid_argument(spec_.name + ": " + std::to_string(o.shots) + " shots asked, the shot pool has " +
                                  std::to_string(c.pool().size()) + " documents" +
                                  (c.separate_pool && o.helm_format ? " after HELM's training filter (" + std::to_string(o.rule.min_words) + "-" +
                                                                          std::to_string(o.rule.max_words) + " words)" : ""));
    return c;
  }

  // The prompt of one document, cut to the budget by the job's truncation (HELM drops shots first).
  TruncatedText fit_prompt(const TaskContext& ctx, const Setup& o, std::vector<const Document*>& shot_docs, const Document& doc) const {
    auto build = [&] {
      return o.helm_format ? summarization::helm_prompt(shot_docs, doc, spec_.num_sentences, /*keep_newline=*/o.style == "h2o")
                           : summarization::buzz_prompt(doc);
    };
    std::string prompt = build();
    if (o.truncation == "helm") {
      while (!shot_docs.empty() && static_cast<int64_t>(ctx.tokenizer->encode(prompt, true).size()) > o.prompt_budget) {
        shot_docs.pop_back();
        prompt = build();
      }
      return truncate_right(*ctx.tokenizer, prompt, o.prompt_budget);
    }
    if (o.truncation == "middle") return truncate_middle(*ctx.tokenizer, prompt, o.prompt_budget);
    if (o.truncation == "left") return truncate_left(*ctx.tokenizer, prompt, o.prompt_budget);
    TruncatedText whole;
    whole.text = prompt;
    return whole;
  }

 private:
  std::string data_path(const TaskContext& ctx) const {
    return datasets::resolve_data_file(ctx.data_root, ctx.param<std::string>("data_file"), spec_.source);
  }

  DatasetSpec spec_;
};

const TaskRegistration xsum({"xsum", "XSum summarization (HELM/H2O format or BUZZ prompt), ROUGE-1/2/L", {},
                             [](const std::string&) {
                               return std::make_unique<SummarizationTask>(DatasetSpec{
                                   "xsum", "xsum/xsum_0shot.jsonl",
                                   "FMInference/H2O h2o_hf/data/summarization_data/xsum_0shot.jsonl, or EdinburghNLP/xsum "
                                   "(document, summary) as JSONL",
                                   1, 64});
                             }});
const TaskRegistration cnn({"cnn_dailymail", "CNN/DailyMail summarization (HELM format or BUZZ prompt), ROUGE-1/2/L", {},
                            [](const std::string&) {
                              return std::make_unique<SummarizationTask>(DatasetSpec{
                                  "cnn_dailymail", "cnn_dailymail/cnn_dailymail_test_head.jsonl",
                                  "abisee/cnn_dailymail 3.0.0 (article, highlights, id) as JSONL", 3, 128});
                            }});

}  // namespace
}  // namespace kvbench::tasks
