#include "tasks/multidoc_qa_data.hpp"

#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "datasets/jsonl_reader.hpp"

namespace kvbench::tasks {
namespace {

// Nested fields (ctxs[i].title) are checked here; messages follow JsonRecord's
// "<file>:<line>: field '<name>': ...".
std::string nested_string(const datasets::JsonRecord& r, const nlohmann::json& obj, const std::string& key,
                          const std::string& shown) {
  if (!obj.contains(key)) throw r.field_error(shown, "missing");
  if (!obj.at(key).is_string()) throw r.field_error(shown, "expected a string, got " + datasets::describe_json(obj.at(key)));
  return obj.at(key).get<std::string>();
}

bool nested_bool(const datasets::JsonRecord& r, const nlohmann::json& obj, const std::string& key, const std::string& shown) {
  if (!obj.contains(key) || obj.at(key).is_null()) return false;
  if (!obj.at(key).is_boolean()) throw r.field_error(shown, "expected a boolean, got " + datasets::describe_json(obj.at(key)));
  return obj.at(key).get<bool>();
}

QaExample parse_example(const datasets::JsonRecord& r) {
  QaExample e;
  e.where = r.file + ":" + std::to_string(r.line);
  e.question = r.string_field("question");
  if (e.question.empty()) throw r.field_error("question", "empty");
  e.answers = r.string_list_field("answers");
  const nlohmann::json& ctxs = r.field("ctxs");
  if (!ctxs.is_array()) throw r.field_error("ctxs", "expected a list of documents, got " + datasets::describe_json(ctxs));
  for (size_t i = 0; i < ctxs.size(); ++i) {
    const std::string name = "ctxs[" + std::to_string(i) + "]";
    if (!ctxs[i].is_object()) throw r.field_error(name, "expected an object, got " + datasets::describe_json(ctxs[i]));
    QaDocument d;
    d.title = nested_string(r, ctxs[i], "title", name + ".title");
    d.text = nested_string(r, ctxs[i], "text", name + ".text");
    d.isgold = nested_bool(r, ctxs[i], "isgold", name + ".isgold");
    d.hasanswer = nested_bool(r, ctxs[i], "hasanswer", name + ".hasanswer");
    e.documents.push_back(std::move(d));
  }
  if (r.has("nq_annotated_gold") && r.value.at("nq_annotated_gold").is_object()) {
    const auto& g = r.value.at("nq_annotated_gold");
    if (g.contains("title") && g.contains("chunked_long_answer")) {
      e.annotated_gold.title = nested_string(r, g, "title", "nq_annotated_gold.title");
      e.annotated_gold.text = nested_string(r, g, "chunked_long_answer", "nq_annotated_gold.chunked_long_answer");
      e.annotated_gold.isgold = e.annotated_gold.hasanswer = true;
    }
  }
  return e;
}

bool exists(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

std::vector<QaExample> read_qa_examples(const std::string& path, int64_t limit) {
  std::vector<QaExample> out;
  for (const datasets::JsonRecord& r : datasets::read_jsonl(path, limit)) out.push_back(parse_example(r));
  return out;
}

QaDataSource locate_qa_data(const std::string& root, int64_t documents, int64_t gold_position) {
  if (documents < 1) throw std::invalid_argument("multidoc_qa: task_params.documents must be >= 1");
  if (gold_position < 0 || gold_position >= documents)
    throw std::invalid_argument("multidoc_qa: task_params.gold_position must be in [0, documents), got " +
                                std::to_string(gold_position));
  const std::string base = root + "/multidoc_qa_litm/";
  if (documents == 1) {
    const std::string oracle = base + "qa_data/nq-open-oracle.jsonl.gz";
    if (!exists(oracle)) throw std::runtime_error(oracle + ": missing; official source: " + std::string(kLitmSource));
    return {oracle, false};
  }
  const std::string name = "nq-open-" + std::to_string(documents) + "_total_documents_gold_at_" + std::to_string(gold_position);
  const std::string official = base + "qa_data/" + name + ".jsonl.gz";
  for (const std::string& p : {official, base + "derived_from_ViktorTorp/" + name + ".first441.jsonl.gz",
                               base + "derived_from_ViktorTorp/" + name + ".first441.DERIVED.jsonl.gz"})
    if (exists(p)) return {p, false};
  // Files with the gold passage and enough distractors, in retrieval order.
  std::vector<std::pair<int64_t, std::string>> sources = {
      {20, base + "qa_data/nq-open-20_total_documents_gold_at_0.jsonl.gz"},
      {30, base + "qa_data/nq-open-30_total_documents_gold_at_0.jsonl.gz"},
      {20, base + "derived_from_ViktorTorp/nq-open-20_total_documents_gold_at_0.first441.jsonl.gz"},
      {1 << 30, base + "nq-open-contriever-msmarco-retrieved-documents.jsonl.gz"},
      {1 << 30, base + "qa_data/nq-open-contriever-msmarco-retrieved-documents.jsonl.gz"}};
  for (const auto& [n, p] : sources)
    if (n >= documents && exists(p)) return {p, true};
  throw std::runtime_error(official + ": missing, and no file with " + std::to_string(documents - 1) +
                           " distractors to build it from; official source: " + std::string(kLitmSource));
}

QaExample arrange_documents(const QaExample& example, int64_t documents, int64_t gold_position) {
  QaExample out = example;
  out.documents.clear();
  const QaDocument* gold = nullptr;
  for (const auto& d : example.documents) {
    if (d.isgold) {
      if (!gold) gold = &d;
    } else if (!d.hasanswer && static_cast<int64_t>(out.documents.size()) < documents - 1) {
      out.documents.push_back(d);
    }
  }
  if (!gold && !example.annotated_gold.title.empty()) gold = &example.annotated_gold;
  if (!gold) throw std::runtime_error(example.where + ": field 'ctxs': no gold document (isgold) and no nq_annotated_gold");
  if (static_cast<int64_t>(out.documents.size()) < documents - 1)
    throw std::runtime_error(example.where + ": field 'ctxs': only " + std::to_string(out.documents.size()) +
                             " distractors without the answer, " + std::to_string(documents - 1) + " needed");
  out.documents.insert(out.documents.begin() + gold_position, *gold);
  return out;
}

std::string qa_prompt(const std::string& prompt_template, const std::string& question, const std::vector<QaDocument>& documents) {
  if (question.empty()) throw std::invalid_argument("qa_prompt: empty question");
  if (documents.empty()) throw std::invalid_argument("qa_prompt: no documents");
  std::string tmpl = prompt_template;
  while (!tmpl.empty() && tmpl.back() == '\n') tmpl.pop_back();
  std::string results;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (i) results += "\n";
    results += "Document [" + std::to_string(i + 1) + "](Title: " + documents[i].title + ") " + documents[i].text;
  }
  // str.format with exactly the two fields; "{{"/"}}" would be escapes (qa.prompt has none).
  std::string out;
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl.compare(i, 2, "{{") == 0) { out += '{'; i += 2; continue; }
    if (tmpl.compare(i, 2, "}}") == 0) { out += '}'; i += 2; continue; }
    if (tmpl[i] == '{') {
      const size_t close = tmpl.find('}', i);
      const std::string key = close == std::string::npos ? "" : tmpl.substr(i + 1, close - i - 1);
      if (key == "question") out += question;
      else if (key == "search_results") out += results;
      else throw std::invalid_argument("qa prompt template: unknown field {" + key + "}");
      i = close + 1;
      continue;
    }
    out += tmpl[i++];
  }
  return out;
}

std::string buzz_qa_prompt(const std::string& question, const std::vector<QaDocument>& documents) {
  std::string joined;
  for (const auto& d : documents) joined += d.title + "\n" + d.text + "\n";
  return "Documents are following: " + joined + ". Based on the provided documents, give an brief answer to this question: " +
         question + ". The answer has to directly answer the question and be BRIEF. ";
}

double buzz_exact_match(const std::string& response, const std::string& answer) {
  auto normal = [](const std::string& s) {
    const char* ws = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(ws);
    std::string t = b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(ws) - b + 1);
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  return normal(response) == normal(answer) ? 1.0 : 0.0;
}

}  // namespace kvbench::tasks
