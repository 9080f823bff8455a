#include "policies/kvpress/duo_on_the_fly.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "datasets/csv_reader.hpp"
#include "datasets/data_error.hpp"
#include "datasets/python_random.hpp"

namespace kvbench::policies::kvpress {

std::vector<std::string> duo_sampled_chapters(const std::string& path, int64_t num_samples) {
  const bool csv = path.size() >= 4 && (path.rfind(".csv") == path.size() - 4 || path.rfind(".csv.gz") == path.size() - 7);
  int64_t rows = 0, column = -1;
  std::vector<std::string> header;
  if (csv) {
    datasets::for_each_csv(path, [&](const datasets::CsvRow& row) {
      if (column < 0) {
        const auto it = std::find(row.fields.begin(), row.fields.end(), "chapter");
        if (it == row.fields.end()) throw row.error("the header has no 'chapter' column (BookSum's train split has one)");
        column = it - row.fields.begin();
        header = row.fields;
        return true;
      }
      ++rows;
      return true;
    });
  } else {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument("DuoAttention on the fly: cannot read the corpus " + path);
    for (std::string line; std::getline(in, line);) rows += !line.empty();
  }
  if (rows < num_samples)
    throw datasets::DataError(path, 0, "has " + std::to_string(rows) + " chapters; num_samples is " + std::to_string(num_samples));
  const std::vector<int64_t> picked = datasets::NumpyRandomState(42).choice_without_replacement(rows, num_samples);
  std::map<int64_t, std::string> texts;
  for (int64_t r : picked) texts[r];
  if (csv) {
    int64_t data_row = -1;  // the header is row -1
    datasets::for_each_csv(path, [&](const datasets::CsvRow& row) {
      const auto it = texts.find(data_row++);
      if (it != texts.end()) {
        row.expect_width(header.size());
        it->second = row.fields[column];
      }
      return true;
    });
  } else {
    std::ifstream in(path);
    int64_t record = 0, line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (line.empty()) continue;
      const auto it = texts.find(record++);
      if (it == texts.end()) continue;
      nlohmann::json value;
      try {
        value = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        throw datasets::DataError(path, line_no, std::string("not JSON: ") + e.what());
      }
      if (!value.is_object() || !value.contains("chapter") || !value["chapter"].is_string())
        throw datasets::DataError(path, line_no, "expected an object with a string field 'chapter'");
      it->second = value["chapter"].get<std::string>();
    }
  }
  std::vector<std::string> out;
  for (int64_t r : picked) out.push_back(texts.at(r));
  return out;
}

torch::Tensor duo_layer_scores(const torch::Tensor& projected_queries, const torch::Tensor& projected_keys,
                               const std::function<torch::Tensor(const torch::Tensor&, int64_t)>& rotate, int64_t q_len) {
  const int64_t heads = projected_queries.size(0), kv = projected_keys.size(0), d = projected_queries.size(2);
  const torch::Tensor q = projected_queries.mean(1, /*keepdim=*/true).expand({heads, q_len, d}).contiguous();
  const torch::Tensor k = projected_keys.mean(1, /*keepdim=*/true).expand({kv, q_len, d}).contiguous();
  const torch::Tensor qr = rotate(q, 0).to(torch::kFloat32), kr = rotate(k, 0).to(torch::kFloat32);
  const torch::Tensor keys = kr.repeat_interleave(heads / kv, 0);  // [heads, q_len, d]
  const torch::Tensor weights = torch::matmul(qr.narrow(1, q_len - 1, 1), keys.transpose(1, 2))
                                    .div(std::sqrt(static_cast<double>(d)))
                                    .softmax(-1, torch::kFloat32)
                                    .squeeze(1);  // [heads, q_len]
  return weights.cumsum(1).mean(1).view({kv, heads / kv}).mean(1);
}

}  // namespace kvbench::policies::kvpress
