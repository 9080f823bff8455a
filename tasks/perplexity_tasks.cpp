// Perplexity tasks: tinystories (the stories260K domain), wikitext (wiki.test.raw), pg19 (books
// streamed one at a time, as in the Cascade paper). Modes:
//  - documents: each document from BOS, truncated to max_length tokens (default: the model's
//    context), NLL averaged over all scored tokens (token-weighted);
//  - sliding:   one long text scored with windows of max_length tokens advancing by stride, each
//    token scored once (HF's perplexity recipe);
//  - stream:    the text as one stream fed through the job's protocol (token by token with block 1)
//    under eviction, with the per-token NLL curve (StreamingLLM, Cascade, BUZZ Table 3).
// Presets (task param "preset") fill in a paper's setting; explicit task params still win:
//  - buzz_table3 (wikitext only): BUZZ Table 3, WikiText-2 test streamed token by token through a
//    cache of 50 or 100 tokens: mode stream over the joined text; the job must use protocol
//    "stream" with block 1 and an absolute budget ("50", "100"; "full" for the Full column).
//    BUZZ does not say how many tokens it scored: max_tokens (default all) is the user's choice.
#include <cmath>
#include <numeric>

#include "datasets/data_root.hpp"
#include "datasets/text_reader.hpp"
#include "models/perplexity.hpp"
#include "policies/budget.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

struct Document {
  std::string id;
  std::string text;
};

struct Scored {
  std::vector<double> nll;
  int64_t max_cache_len = 0;
};

Scored score_stream(const TaskContext& ctx, const std::vector<int64_t>& tokens, models::SessionOptions options) {
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), options);
  models::PerplexityResult r = models::evaluate_perplexity(session, tokens);
  ctx.meter->prefill_tokens += static_cast<int64_t>(tokens.size()) - 1;
  ctx.meter->prefill_seconds += r.seconds;
  ctx.meter->add_session(session);
  return {r.nll, r.max_cache_len};
}

nlohmann::json summarise(const std::vector<double>& nll) {
  double sum = 0;
  for (double v : nll) sum += v;
  const double mean = nll.empty() ? 0.0 : sum / static_cast<double>(nll.size());
  return {{"tokens", static_cast<int64_t>(nll.size())}, {"mean_nll", mean}, {"perplexity", std::exp(mean)}};
}

class PerplexityTask : public Task {
 public:
  PerplexityTask(std::string name, std::string default_mode, std::string relative_path, std::string source)
      : name_(std::move(name)), default_mode_(std::move(default_mode)), path_(std::move(relative_path)),
        source_(std::move(source)) {}
  ParamSpecs parameters() const override {
    return {ParamSpec::text("mode"), ParamSpec::text("preset"), ParamSpec::integer("max_length", 2), ParamSpec::integer("stride", 1),
            ParamSpec::integer("max_tokens", 0), ParamSpec::flag("per_document"), ParamSpec::flag("curve")};
  }

  nlohmann::json settings() const override {
    return {{"protocol", "perplexity"},
            {"default_mode", default_mode_},
            {"modes", {"documents", "sliding", "stream"}},
            {"data", path_},
            {"bos", "prepended to each document (documents) / the stream (stream, sliding windows)"},
            {"metric", "perplexity = exp(token-weighted mean NLL)"},
            {"params", {{"mode", default_mode_}, {"max_length", "model context"}, {"stride", "max_length/2"},
                        {"max_tokens", "0 = all (stream/sliding)"}, {"curve", "include per-token NLL"},
                        {"preset", name_ == "wikitext" ? "buzz_table3 (stream, protocol stream, block 1, budget 50/100)" : "none"}}}};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, path_, source_)};
  }

  nlohmann::json run(const TaskContext& job) const override {
    const TaskContext ctx = with_preset(job);
    const std::string mode = ctx.param<std::string>("mode", default_mode_);
    const std::vector<Document> docs = documents(ctx);
    if (mode == "documents") return run_documents(ctx, docs);
    if (mode == "stream") return run_stream(ctx, docs);
    if (mode == "sliding") return run_sliding(ctx, docs);
    throw std::invalid_argument(name_ + ": task_params.mode must be documents, sliding or stream, got '" + mode + "'");
  }

 protected:
  virtual std::vector<Document> documents(const TaskContext& ctx) const {
    return {{name_, datasets::read_text(data_files(ctx).front())}};
  }

 private:
  // The job's task params with a named preset's settings underneath them.
  TaskContext with_preset(const TaskContext& job) const {
    const std::string preset = job.param<std::string>("preset", "");
    if (preset.empty()) return job;
    if (preset != "buzz_table3" || name_ != "wikitext")
      throw std::invalid_argument(name_ + ": unknown task_params.preset '" + preset + "'" +
                                  (name_ == "wikitext" ? " (known: buzz_table3)" : " (this task has none)"));
    if (job.protocol != "stream" || job.block != 1)
      throw std::invalid_argument(name_ + ": preset buzz_table3 streams token by token: the job needs protocol \"stream\" "
                                  "and block 1, got " + job.protocol + " with block " + std::to_string(job.block));
    if (policies::Budget::parse(job.budget).is_fraction())
      throw std::invalid_argument(name_ + ": preset buzz_table3 uses an absolute cache size (\"50\", \"100\" or \"full\"), "
                                  "got " + job.budget);
    TaskContext ctx = job;
    nlohmann::json params = {{"mode", "stream"}, {"per_document", false}};
    for (auto it = job.params.begin(); it != job.params.end(); ++it) params[it.key()] = it.value();
    ctx.params = params;
    return ctx;
  }

  std::vector<int64_t> encode(const TaskContext& ctx, const std::string& text) const {
    std::vector<int> ids = ctx.tokenizer->encode(text, /*add_bos=*/true);
    return {ids.begin(), ids.end()};
  }

  nlohmann::json example(const TaskContext& ctx, const std::string& id, int64_t tokens, const Scored& s) const {
    nlohmann::json e = {{"id", id}, {"prompt_tokens", tokens}, {"prediction", ""},
                        {"references", nlohmann::json::array()}, {"metrics", summarise(s.nll)}};
    e["metrics"]["max_cache_len"] = s.max_cache_len;
    if (ctx.param<bool>("curve", true)) e["nll_curve"] = s.nll;
    return e;
  }

  nlohmann::json finish(const TaskContext& ctx, const std::vector<double>& all, nlohmann::json examples) const {
    nlohmann::json metrics = summarise(all);
    int64_t most = 0;
    for (const auto& e : examples) most = std::max<int64_t>(most, e["metrics"]["max_cache_len"]);
    metrics["max_cache_len"] = most;
    return {{"metrics", metrics}, {"examples", examples}};
  }

  nlohmann::json run_documents(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_length = ctx.param<int64_t>("max_length", ctx.max_context());
    std::vector<double> all;
    nlohmann::json examples = nlohmann::json::array();
    const int64_t n = ctx.limit > 0 ? std::min<int64_t>(ctx.limit, docs.size()) : static_cast<int64_t>(docs.size());
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> tokens = encode(ctx, docs[i].text);
      if (static_cast<int64_t>(tokens.size()) > max_length) tokens.resize(max_length);
      if (tokens.size() < 2) continue;
      Scored s = score_stream(ctx, tokens, ctx.session_options());
      all.insert(all.end(), s.nll.begin(), s.nll.end());
      examples.push_back(example(ctx, docs[i].id, static_cast<int64_t>(tokens.size()), s));
      if (ctx.progress) ctx.progress(i + 1, n);
    }
    return finish(ctx, all, examples);
  }

  // Documents joined into one stream (one BOS), fed through the job's protocol.
  nlohmann::json run_stream(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_tokens = ctx.param<int64_t>("max_tokens", 0);
    const bool per_document = ctx.param<bool>("per_document", name_ == "pg19");
    std::vector<double> all;
    nlohmann::json examples = nlohmann::json::array();
    auto run_one = [&](const std::string& id, std::vector<int64_t> tokens) {
      if (max_tokens > 0 && static_cast<int64_t>(tokens.size()) > max_tokens) tokens.resize(max_tokens);
      models::SessionOptions options = ctx.session_options();
      Scored s = score_stream(ctx, tokens, options);
      all.insert(all.end(), s.nll.begin(), s.nll.end());
      examples.push_back(example(ctx, id, static_cast<int64_t>(tokens.size()), s));
    };
    const int64_t n = ctx.limit > 0 ? std::min<int64_t>(ctx.limit, docs.size()) : static_cast<int64_t>(docs.size());
    if (per_document) {
      for (int64_t i = 0; i < n; ++i) {
        run_one(docs[i].id, encode(ctx, docs[i].text));
        if (ctx.progress) ctx.progress(i + 1, n);
      }
    } else {
      std::string joined;
      for (int64_t i = 0; i < n; ++i) joined += (i ? "\n" : "") + docs[i].text;
      run_one(name_ + "-stream", encode(ctx, joined));
    }
    return finish(ctx, all, examples);
  }

  // HF's recipe: windows of max_length, each new window scoring only the tokens the previous did not.
  nlohmann::json run_sliding(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_length = ctx.param<int64_t>("max_length", ctx.max_context());
    const int64_t stride = ctx.param<int64_t>("stride", max_length / 2);
    const int64_t max_tokens = ctx.param<int64_t>("max_tokens", 0);
    if (stride < 1 || stride > max_length) throw std::invalid_argument(name_ + ": stride must be in [1, max_length]");
    std::string joined;
    for (size_t i = 0; i < docs.size(); ++i) joined += (i ? "\n" : "") + docs[i].text;
    std::vector<int64_t> tokens = encode(ctx, joined);
    if (max_tokens > 0 && static_cast<int64_t>(tokens.size()) > max_tokens) tokens.resize(max_tokens);
    const int64_t total = static_cast<int64_t>(tokens.size());
    std::vector<double> all;
    int64_t scored_until = 1;  // tokens [1, scored_until) already scored
    int64_t windows = 0;
    for (int64_t begin = 0; scored_until < total; begin += stride) {
      const int64_t end = std::min(begin + max_length, total);
      std::vector<int64_t> window(tokens.begin() + begin, tokens.begin() + end);
      Scored s = score_stream(ctx, window, ctx.session_options());
      // s.nll[j] scores token begin+j+1; keep the ones not scored before.
      for (int64_t j = 0; j < static_cast<int64_t>(s.nll.size()); ++j)
        if (begin + j + 1 >= scored_until) all.push_back(s.nll[j]);
      scored_until = end;
      ++windows;
      if (ctx.limit > 0 && windows >= ctx.limit) break;
    }
    Scored whole{all, 0};
    nlohmann::json examples = nlohmann::json::array({example(ctx, name_ + "-sliding", total, whole)});
    examples[0]["metrics"]["windows"] = windows;
    return finish(ctx, all, examples);
  }

  std::string name_, default_mode_, path_, source_;
};

// TinyStories: stories separated by <|endoftext|> lines.
class TinyStoriesTask : public PerplexityTask {
 public:
  TinyStoriesTask()
      : PerplexityTask("tinystories", "documents", "tinystories/TinyStories-valid.head.txt",
                       "roneneldan/TinyStories on Hugging Face (TinyStories-valid.txt)") {}

 protected:
  std::vector<Document> documents(const TaskContext& ctx) const override {
    std::vector<Document> docs;
    for (const std::string& story : datasets::read_tinystories(data_files(ctx).front()))
      docs.push_back({"story-" + std::to_string(docs.size()), story});
    return docs;
  }
};

const TaskRegistration tinystories({"tinystories", "TinyStories validation stories (stories260K's domain): perplexity",
                                    {}, [](const std::string&) { return std::make_unique<TinyStoriesTask>(); }});
const TaskRegistration wikitext({"wikitext", "WikiText-2 raw test set (wiki.test.raw): perplexity, sliding or streaming",
                                 {}, [](const std::string&) {
                                   return std::make_unique<PerplexityTask>(
                                       "wikitext", "sliding", "wikitext/wiki.test.raw",
                                       "wikitext-2-raw-v1 (Salesforce/wikitext on Hugging Face), file wiki.test.raw");
                                 }});
const TaskRegistration pg19({"pg19", "PG19 test books streamed one at a time with eviction (Cascade Table 1)", {},
                             [](const std::string&) {
                               return std::make_unique<PerplexityTask>(
                                   "pg19", "stream", "pg19/10146.body_between_gutenberg_markers.txt",
                                   "deepmind/pg19 (test split) on Hugging Face");
                             }});

}  // namespace
}  // namespace kvbench::tasks
