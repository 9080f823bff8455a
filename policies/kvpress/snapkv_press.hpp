#pragma once
// kvpress's SnapKVPress, shared by the presses built on it (PyramidKVPress).
#include <memory>
#include <string>

#include "base/param.hpp"
#include "policies/slot_scorer.hpp"

namespace kvbench::policies::kvpress {

params::Params snapkv_press_params();  // window_size 64, kernel_size 5
std::unique_ptr<SlotScorer> make_snapkv_press(const nlohmann::json& params, const std::string& name);

}  // namespace kvbench::policies::kvpress
