#include "models/cuda/split_k_decode.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "models/cuda/split_k_decode_kernel.hpp"

namespace kvbench::models::cuda {
namespace {

std::atomic<int64_t> calls{0};

std::optional<ElementType> element_type(c10::ScalarType type) {
  switch (type) {
    case torch::kFloat32: return ElementType::kFloat32;
    case torch::kFloat16: return ElementType::kFloat16;
    case torch::kBFloat16: return ElementType::kBFloat16;
    default: return std::nullopt;
  }
}

}  // namespace

bool split_k_decode_applies(const torch::Tensor& q, const torch::Tensor& K, const torch::Tensor& V) {
  if (!q.is_cuda() || q.dim() != 3 || q.size(1) != 1 || K.dim() != 3 || V.sizes() != K.sizes()) return false;
  if (!element_type(q.scalar_type()) || K.scalar_type() != q.scalar_type() || V.scalar_type() != q.scalar_type())
    return false;
  const int64_t kv_heads = K.size(0);
  return K.size(1) > 0 && K.size(2) == q.size(2) && q.size(0) % kv_heads == 0 && q.size(0) / kv_heads <= kMaxGroup &&
         K.stride(2) == 1 && V.stride(2) == 1 && K.device() == q.device() && V.device() == q.device();
}

torch::Tensor split_k_decode(const torch::Tensor& q_in, const torch::Tensor& K, const torch::Tensor& V,
                             const torch::Tensor& valid) {
  if (!split_k_decode_applies(q_in, K, V))
    throw std::logic_error("split_k_decode: not a decoding query it takes (see split_k_decode_applies)");
  const c10::cuda::CUDAGuard guard(q_in.device());
  const torch::Tensor q = q_in.contiguous();
  SplitKDecodeArgs args;
  args.kv_heads = static_cast<int>(K.size(0));
  args.group = static_cast<int>(q.size(0) / K.size(0));
  args.head_dim = static_cast<int>(q.size(2));
  args.n = K.size(1);
  args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(args.head_dim)));
  args.key_head_stride = K.stride(0);
  args.key_row_stride = K.stride(1);
  args.value_head_stride = V.stride(0);
  args.value_row_stride = V.stride(1);
  torch::Tensor valid_rows;
  if (valid.defined()) {
    valid_rows = valid.to(q.device(), torch::kBool);
    if (valid_rows.stride(1) != 1) valid_rows = valid_rows.contiguous();
    args.valid_head_stride = valid_rows.stride(0);
  }
  plan_splits(args, at::cuda::getDeviceProperties(q.get_device())->multiProcessorCount);  // cached by ATen
  const torch::Tensor workspace = torch::empty({split_k_workspace_floats(args)}, q.options().dtype(torch::kFloat32));
  torch::Tensor out = torch::empty_like(q);
  launch_split_k_decode(args, *element_type(q.scalar_type()), q.data_ptr(), K.data_ptr(), V.data_ptr(),
                        valid_rows.defined() ? valid_rows.data_ptr<bool>() : nullptr, workspace.data_ptr<float>(),
                        out.data_ptr(), c10::cuda::getCurrentCUDAStream().stream());
  calls.fetch_add(1, std::memory_order_relaxed);
  return out;
}

int64_t split_k_decode_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace kvbench::models::cuda
