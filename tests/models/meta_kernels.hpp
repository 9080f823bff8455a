#pragma once
// The meta device as a CPU stand-in for "the host never waits for the device": meta tensors have
// shapes and no data, so reading a value (.item(), a copy to the host, nonzero()) fails. While a
// BlockingCopiesFail is alive, a blocking copy from the host into a meta tensor fails as well, as
// the CUDA synchronisation debug mode makes it (tests/models/meta_kernels.cpp also adds the meta
// kernels libtorch 1.13's C++ build lacks).
namespace kvbench::testing {

class BlockingCopiesFail {
 public:
  BlockingCopiesFail();
  ~BlockingCopiesFail();
  BlockingCopiesFail(const BlockingCopiesFail&) = delete;
  BlockingCopiesFail& operator=(const BlockingCopiesFail&) = delete;
};

}  // namespace kvbench::testing
