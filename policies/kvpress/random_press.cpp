// RandomPress (kvpress/presses/random_press.py): uniform random scores, torch.rand(1, kv_heads, n)
// from a generator seeded with `seed` at every compression, the j-th draw of a head belonging to
// its j-th oldest token. kvpress's default seed is None (a fresh, unrepeatable draw); kvbench's
// runs are deterministic, so an unset seed takes the job's seed. Drawn in float32 on the host
// with libtorch's CPU generator, which gives the draws torch.rand gives in Python for that seed
// (kvpress draws in the keys' dtype: under fp16/bf16 weights its draws differ).
#include <ATen/CPUGeneratorImpl.h>

#include "policies/kvpress/press.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class RandomPress : public Press {
 public:
  explicit RandomPress(const nlohmann::json& p) : seed_(p.at("seed")) {}
  std::string name() const override { return "kvpress:random"; }
  void begin(const SequenceInfo& info) override { job_seed_ = info.seed; }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    const uint64_t seed = seed_.is_null() ? job_seed_ : seed_.get<uint64_t>();
    at::Generator generator = at::detail::createCPUGenerator(seed);
    torch::Tensor draws = torch::rand({1, cache.kv_heads(), cache.size()}, generator, torch::kFloat32)[0];
    return ArrivalOrder(cache).scatter(host_tensor_on(draws, cache.keys().device()));
  }

 private:
  nlohmann::json seed_;
  uint64_t job_seed_ = 0;
};

const PressRegistration random_registration(
    {"random", "Uniform random scores (torch.rand with a seeded generator)", "kvpress random_press.py (baseline)",
     {params::Param::integer("seed", nullptr, "the generator's seed (null: the job's seed; kvpress's None draws afresh)", 0)
          .or_null()},
     [](const nlohmann::json& p) { return std::make_unique<RandomPress>(p); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
