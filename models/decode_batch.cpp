#include "models/decode_batch.hpp"

#include <algorithm>
#include <chrono>

#include "models/fixed_order_projection.hpp"
#include "models/job_clock.hpp"

namespace kvbench::models {
namespace {

thread_local DecodeBatch* current_batch = nullptr;

enum class BaseKind { kNone, kBias, kResidual };

BaseKind base_kind(const torch::Tensor& base) {
  if (!base.defined()) return BaseKind::kNone;
  return base.dim() == 1 ? BaseKind::kBias : BaseKind::kResidual;
}

}  // namespace

struct DecodeBatch::Row {
  Row(torch::Tensor x, torch::Tensor w, torch::Tensor base, int threads)
      : x(std::move(x)), w(std::move(w)), base(std::move(base)), threads(threads) {}
  torch::Tensor x, w, base;
  int threads = 1;
  torch::Tensor result;  // defined once computed
  int64_t batch_rows = 0;
  JobClock::duration share{0};  // this row's part of the batch's time, charged to its session

  // Rows that one fixed_order_project call can take together.
  bool joins(const Row& other) const {
    if (w.data_ptr() != other.w.data_ptr() || w.sizes() != other.w.sizes() || base_kind(base) != base_kind(other.base))
      return false;
    return base_kind(base) != BaseKind::kBias || base.data_ptr() == other.base.data_ptr();
  }
};

DecodeRows& decode_rows_of_this_thread() {
  thread_local DecodeRows rows;
  return rows;
}

DecodeBatch* DecodeBatch::current() { return current_batch; }
DecodeBatch::Scope::Scope(DecodeBatch* batch) { current_batch = batch; }
DecodeBatch::Scope::~Scope() { current_batch = nullptr; }

torch::Tensor DecodeBatch::project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& base, int threads) {
  Row mine(x, w, base, threads);
  pending_.push_back(&mine);
  ++in_projection_;
  struct Unlist {  // a throwing yield or projection must not leave this frame's row listed
    DecodeBatch& batch;
    Row* row;
    ~Unlist() {
      batch.pending_.erase(std::remove(batch.pending_.begin(), batch.pending_.end(), row), batch.pending_.end());
      --batch.in_projection_;
    }
  } unlist{*this, &mine};
  yield_();
  if (mine.result.defined()) JobClock::waited() -= mine.share;  // another session ran it: this row's share is this job's work
  else run_group(mine);
  if (mine.batch_rows > 1) ++decode_rows_of_this_thread().batched;
  return mine.result;
}

void DecodeBatch::run_group(Row& mine) {
  std::vector<Row*> group;
  for (Row* row : pending_)
    if (row->joins(mine)) group.push_back(row);
  std::vector<torch::Tensor> xs, residuals;
  for (const Row* row : group) {
    xs.push_back(row->x);
    if (base_kind(mine.base) == BaseKind::kResidual) residuals.push_back(row->base);
  }
  const torch::Tensor base = residuals.empty() ? mine.base : torch::cat(residuals, 0);
  const auto start = std::chrono::steady_clock::now();
  const torch::Tensor y = cpu::fixed_order_project(torch::cat(xs, 0), mine.w, base, mine.threads);
  const JobClock::duration elapsed = std::chrono::steady_clock::now() - start;
  const auto n = static_cast<int64_t>(group.size());
  for (int64_t i = 0; i < n; ++i) {
    group[i]->result = y.narrow(0, i, 1);
    group[i]->share = elapsed / n;
    group[i]->batch_rows = n;
    if (group[i] != &mine) pending_.erase(std::find(pending_.begin(), pending_.end(), group[i]));
  }
  // This thread's clock ran through the whole batch: the other rows' shares are not its work.
  JobClock::waited() += elapsed - mine.share;
}

}  // namespace kvbench::models
