#pragma once
// Lost-in-the-middle multi-document QA data (nelson-liu/lost-in-the-middle): the example files,
// the orderings of make_qa_data_from_retrieval_results.py, and prompting.py's get_qa_prompt.
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::tasks {

struct QaDocument {
  std::string title;
  std::string text;
  bool isgold = false;
  bool hasanswer = false;
};

struct QaExample {
  std::string where;  // "<file>:<line>"
  std::string question;
  std::vector<std::string> answers;
  std::vector<QaDocument> documents;  // in prompt order
  // nq_annotated_gold {title, chunked_long_answer}: the gold passage of retrieval-results files,
  // whose ctxs hold no isgold document. Empty title and text when absent.
  QaDocument annotated_gold;
};

// Reads up to `limit` examples (0 = all) of a .jsonl or .jsonl.gz file in the qa_data format.
// Malformed lines throw std::runtime_error "<file>:<line>: field '<name>': ...".
std::vector<QaExample> read_qa_examples(const std::string& path, int64_t limit);

// Where the (documents, gold_position) examples come from.
struct QaDataSource {
  std::string path;
  bool build = false;  // true: reorder `path`'s documents with arrange_documents
};

// The official file qa_data/nq-open-{N}_total_documents_gold_at_{g}.jsonl.gz, else the staged
// derived_from_ViktorTorp copy, else (build) a file holding the gold passage and at least N-1
// distractors in retrieval order: the official 20/30-document files (gold_at_0), the staged
// 20-document file, or the Contriever retrieval results. documents = 1 is the oracle file.
// None present: std::runtime_error naming the missing file and the official source.
QaDataSource locate_qa_data(const std::string& data_root, int64_t documents, int64_t gold_position);

// make_qa_data_from_retrieval_results.py: the first N-1 documents that are not gold and have no
// answer (hasanswer false; a qa_data file's non-gold documents already are), in their order, with
// the gold passage inserted at gold_position. Throws naming example.where when there are too few.
QaExample arrange_documents(const QaExample& example, int64_t documents, int64_t gold_position);

// get_qa_prompt: template.rstrip("\n").format(question=..., search_results="\n".join(
// f"Document [{i+1}](Title: {title}) {text}")).
std::string qa_prompt(const std::string& prompt_template, const std::string& question,
                      const std::vector<QaDocument>& documents);

// BUZZ (buzz-llm run_ten_doc_qa_em.py transform_to_prompt): the documents as "{title}\n{text}\n"
// concatenated, in "Documents are following: {documents}. Based on the provided documents, give an
// brief answer to this question: {question}. The answer has to directly answer the question and be
// BRIEF. " (the reference's wording, trailing space included).
std::string buzz_qa_prompt(const std::string& question, const std::vector<QaDocument>& documents);

// BUZZ's calc_em_score: 1 if response.strip().lower() == answer.strip().lower() (ASCII), else 0.
double buzz_exact_match(const std::string& response, const std::string& answer);

// The official download location, for error messages.
inline const char* kLitmSource = "nelson-liu/lost-in-the-middle (qa_data/, and "
                                 "https://nlp.stanford.edu/data/nfliu/lost-in-the-middle/"
                                 "nq-open-contriever-msmarco-retrieved-documents.jsonl.gz)";

}  // namespace kvbench::tasks
