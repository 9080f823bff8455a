// Shape-only (Meta) kernels for the operators that libtorch 1.13's C++ build lacks on the meta
// device (Python adds them from torch/_meta_registrations.py; libtorch 2.x has most in C++, where
// these registrations override its own with a warning). Boxed, so that schema changes between
// libtorch versions (e.g. std's `correction` int → Scalar) do not break the registration.
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include "models/meta_kernels.hpp"

#include <torch/library.h>
#include <torch/torch.h>

namespace {

bool blocking_copies_fail = false;

using Stack = torch::jit::Stack;

at::Tensor meta_like(at::IntArrayRef sizes, const at::Tensor& like, c10::ScalarType dtype) {
  return at::empty(sizes, like.options().dtype(dtype));
}

// The result replaces the operator's arguments on the stack.
void finish(const c10::OperatorHandle& op, Stack* stack, at::Tensor result) {
  torch::jit::drop(*stack, op.schema().arguments().size());
  torch::jit::push(*stack, std::move(result));
}

// flip, abs, relu: the input's shape and dtype.
void same_shape(const c10::OperatorHandle& op, Stack* stack) {
  const at::Tensor self = (*stack)[stack->size() - op.schema().arguments().size()].toTensor();
  finish(op, stack, meta_like(self.sizes(), self, self.scalar_type()));
}

// logical_not: the input's shape, bool.
void same_shape_bool(const c10::OperatorHandle& op, Stack* stack) {
  const at::Tensor self = (*stack)[stack->size() - op.schema().arguments().size()].toTensor();
  finish(op, stack, meta_like(self.sizes(), self, at::kBool));
}

// logical_and / logical_or (self, other): broadcast shape, bool.
void broadcast_bool(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor a = (*stack)[stack->size() - n].toTensor(), b = (*stack)[stack->size() - n + 1].toTensor();
  finish(op, stack, meta_like(at::infer_size(a.sizes(), b.sizes()), a, at::kBool));
}

// Their out= forms (the in-place ones call these): `out` takes the broadcast shape.
void broadcast_out(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor a = (*stack)[stack->size() - n].toTensor(), b = (*stack)[stack->size() - n + 1].toTensor();
  at::Tensor out = (*stack)[stack->size() - 1].toTensor();
  out.resize_(at::infer_size(a.sizes(), b.sizes()));
  finish(op, stack, out);
}

// where.self(condition, self, other): broadcast of the three, promoted dtype of self and other.
void where_self(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor c = (*stack)[stack->size() - n].toTensor(), a = (*stack)[stack->size() - n + 1].toTensor(),
                   b = (*stack)[stack->size() - n + 2].toTensor();
  auto sizes = at::infer_size(at::infer_size(c.sizes(), a.sizes()), b.sizes());
  finish(op, stack, meta_like(sizes, a, at::promote_types(a.scalar_type(), b.scalar_type())));
}

// index_select(self, dim, index).
void index_select(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor self = (*stack)[stack->size() - n].toTensor();
  const int64_t dim = c10::maybe_wrap_dim((*stack)[stack->size() - n + 1].toInt(), self.dim());
  const at::Tensor index = (*stack)[stack->size() - n + 2].toTensor();
  auto sizes = self.sizes().vec();
  if (!sizes.empty()) sizes[dim] = index.numel();
  finish(op, stack, meta_like(sizes, self, self.scalar_type()));
}

// A reduction along one dim to (values, indices): kthvalue(self, k, dim, keepdim) and
// median.dim(self, dim, keepdim); `dim_arg` is where dim is, keepdim follows it.
template <size_t dim_arg>
void values_and_indices(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor self = (*stack)[stack->size() - n].toTensor();
  const int64_t dim = c10::maybe_wrap_dim((*stack)[stack->size() - n + dim_arg].toInt(), self.dim());
  const bool keepdim = (*stack)[stack->size() - n + dim_arg + 1].toBool();
  auto sizes = self.sizes().vec();
  if (keepdim) sizes[dim] = 1;
  else sizes.erase(sizes.begin() + dim);
  torch::jit::drop(*stack, n);
  torch::jit::push(*stack, meta_like(sizes, self, self.scalar_type()));
  torch::jit::push(*stack, meta_like(sizes, self, at::kLong));
}

// copy_(self, src, non_blocking): a copy into a meta tensor that a CUDA device would have to wait
// for is an error, as the CUDA synchronisation debug mode makes it: a blocking copy from the host.
// Copies out of a meta tensor fail as they do without this kernel (there is no data).
void copy_checked(const c10::OperatorHandle& op, Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const at::Tensor self = (*stack)[stack->size() - n].toTensor(), src = (*stack)[stack->size() - n + 1].toTensor();
  const bool non_blocking = (*stack)[stack->size() - n + 2].toBool();
  if (!self.is_meta()) throw std::runtime_error("Cannot copy out of meta tensor; no data!");
  if (blocking_copies_fail && !src.is_meta() && src.dim() > 0 && !non_blocking)
    throw std::runtime_error("a blocking copy from the host to the device (sizes " + c10::str(src.sizes()) + ")");
  finish(op, stack, self);
}

TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("copy_", torch::CppFunction::makeFromBoxedFunction<&copy_checked>());
  m.impl("flip", torch::CppFunction::makeFromBoxedFunction<&same_shape>());
  m.impl("abs", torch::CppFunction::makeFromBoxedFunction<&same_shape>());
  m.impl("relu", torch::CppFunction::makeFromBoxedFunction<&same_shape>());
  m.impl("logical_not", torch::CppFunction::makeFromBoxedFunction<&same_shape_bool>());
  m.impl("logical_and", torch::CppFunction::makeFromBoxedFunction<&broadcast_bool>());
  m.impl("logical_or", torch::CppFunction::makeFromBoxedFunction<&broadcast_bool>());
  m.impl("logical_and.out", torch::CppFunction::makeFromBoxedFunction<&broadcast_out>());
  m.impl("logical_or.out", torch::CppFunction::makeFromBoxedFunction<&broadcast_out>());
  m.impl("where.self", torch::CppFunction::makeFromBoxedFunction<&where_self>());
  m.impl("index_select", torch::CppFunction::makeFromBoxedFunction<&index_select>());
  m.impl("kthvalue", torch::CppFunction::makeFromBoxedFunction<&values_and_indices<2>>());
  m.impl("median.dim", torch::CppFunction::makeFromBoxedFunction<&values_and_indices<1>>());
}

}  // namespace

namespace kvbench::testing {
BlockingCopiesFail::BlockingCopiesFail() { blocking_copies_fail = true; }
BlockingCopiesFail::~BlockingCopiesFail() { blocking_copies_fail = false; }
}  // namespace kvbench::testing
