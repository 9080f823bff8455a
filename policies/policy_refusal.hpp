#pragma once
// A name kvbench knows but will not run, with why: a reference registry's entry that fails in the
// reference itself (kvpress's cam_adakv_snapkv). Asking for it gets that reason, not "unknown
// policy"; it is not listed among the policies.
#include <string>

namespace kvbench::policies {

struct PolicyRefusal {
  PolicyRefusal(std::string name, std::string why);
};

// The reason `name` is refused; null when it is not.
const std::string* policy_refusal(const std::string& name);

}  // namespace kvbench::policies
