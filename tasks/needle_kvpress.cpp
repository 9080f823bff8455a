#include "tasks/needle_kvpress.hpp"

#include <algorithm>
#include <sstream>

#include "datasets/jsonl_reader.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/unicode.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tasks/python_str.hpp"
#include "tasks/task.hpp"

namespace kvbench::tasks::needle_kvpress {
namespace {

const char* kWrapper = "This is a very long story book: <book> {context} </book>.";
constexpr int64_t kOverhead = 150;  // utils.py: "account for system prompts and other overhead"

std::string cell_key(int64_t length, double depth) {
  std::ostringstream os;
  os << "len=" << length << ",depth=" << depth;
  return os.str();
}

}  // namespace

Row read_row(const std::string& path) {
  const std::vector<datasets::JsonRecord> records = datasets::read_jsonl(path, 1);
  if (records.empty()) throw std::invalid_argument(path + ": no row (kvpress's needle dataset has one)");
  const datasets::JsonRecord& r = records.front();
  return {r.string_field("context"), r.string_field("needle"), r.string_field("question"), r.string_field("answer_prefix"),
          r.int_field("max_new_tokens")};
}

EncodedRow encode_row(const models::Tokenizer& tok, const Row& row) { return {tok.encode(row.context, false), tok.encode(row.needle, false)}; }

std::string insert_needle(const models::Tokenizer& tok, const EncodedRow& row, int64_t max_context_length, double depth) {
  const int64_t n = static_cast<int64_t>(row.context.size());
  int64_t limit = max_context_length - static_cast<int64_t>(row.needle.size()) - kOverhead;
  limit = limit < 0 ? std::max<int64_t>(0, n + limit) : std::min(limit, n);
  std::vector<int> context(row.context.begin(), row.context.begin() + limit);
  const auto at = static_cast<std::ptrdiff_t>(static_cast<double>(context.size()) * depth / 100);
  context.insert(context.begin() + at, row.needle.begin(), row.needle.end());
  const std::string decoded = tok.decode(context, /*skip_special_tokens=*/true);
  return python_format(kWrapper, [&](const std::string&) { return decoded; });
}

TaskOutput run(const TaskContext& ctx, const std::string& data_file, const std::vector<int64_t>& lengths, const std::vector<double>& depths) {
  const Row row = read_row(data_file);
  const EncodedRow encoded = encode_row(*ctx.tokenizer, row);
  const std::string chat = ctx.param_or<std::string>("chat_template", ctx.tokenizer->config().chat_template ? kModelChatTemplate : "none");
  DecodingSettings dec;
  dec.max_new_tokens = ctx.given("max_new_tokens") ? ctx.param<int64_t>("max_new_tokens") : row.max_new_tokens;
  dec.stop_token_ids.assign(ctx.tokenizer->stop_ids().begin(), ctx.tokenizer->stop_ids().end());
  ExampleLoop loop(ctx, static_cast<int64_t>(lengths.size() * depths.size()));
  CompressOnce compress_once(ctx);
  const std::string delimiter = ctx.param<bool>("query_aware") ? ctx.query_delimiter() : "";
  nlohmann::json heatmap = nlohmann::json::object();
  int64_t unscored = 0;
  for (int64_t cell = 0; cell < loop.size(); ++cell) {
    const int64_t length = lengths[cell / depths.size()];
    const double depth = depths[cell % depths.size()];
    const std::string context = insert_needle(*ctx.tokenizer, encoded, length, depth);
    const KvpressParts parts = ctx.param<bool>("query_aware")
                                   ? kvpress_query_aware_parts(context, row.question, row.answer_prefix, chat, *ctx.tokenizer, delimiter)
                                   : kvpress_parts(context, row.question, row.answer_prefix, chat, *ctx.tokenizer);
    const KvpressIds ids = kvpress_ids(*ctx.tokenizer, parts, length);  // evaluate.py passes max_context_length on
    const Completion out = compress_once.answer(ids.context, ids.question, dec, ids.query_tokens);
    nlohmann::json scores = nlohmann::json::object();
    try {  // calculate_metrics: Rouge().get_scores(needle.strip(), predicted_answer.strip())[0]
      const metrics::PltrdyScores s = metrics::pltrdy_rouge(metrics::python_strip(row.needle), metrics::python_strip(out.text));
      for (const auto& [name, prf] : {std::pair{"rouge1", s.rouge1}, std::pair{"rouge2", s.rouge2}, std::pair{"rougeL", s.rougel}})
        scores[std::string(name) + "_f"] = prf.f, scores[std::string(name) + "_p"] = prf.p, scores[std::string(name) + "_r"] = prf.r;
    } catch (const metrics::PltrdyError& e) {  // an empty answer: kvpress's scorer raises ("Reference is empty.")
      for (const char* name : {"rouge1", "rouge2", "rougeL"})
        for (const char* part : {"_f", "_p", "_r"}) scores[std::string(name) + part] = nullptr;
      ++unscored;
    }
    const std::string key = cell_key(length, depth);
    heatmap[key] = scores["rougeL_f"];
    loop.record({key, out.prompt_tokens, out.text, {row.needle}, scores,
                 {{"max_context_length", length}, {"needle_depth", depth}, {"truncated", ids.truncated}},
                 ctx.tokenizer->decode(std::vector<int>(ids.context.begin(), ids.context.end())) + parts.question});
  }
  nlohmann::json metrics = loop.means();
  metrics["cells"] = loop.size();
  metrics["unscored"] = unscored;
  metrics["prefills"] = compress_once.prefills();
  metrics["heatmap"] = heatmap;
  return loop.finish(metrics, {{"pipeline", "kvpress"}, {"context_lengths", lengths}, {"depth_percents", depths},
                               {"max_new_tokens", dec.max_new_tokens}, {"chat_template", chat}});
}

}  // namespace kvbench::tasks::needle_kvpress
