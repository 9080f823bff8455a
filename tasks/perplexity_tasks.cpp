// Perplexity tasks: tinystories (the stories260K domain), wikitext (wiki.test.raw), pg19 (books
// streamed one at a time, as in the Cascade paper). Modes:
//  - documents: each document from BOS, truncated to max_length tokens (default: the model's
//    context), NLL averaged over all scored tokens (token-weighted);
//  - sliding:   one long text scored with windows of max_length tokens advancing by stride, each
//    token scored once (HF's perplexity recipe);
//  - stream:    the text as one stream fed through the job's protocol (token by token with block 1)
//    under eviction, with the per-token NLL curve (StreamingLLM, Cascade, BUZZ Table 3).
//  - rows (wikitext): BUZZ's eval_long_ppl.py: the first `rows` rows of the HF wikitext split, each
//    tokenised with its own BOS, fed token by token through ONE cache carried across rows; the
//    last token of each row is only a target (range(seq_len - 1)), so a row's BOS is fed but an
//    empty row feeds nothing.
// Presets (task param "preset") fill in a paper's setting; explicit task params still win:
//  - buzz_table3 (wikitext only): BUZZ Table 3: mode rows, rows 40 (its --num_samples); the job
//    must use protocol "stream" with block 1 and an absolute budget ("50", "100"; "full" for the
//    Full column). BUZZ read the validation split (data_file: wiki.valid.raw); the staged file is
//    the test split.
// pg19: the books of data_file / data_dir (a folder of <book>.txt, a JSONL export or one book),
// with the Cascade subset (books: cascade, sorted positions 20..43 and 19) by default for a
// folder or JSONL, each book streamed from its own BOS (Cascade Table 1).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "datasets/data_root.hpp"
#include "datasets/text_reader.hpp"
#include "models/job_clock.hpp"
#include "models/perplexity.hpp"
#include "policies/budget.hpp"
#include "tasks/perplexity_data.hpp"
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

// Feeds `inputs` through one session and scores targets[i] from the logits after inputs[i].
Scored score_inputs(const TaskContext& ctx, const std::vector<int64_t>& inputs, const std::vector<int64_t>& targets) {
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), ctx.session_options());
  const auto t0 = models::JobClock::now();
  const torch::Tensor logits = session.prefill(inputs, /*all_logits=*/true).to(torch::kCPU, torch::kFloat64);
  models::require_finite_logits(*ctx.model, logits);  // a broken checkpoint fails naming its file, not as a NaN metric
  torch::Tensor logp = torch::log_softmax(logits, -1);
  torch::Tensor nll = -logp.gather(1, torch::tensor(targets, torch::kInt64).unsqueeze(1)).squeeze(1);
  ctx.meter->prefill_tokens += static_cast<int64_t>(inputs.size());
  ctx.meter->prefill_seconds += std::chrono::duration<double>(models::JobClock::now() - t0).count();
  ctx.meter->add_session(session);
  return {std::vector<double>(nll.data_ptr<double>(), nll.data_ptr<double>() + nll.numel()), session.max_cache_len()};
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
  params::Params parameters() const override {
    using params::Param;
    params::Params declared = {
        Param::choice("mode", default_mode_,
                      name_ == "wikitext" ? std::vector<std::string>{"documents", "sliding", "stream", "rows"}
                                          : std::vector<std::string>{"documents", "sliding", "stream"},
                      "documents: each document in one forward; sliding: windows of max_length; stream: one stream "
                      "under eviction" + std::string(name_ == "wikitext" ? "; rows: the dataset's rows, token by token" : "")),
        Param::integer("max_length", nullptr, "documents, sliding: tokens per forward (default: the model context)", 2),
        Param::integer("stride", nullptr, "sliding: window stride (default: max_length / 2)", 1),
        Param::integer("max_tokens", 0, "tokens scored, 0 = all (stream, sliding: per stream; rows: in total)", 0),
        Param::flag("per_document", name_ == "pg19", "stream: each document from its own BOS"),
        Param::flag("curve", true, "include the per-token NLL curve"),
        Param::text("data_file", path_, "the evaluated file (absolute or relative to the data root)")};
    if (name_ == "wikitext")
      declared.insert(declared.end(),
                      {Param::text("preset", nullptr, "buzz_table3: mode rows, 40 rows (protocol stream, block 1, budget 50/100)"),
                       Param::integer("rows", 0, "rows mode: the first N rows (0 = all; buzz_table3: 40)", 0)});
    if (name_ == "pg19")
      declared.insert(declared.end(),
                      {Param::text("data_dir", nullptr, "a folder of <book>.txt (instead of data_file)"),
                       Param::choice("books", nullptr, {"cascade", "all"},
                                     "cascade (sorted positions 20..43 + 19; the default for a folder or JSONL) or all (the default otherwise)")});
    return declared;
  }


  // Each mode reads some of the size parameters; the others would be accepted and do nothing
  // (max_tokens in mode documents, say, scored whole documents).
  void check_params(const nlohmann::json& params) const override {
    static const std::map<std::string, std::set<std::string>> reads = {
        {"documents", {"max_length"}},
        {"stream", {"max_tokens", "per_document"}},
        {"sliding", {"max_length", "stride", "max_tokens"}},
        {"rows", {"rows", "max_tokens"}}};
    const std::string mode =
        params.value("mode", params.contains("preset") ? std::string("rows") : default_mode_);  // with_preset's rule
    const auto read = reads.find(mode);
    if (read == reads.end()) return;  // run() names the modes
    for (const char* key : {"max_length", "stride", "max_tokens", "per_document", "rows"}) {
      if (!params.contains(key) || read->second.count(key)) continue;
      std::string modes;
      for (const auto& [other, keys] : reads)
        if (keys.count(key)) modes += (modes.empty() ? "" : ", ") + other;
      throw std::invalid_argument(name_ + ": task_params." + key + " is not read in mode " + mode + " (only in " + modes + ")");
    }
  }

  nlohmann::json settings() const override {
    return {{"protocol", "perplexity"},
            {"default_mode", default_mode_},
            {"modes", name_ == "wikitext" ? nlohmann::json{"documents", "sliding", "stream", "rows"}
                                          : nlohmann::json{"documents", "sliding", "stream"}},
            {"data", path_ + " (task_params.data_file" + (name_ == "pg19" ? " / data_dir" : "") + " for another file)"},
            {"bos", "prepended to each document (documents) / the stream (stream, sliding windows) / each row (rows)"},
            {"metric", "perplexity = exp(token-weighted mean NLL)"}};
  }

  // One text file; a folder is PG19's alone (below), so elsewhere its reader refuses it by name.
  std::vector<std::string> data_files(const TaskContext& ctx) const override { return {data_path(ctx)}; }

  TaskOutput run(const TaskContext& job) const override {
    const TaskContext ctx = with_preset(job);
    const std::string mode = ctx.param<std::string>("mode");
    const std::vector<Document> docs = documents(ctx);
    if (mode == "documents") return run_documents(ctx, docs);
    if (mode == "stream") return run_stream(ctx, docs);
    if (mode == "sliding") return run_sliding(ctx, docs);
    return run_rows(ctx);  // the declared choices admit no other mode (rows: wikitext's alone)
  }

 protected:
  // task_params.data_file (or pg19's data_dir) under the data root, else the staged default.
  std::string data_path(const TaskContext& ctx) const {
    std::string relative = ctx.param<std::string>("data_file");
    if (name_ == "pg19" && ctx.given("data_dir")) {
      if (ctx.given("data_file")) throw std::invalid_argument("pg19: give task_params.data_file or data_dir, not both");
      relative = ctx.param_or<std::string>("data_dir", "");
    }
    return datasets::resolve_data_file(ctx.data_root, relative, source_);
  }

  virtual std::vector<Document> documents(const TaskContext& ctx) const {
    if (ctx.param<std::string>("mode") == "rows") return {};  // run_rows reads its rows itself
    return {{name_, datasets::read_text(data_path(ctx))}};
  }

  std::vector<int64_t> encode(const TaskContext& ctx, const std::string& text) const {
    std::vector<int> ids = ctx.tokenizer->encode(text, /*add_bos=*/true);
    return {ids.begin(), ids.end()};
  }

 private:
  // The job's task params with a named preset's settings underneath them.
  TaskContext with_preset(const TaskContext& job) const {
    if (!job.given("preset")) return job;  // only wikitext declares it
    const std::string preset = job.param_or<std::string>("preset", "");
    if (preset != "buzz_table3" || name_ != "wikitext")
      throw std::invalid_argument(name_ + ": unknown task_params.preset '" + preset + "'" +
                                  (name_ == "wikitext" ? " (known: buzz_table3)" : " (this task has none)"));
    if (job.protocol != "stream" || job.block != 1)
      throw std::invalid_argument(name_ + ": preset buzz_table3 streams token by token: the job needs protocol \"stream\" "
                                  "and block 1, got " + job.protocol + " with block " + std::to_string(job.block));
    if (policies::Budget::parse(job.budget).is_relative())
      throw std::invalid_argument(name_ + ": preset buzz_table3 uses an absolute cache size (\"50\", \"100\" or \"full\"), "
                                  "got " + job.budget);
    TaskContext ctx = job;
    nlohmann::json params = {{"mode", "rows"}, {"rows", 40}};
    for (auto it = job.params.begin(); it != job.params.end(); ++it) params[it.key()] = it.value();
    ctx.params = params;
    return ctx;
  }

  Example example(const TaskContext& ctx, const std::string& id, int64_t tokens, const Scored& s) const {
    Example e{id, tokens, "", {}, summarise(s.nll)};
    e.metrics["max_cache_len"] = s.max_cache_len;
    if (ctx.param<bool>("curve")) e.fields["nll_curve"] = s.nll;
    return e;
  }

  // Perplexity is token-weighted over every scored token (`all`), not a mean of the examples'.
  TaskOutput finish(ExampleLoop& loop, const std::vector<double>& all) const {
    nlohmann::json metrics = summarise(all);
    int64_t most = 0;
    for (const auto& e : loop.examples()) most = std::max<int64_t>(most, e["metrics"]["max_cache_len"]);
    metrics["max_cache_len"] = most;
    return loop.finish(metrics);
  }

  TaskOutput run_documents(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_length = ctx.param_or<int64_t>("max_length", ctx.max_context());
    std::vector<double> all;
    ExampleLoop loop(ctx, static_cast<int64_t>(docs.size()));
    for (int64_t i = 0; i < loop.size(); ++i) {
      std::vector<int64_t> tokens = encode(ctx, docs[i].text);
      if (static_cast<int64_t>(tokens.size()) > max_length) tokens.resize(max_length);
      if (tokens.size() < 2) continue;  // nothing to score: the limit still counts the document
      Scored s = score_stream(ctx, tokens, ctx.session_options());
      all.insert(all.end(), s.nll.begin(), s.nll.end());
      loop.record(example(ctx, docs[i].id, static_cast<int64_t>(tokens.size()), s));
    }
    return finish(loop, all);
  }

  // Documents joined into one stream (one BOS), fed through the job's protocol.
  TaskOutput run_stream(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_tokens = ctx.param<int64_t>("max_tokens");
    const bool per_document = ctx.param<bool>("per_document");
    std::vector<double> all;
    auto score_one = [&](const std::string& id, std::vector<int64_t> tokens) {
      if (max_tokens > 0 && static_cast<int64_t>(tokens.size()) > max_tokens) tokens.resize(max_tokens);
      Scored s = score_stream(ctx, tokens, ctx.session_options());
      all.insert(all.end(), s.nll.begin(), s.nll.end());
      return example(ctx, id, static_cast<int64_t>(tokens.size()), s);
    };
    // The limit counts documents: scored one by one, or joined into one stream.
    const int64_t n = ExampleLoop(ctx, static_cast<int64_t>(docs.size())).size();
    ExampleLoop loop(ctx, per_document ? n : 1);
    if (per_document) {
      for (int64_t i = 0; i < n; ++i) loop.record(score_one(docs[i].id, encode(ctx, docs[i].text)));
    } else {
      std::string joined;
      for (int64_t i = 0; i < n; ++i) joined += (i ? "\n" : "") + docs[i].text;
      loop.record(score_one(name_ + "-stream", encode(ctx, joined)));
    }
    return finish(loop, all);
  }

  // BUZZ eval_long_ppl.py: for each row, encodings = tokenizer(text) (BOS + tokens); for idx in
  // range(seq_len - 1): feed token idx, score token idx + 1; past_key_values carried across rows.
  // All rows are therefore one input stream (each row minus its last token) through one cache.
  TaskOutput run_rows(const TaskContext& ctx) const {
    if (ctx.protocol != "stream" || ctx.block != 1)
      throw std::invalid_argument(name_ + ": mode rows feeds one token at a time: the job needs protocol \"stream\" and block 1, got " +
                                  ctx.protocol + " with block " + std::to_string(ctx.block));
    const int64_t max_rows = ctx.param<int64_t>("rows");
    const int64_t max_tokens = ctx.param<int64_t>("max_tokens");
    const std::vector<std::string> rows = perplexity_data::read_wikitext_rows(data_path(ctx));
    const size_t n = max_rows > 0 ? std::min<size_t>(static_cast<size_t>(max_rows), rows.size()) : rows.size();
    std::vector<int64_t> inputs, targets;
    int64_t scored_rows = 0;
    for (size_t r = 0; r < n; ++r) {
      const std::vector<int64_t> ids = encode(ctx, rows[r]);
      if (ids.size() >= 2) ++scored_rows;
      for (size_t idx = 0; idx + 1 < ids.size(); ++idx) {
        if (max_tokens > 0 && static_cast<int64_t>(targets.size()) >= max_tokens) break;
        inputs.push_back(ids[idx]);
        targets.push_back(ids[idx + 1]);
      }
    }
    if (targets.empty()) throw std::invalid_argument(name_ + ": the first " + std::to_string(n) + " rows hold no token to score");
    Scored s = score_inputs(ctx, inputs, targets);
    Example e = example(ctx, name_ + "-rows", static_cast<int64_t>(inputs.size()), s);
    e.metrics["rows"] = static_cast<int64_t>(n);
    e.metrics["scored_rows"] = scored_rows;
    ExampleLoop loop(ctx, 1);  // the rows are one stream through one cache (the limit does not cut it: rows does)
    loop.record(std::move(e));
    TaskOutput out = finish(loop, s.nll);
    out.metrics["rows"] = static_cast<int64_t>(n);
    return out;
  }

  // HF's recipe: windows of max_length, each new window scoring only the tokens the previous did not.
  TaskOutput run_sliding(const TaskContext& ctx, const std::vector<Document>& docs) const {
    const int64_t max_length = ctx.param_or<int64_t>("max_length", ctx.max_context());
    const int64_t stride = ctx.param_or<int64_t>("stride", max_length / 2);
    const int64_t max_tokens = ctx.param<int64_t>("max_tokens");
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
    Example e = example(ctx, name_ + "-sliding", total, whole);
    e.metrics["windows"] = windows;
    ExampleLoop loop(ctx, 1);  // one stream (the limit counts windows)
    loop.record(std::move(e));
    return finish(loop, all);
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
    for (const std::string& story : datasets::read_tinystories(data_path(ctx)))
      docs.push_back({"story-" + std::to_string(docs.size()), story});
    return docs;
  }
};

// PG19: books from a folder, a JSONL export or one text file; the Cascade subset by default for a
// collection of books (each book's length counted with BOS, as tokenizer(t) in the reference).
class Pg19Task : public PerplexityTask {
 public:
  Pg19Task()
      : PerplexityTask("pg19", "stream", "pg19/10146.body_between_gutenberg_markers.txt",
                       "deepmind/pg19 (test split: test/<id>.txt) or emozilla/pg19-test exported as JSONL (text)") {}

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    const std::string path = data_path(ctx);
    if (!std::filesystem::is_directory(path)) return {path};
    std::vector<std::string> files;  // a folder of books: every book enters the checksum
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
  }

 protected:
  std::vector<Document> documents(const TaskContext& ctx) const override {
    const std::string path = data_path(ctx);
    std::vector<perplexity_data::Text> books = perplexity_data::read_books(path);
    const bool collection = std::filesystem::is_directory(path) || books.size() > 1;
    const std::string rule = ctx.param_or<std::string>("books", collection ? "cascade" : "all");  // declared choices
    std::vector<Document> docs;
    if (rule == "all") {
      for (auto& b : books) docs.push_back({b.id, std::move(b.text)});
      return docs;
    }
    std::vector<int64_t> lengths;
    for (const auto& b : books) lengths.push_back(static_cast<int64_t>(ctx.tokenizer->encode(b.text, true).size()));
    try {
      for (size_t i : perplexity_data::cascade_pg19_selection(lengths)) docs.push_back({books[i].id, books[i].text});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("pg19: " + path + ": " + e.what());
    }
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
                             [](const std::string&) { return std::make_unique<Pg19Task>(); }});

}  // namespace
}  // namespace kvbench::tasks
