// Reasoning benchmarks with a long generated trace, each set and its reference's protocol as data:
// gsm8k, math500, aime24 on R-KV's (Zefan-Cai/R-KV @ d15c9767 run_math.py: one template, no chat
// template, BOS, greedy up to max_length tokens in all, EOS), aime25 on kvpress's sampled AIME25
// run, gpqa_diamond on lm-evaluation-harness's gpqa_diamond_cot_zeroshot (its four choices shuffled
// by Python's random seeded 0, as the harness's process_docs). The answer is graded by a named grader (metrics/answer_graders.hpp). Per example: the
// extracted answer, correctness, the tokens generated, the most one head's cache held and the
// effective compression (that over the tokens fed); with n samples (seeds seed .. seed + n - 1)
// the example's pass@1 is their mean correctness.
#include <algorithm>
#include <filesystem>
#include <map>

#include "datasets/csv_reader.hpp"
#include "datasets/data_root.hpp"
#include "datasets/jsonl_reader.hpp"
#include "datasets/python_format.hpp"
#include "datasets/python_random.hpp"
#include "metrics/answer_graders.hpp"
#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

// How the reference runs a set: its prompt, chat template, decoding and length limit.
struct ReasoningProtocol {
  std::string source;
  std::string prompt_template;  // Python str.format with {question}
  std::string chat_template;    // none, or "model": the model's own (add_generation_prompt)
  models::SamplingSettings sampling;
  int64_t max_new_tokens = 0;   // a limit on generated tokens (0: max_length limits prompt + generated)
  std::vector<std::string> stop_strings = {};
};

// R-KV (run_math.py): its prompt_template (str.format: "{{}}" is "{}"), no chat template, BOS,
// greedy (do_sample=False), max_length tokens in all.
const ReasoningProtocol& rkv_protocol() {
  static const ReasoningProtocol p = {
      "Zefan-Cai/R-KV @ d15c9767 run_math.py",
      "You are given a math problem.\n\nProblem: {question}\n\n You need to solve the problem step by step. First, you need to "
      "provide the chain-of-thought, then provide the final answer.\n\n Provide the final answer in the format: Final answer:  "
      "\\boxed{{}}",
      "none", models::SamplingSettings{}, 0};
  return p;
}

// kvpress's AIME25 run with sampling (kvzap/evaluate_aime.py @ 8bb29b9c): the question alone as
// one user message of the model's chat template, Qwen3's generation config (temperature 0.6,
// top_p 0.95, top_k 20, min_p 0), 32,000 new tokens.
const ReasoningProtocol& kvpress_aime_protocol() {
  static const ReasoningProtocol p = [] {
    ReasoningProtocol q{"NVIDIA/kvpress @ 8bb29b9c kvzap/evaluate_aime.py", "{question}", "model", {}, 32000};
    q.sampling.temperature = 0.6;
    q.sampling.top_p = 0.95;
    q.sampling.top_k = 20;
    return q;
  }();
  return p;
}

// lm-evaluation-harness's gpqa cot_zeroshot (lm_eval/tasks/gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml @
// 4e7e0d47): doc_to_text, no chat template, the tokenizer's BOS, greedy, until "</s>" (and EOS),
// the harness's max_gen_toks 256.
const ReasoningProtocol& lm_eval_gpqa_protocol() {
  static const ReasoningProtocol p = {
      "EleutherAI/lm-evaluation-harness @ 4e7e0d47 lm_eval/tasks/gpqa/cot_zeroshot",
      "What is the correct answer to this question:{question}\nChoices:\n(A) {choice1}\n(B) {choice2}\n(C) {choice3}\n(D) "
      "{choice4}\nLet's think step by step: ",
      "none", models::SamplingSettings{}, 256, {"</s>"}};
  return p;
}

// One benchmark as data: its file, fields, gold answer, protocol and limits.
struct ReasoningSet {
  std::string name;
  std::string summary;
  std::string data_file;       // under the bundled data/ (data/reasoning/PROVENANCE.md)
  std::string source;          // where the official file comes from
  std::string question_field;  // R-KV's dataset2key
  std::string answer_field;
  bool gold_after_hashes;      // GSM8K: the gold answer is what follows "####" in the worked solution
  int64_t max_length;          // R-KV's dataset2max_length: prompt + generated tokens (0: none)
  std::string grader;
  const ReasoningProtocol& protocol;
  // Multiple choice (GPQA): the correct answer's field and the incorrect ones'; the record's
  // choices are shuffled and the gold is the correct one's letter "(A)".."(D)".
  std::vector<std::string> incorrect_fields = {};
  std::string solution_field = {};  // the worked solution a grader that reads_solution grades against (MATH)
};

const std::vector<ReasoningSet>& reasoning_sets() {
  static const std::vector<ReasoningSet> sets = {
      {"gsm8k", "GSM8K test (1,319 grade-school problems), R-KV's prompt, greedy, the '####' answer",
       "reasoning/gsm8k/test.jsonl", "openai/grade-school-math grade_school_math/data/test.jsonl", "question", "answer", true, 8192,
       "qwen_math.answer", rkv_protocol()},
      {"math500", "MATH-500 (HuggingFaceH4/MATH-500), R-KV's prompt, greedy, the last \\boxed{} answer",
       "reasoning/math500/test.jsonl", "Zefan-Cai/R-KV data/math.jsonl (= HuggingFaceH4/MATH-500 test.jsonl)", "problem", "answer", false,
       8192, "qwen_math.solution", rkv_protocol(), {}, "solution"},
      {"aime24", "AIME 2024 (30 problems), R-KV's prompt, greedy, the last \\boxed{} answer", "reasoning/aime24/test.jsonl",
       "Zefan-Cai/R-KV data/aime24.jsonl", "question", "answer", false, 16384, "qwen_math.answer", rkv_protocol()},
      {"aime25", "AIME 2025 (30 problems), kvpress's sampled run (chat template, T 0.6, top-p 0.95, top-k 20), its boxed{ grading",
       "reasoning/aime25/test.jsonl",
       "Hugging Face dataset alessiodevoto/aime25 (split test: question, answer) exported as JSONL", "question", "answer", false, 0,
       "kvpress.boxed", kvpress_aime_protocol()},
      {"gpqa_diamond", "GPQA Diamond (198 questions), lm-eval's zero-shot chain of thought, greedy, the last '(X)' letter",
       "reasoning/gpqa/gpqa_diamond.csv", "Hugging Face dataset Idavidrein/gpqa (gated), file gpqa_diamond.csv", "Question",
       "Correct Answer", false, 0, "gpqa.flexible", lm_eval_gpqa_protocol(),
       {"Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"}},
  };
  return sets;
}

std::vector<std::string> grader_names() {
  std::vector<std::string> names;
  for (const auto& g : metrics::answer_graders()) names.push_back(g.name);
  return names;
}

// The dataset's gold answer as the grader reads it.
std::string gold_answer(const ReasoningSet& set, const datasets::JsonRecord& record) {
  const nlohmann::json& value = record.field(set.answer_field);
  if (!value.is_string() && !value.is_number_integer())
    throw record.field_error(set.answer_field, "expected a string or an integer, got " + datasets::describe_json(value));
  std::string gold = value.is_string() ? value.get<std::string>() : value.dump();
  if (set.gold_after_hashes) {
    const size_t hashes = gold.rfind("####");
    if (hashes == std::string::npos) throw record.field_error(set.answer_field, "has no '####' final answer");
    gold = metrics::python_strip(gold.substr(hashes + 4));
  }
  return gold;
}

// The record's own id (MATH-500's unique_id, AIME's id, GPQA's Record ID), else its line.
std::string example_id(const datasets::JsonRecord& record) {
  for (const char* key : {"unique_id", "id", "Record ID"})
    if (record.has(key)) return record.field(key).is_string() ? record.string_field(key) : record.field(key).dump();
  return std::to_string(record.line);
}

// A CSV file with a header row as records: each row an object of the header's names.
std::vector<datasets::JsonRecord> read_csv_records(const std::string& path) {
  std::vector<datasets::JsonRecord> records;
  std::vector<std::string> header;
  datasets::for_each_csv(path, [&](const datasets::CsvRow& row) {
    if (header.empty()) {
      header = row.fields;
      return true;
    }
    row.expect_width(header.size());
    datasets::JsonRecord record{row.file, row.line, nlohmann::json::object()};
    for (size_t i = 0; i < header.size(); ++i) record.value[header[i]] = row.fields[i];
    records.push_back(std::move(record));
    return true;
  });
  return records;
}

// lm-eval gpqa utils.preprocess: an absent (empty) cell is " "; else stripped, " [title]" becomes
// ". ", then one pass of "  " -> " " (Python's str.replace, left to right, not repeated).
std::string gpqa_preprocess(const std::string& cell) {
  if (cell.empty()) return " ";
  return metrics::python_replace(metrics::python_replace(metrics::python_strip(cell), " [title]", ". "), "  ", " ");
}

// One record as the prompt's fields, the gold answer and (multiple choice) the choices.
struct Problem {
  datasets::JsonRecord record;
  std::map<std::string, std::string> fields;
  std::string gold;
  std::string solution;  // the set's solution_field, when it has one
  std::vector<std::string> choices;
};

// The set's problems in file order, the first `limit` (0: all). Multiple-choice sets shuffle every
// record's choices in file order from one generator seeded 0 (lm-eval seeds random with 0 and
// process_docs maps the whole split), so a record's choice order does not depend on the limit.
std::vector<Problem> read_problems(const ReasoningSet& set, const std::string& path, int64_t limit) {
  const bool multiple_choice = !set.incorrect_fields.empty();
  const bool csv = path.size() >= 4 && (path.rfind(".csv") == path.size() - 4 || path.rfind(".csv.gz") == path.size() - 7);
  std::vector<datasets::JsonRecord> records = csv ? read_csv_records(path) : datasets::read_jsonl(path, multiple_choice ? 0 : limit);
  datasets::PythonRandom rng(0);
  std::vector<Problem> problems;
  for (datasets::JsonRecord& record : records) {
    Problem p{std::move(record), {}, {}, {}, {}};
    if (!set.solution_field.empty()) p.solution = p.record.string_field(set.solution_field);
    p.fields["question"] = p.record.string_field(set.question_field);
    if (multiple_choice) {
      for (const std::string& field : set.incorrect_fields) p.choices.push_back(gpqa_preprocess(p.record.string_field(field)));
      const std::string correct = gpqa_preprocess(p.record.string_field(set.answer_field));
      p.choices.push_back(correct);
      rng.shuffle(p.choices);
      const size_t index = std::find(p.choices.begin(), p.choices.end(), correct) - p.choices.begin();  // list.index: the first
      p.gold = std::string("(") + static_cast<char>('A' + index) + ")";
      for (size_t i = 0; i < p.choices.size(); ++i) p.fields["choice" + std::to_string(i + 1)] = p.choices[i];
    } else {
      p.gold = gold_answer(set, p.record);
    }
    problems.push_back(std::move(p));
  }
  if (limit > 0 && static_cast<int64_t>(problems.size()) > limit) problems.resize(limit);
  return problems;
}

class ReasoningTask : public Task {
 public:
  explicit ReasoningTask(ReasoningSet set) : set_(std::move(set)) {}

  nlohmann::json settings() const override {
    const ReasoningProtocol& r = set_.protocol;
    return {{"protocol", "generate-and-grade; compression while generating under the decode protocol"},
            {"source", r.source},
            {"data", set_.data_file + " (" + set_.source + ")"},
            {"prompt_template", r.prompt_template},
            {"chat_template", r.chat_template},
            {"decoding", r.sampling.to_json()},
            {"length", r.max_new_tokens ? std::to_string(r.max_new_tokens) + " new tokens, within the model's context"
                                        : "max_length tokens in all (prompt included), until EOS"},
            {"answer", "the grader's extraction (default " + set_.grader + ")"},
            {"metric", "accuracy: the mean over examples of pass@1 (the mean correctness over n samples)"}};
  }

  params::Params parameters() const override {
    using params::Param;
    params::Params p = {
        Param::choice("grader", set_.grader, grader_names(), "the answer grader (kvbench score lists the same)"),
        Param::integer("n", 1, "samples per problem (seeds seed .. seed + n - 1; pass@1 = their mean correctness)", 1),
        Param::integer("max_length", nullptr, "prompt + generated tokens (default: R-KV's dataset2max_length, capped at the model's context)", 2),
        Param::integer("max_new_tokens", nullptr, "generated tokens at most (default: the reference's, else what max_length leaves)", 1),
        chat_template_param("the chat template around the prompt (R-KV: none, the tokenizer adds BOS; kvpress's AIME run: the model's own)",
                            set_.protocol.chat_template),
        Param::text("data_file", nullptr, "the JSONL (or the official CSV) file: absolute or relative to the data root (default: the bundled copy)")};
    for (params::Param& s : sampling_params(set_.protocol.sampling)) p.push_back(std::move(s));
    p.push_back(record_prompts_param());
    return p;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    if (ctx.given("data_file")) return {datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", ""), set_.source)};
    const std::string bundled = datasets::bundled_data_dir() + "/" + set_.data_file;
    if (!std::filesystem::exists(bundled))
      throw std::invalid_argument(set_.name + ": no bundled copy of its data (" + bundled + "); official source: " + set_.source +
                                  "; give the file as task_params.data_file");
    return {bundled};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const metrics::AnswerGrader& grader = metrics::answer_grader(ctx.param<std::string>("grader"));
    if (grader.reads_choices && set_.incorrect_fields.empty())
      throw std::invalid_argument(set_.name + ": grader " + grader.name + " reads multiple-choice options, which " + set_.name + " has none of");
    if (grader.reads_solution && set_.solution_field.empty())
      throw std::invalid_argument(set_.name + ": grader " + grader.name + " reads a worked solution, which " + set_.name + " has none of");
    const std::string chat = ctx.param<std::string>("chat_template");
    const int64_t n = ctx.param<int64_t>("n");
    const int64_t max_length = ctx.param_or<int64_t>("max_length", set_.max_length ? std::min(set_.max_length, ctx.max_context()) : ctx.max_context());
    const int64_t max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", set_.protocol.max_new_tokens ? set_.protocol.max_new_tokens : max_length);
    DecodingSettings dec;
    dec.sampling = sampling_settings(ctx);
    dec.stop_strings = set_.protocol.stop_strings;
    if (n > 1 && dec.sampling.greedy()) throw std::invalid_argument(set_.name + ": n > 1 samples need a temperature > 0 (greedy decoding gives one answer)");

    const std::vector<Problem> problems = read_problems(set_, data_files(ctx).front(), ctx.limit);
    ExampleLoop loop(ctx, static_cast<int64_t>(problems.size()));
    for (const Problem& problem : problems) {
      const datasets::JsonRecord& record = problem.record;
      const std::string& gold = problem.gold;
      const std::string prompt = datasets::python_format(set_.protocol.prompt_template, problem.fields);
      const std::string fed = apply_chat_template(chat, prompt, *ctx.tokenizer);
      const std::vector<int64_t> ids = encode_prompt(ctx, fed, encode_adds_special_tokens(chat, fed, *ctx.tokenizer));
      if (static_cast<int64_t>(ids.size()) >= max_length)
        throw record.error("the prompt's " + std::to_string(ids.size()) + " tokens leave nothing of max_length " + std::to_string(max_length));
      dec.max_new_tokens = std::min(max_new_tokens, max_length - static_cast<int64_t>(ids.size()));
      nlohmann::json samples = nlohmann::json::array();
      double correct = 0;
      std::string first_text;
      std::optional<std::string> gold_read;
      const std::string& graded_gold = grader.reads_solution ? problem.solution : gold;
      for (int64_t s = 0; s < n; ++s) {
        TaskContext sample_ctx = ctx;
        sample_ctx.seed = ctx.seed + static_cast<uint64_t>(s);
        const Completion out = complete(sample_ctx, ids, dec);
        const metrics::AnswerGrade grade = grader.grade(out.text, graded_gold, problem.choices);
        gold_read = grade.gold_read;
        const int64_t generated = static_cast<int64_t>(out.tokens.size());
        const int64_t fed_tokens = out.prompt_tokens + std::max<int64_t>(generated - 1, 0);  // the last token is never fed
        correct += grade.correct ? 1 : 0;
        if (s == 0) first_text = out.text;
        samples.push_back({{"extracted", grade.extracted ? nlohmann::json(*grade.extracted) : nlohmann::json(nullptr)},
                           {"correct", grade.correct},
                           {"generated_tokens", generated},
                           {"cache_peak", out.cache_peak},
                           {"effective_compression", static_cast<double>(out.cache_peak) / static_cast<double>(fed_tokens)}});
        if (grade.outside_subset) samples.back()["graded_outside_subset"] = true;  // docs/tasks-reasoning.md
        if (n > 1) samples.back()["text"] = out.text;
      }
      nlohmann::json fields = n == 1 ? samples.front() : nlohmann::json{{"samples", samples}};
      fields["gold"] = gold;
      if (gold_read) fields["gold_read"] = *gold_read;
      const std::string id = example_id(record);
      loop.record({id, static_cast<int64_t>(ids.size()), first_text, {gold}, {{"pass@1", correct / static_cast<double>(n)}}, fields, fed});
    }
    return loop.finish({{"accuracy", loop.mean("pass@1")}, {"examples", loop.recorded()}, {"grader", grader.name}},
                       {{"max_length", max_length}, {"max_new_tokens", max_new_tokens}, {"chat_template", chat}, {"n", n}, {"sampling", dec.sampling.to_json()}});
  }

 private:
  ReasoningSet set_;
};

const bool registered = [] {
  for (const ReasoningSet& set : reasoning_sets())
    TaskRegistration({set.name, set.summary, {}, [set](const std::string&) { return std::make_unique<ReasoningTask>(set); }});
  return true;
}();

}  // namespace
}  // namespace kvbench::tasks
