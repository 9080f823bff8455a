#include "models/hf_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "datasets/field_location.hpp"
#include "datasets/json_parse.hpp"
#include "datasets/regular_file.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/model_json.hpp"

namespace kvbench::models {
namespace {

// Every integer field is a size or a token count. The longest contexts of real models are ~10M
// tokens and the largest sizes far below that, so 2^31-1 leaves room while refusing a typo or a
// corrupt file (max_position_embeddings 1e12 would make a task size its grid to it and hang), and
// it keeps every product of two fields (n_heads * head_dim, vocab_size * hidden_size) inside int64.
constexpr int64_t kMaxConfigInteger = 2147483647;

// transformers' class defaults for the fields a config may omit.
struct FamilyDefaults {
  double rms_norm_eps;
  int64_t max_position_embeddings;
  bool qkv_bias;
  int64_t head_dim;  // 0: hidden_size / num_attention_heads
};

FamilyDefaults defaults_for(const std::string& model_type) {
  if (model_type == "llama") return {1e-6, 2048, false, 0};
  if (model_type == "mistral") return {1e-6, 4096 * 32, false, 0};
  if (model_type == "qwen3") return {1e-6, 32768, false, 128};  // Qwen3Config: head_dim 128, no qkv bias
  return {1e-6, 32768, true, 0};  // qwen2: q/k/v projections always carry a bias
}

class ConfigReader {
 public:
  ConfigReader(std::string path, std::string text, nlohmann::json json)
      : path_(std::move(path)), text_(std::move(text)), json_(std::move(json)) {}

  bool has(const nlohmann::json& obj, const std::string& key) const { return obj.contains(key) && !obj[key].is_null(); }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ModelLoadError(datasets::field_location(path_, text_, field), "field '" + field + "': " + what);
  }

  int64_t integer(const nlohmann::json& obj, const std::string& key, int64_t low = 1) const {
    if (!has(obj, key)) throw ModelLoadError(path_, "missing field '" + key + "'");
    return integer_value(obj[key], key, low);
  }
  int64_t integer_or(const nlohmann::json& obj, const std::string& key, int64_t fallback, int64_t low = 1) const {
    return has(obj, key) ? integer_value(obj[key], key, low) : fallback;
  }
  double number_or(const nlohmann::json& obj, const std::string& key, double fallback) const {
    if (!has(obj, key)) return fallback;
    if (!obj[key].is_number()) fail(key, "must be a number, got " + obj[key].dump());
    return obj[key].get<double>();
  }
  bool boolean_or(const nlohmann::json& obj, const std::string& key, bool fallback) const {
    if (!has(obj, key)) return fallback;
    if (!obj[key].is_boolean()) fail(key, "must be true or false, got " + obj[key].dump());
    return obj[key].get<bool>();
  }
  std::string string_or(const nlohmann::json& obj, const std::string& key, const std::string& fallback) const {
    if (!has(obj, key)) return fallback;
    if (!obj[key].is_string()) fail(key, "must be a string, got " + obj[key].dump());
    return obj[key].get<std::string>();
  }
  const nlohmann::json& json() const { return json_; }
  const std::string& path() const { return path_; }

 private:
  int64_t integer_value(const nlohmann::json& v, const std::string& key, int64_t low) const {
    if (!v.is_number_integer()) fail(key, "must be an integer, got " + v.dump());
    // Compared as written: get<int64_t>() would wrap 18446744073709551615 to -1.
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxConfigInteger)
                               : v.get<int64_t>() > kMaxConfigInteger)
      fail(key, "out of range: must be at most " + std::to_string(kMaxConfigInteger) + ", got " + v.dump());
    const int64_t value = v.get<int64_t>();
    if (value < low) fail(key, "must be at least " + std::to_string(low) + ", got " + std::to_string(value));
    return value;
  }

  std::string path_, text_;
  nlohmann::json json_;
};

// A double as JSON writes it (1e-300, 0.5).
std::string number_text(double x) { return nlohmann::json(x).dump(); }

RopeScaling read_rope_scaling(const ConfigReader& r, const nlohmann::json& s, const std::string& field,
                              int64_t max_positions) {
  RopeScaling out;
  std::string type = r.string_or(s, "rope_type", r.string_or(s, "type", "default"));
  if (type == "default") return out;
  out.factor = r.number_or(s, "factor", 1.0);
  if (type == "linear") {
    out.type = RopeScalingType::kLinear;
  } else if (type == "dynamic") {
    out.type = RopeScalingType::kDynamicNtk;
  } else if (type == "llama3") {
    out.type = RopeScalingType::kLlama3;
    out.low_freq_factor = r.number_or(s, "low_freq_factor", 1.0);
    out.high_freq_factor = r.number_or(s, "high_freq_factor", 4.0);
    out.original_max_position_embeddings = r.integer_or(s, "original_max_position_embeddings", max_positions);
    // The wavelengths between the two bounds are smoothed by (x - low) / (high - low): an empty or
    // inverted band divides by zero or rescales the wrong wavelengths.
    if (!(out.low_freq_factor > 0))
      r.fail("low_freq_factor", "must be positive, got " + number_text(out.low_freq_factor));
    if (!(out.high_freq_factor > out.low_freq_factor))
      r.fail("high_freq_factor", "must be greater than low_freq_factor (" + number_text(out.low_freq_factor) +
                                     "), got " + number_text(out.high_freq_factor));
  } else {
    r.fail(field, "rope type '" + type + "' is not supported (kvbench reads default, linear, dynamic and llama3)");
  }
  // As transformers' rope validation asks; a tiny factor makes the frequencies infinite.
  if (!(out.factor >= 1)) r.fail("factor", "must be at least 1, got " + number_text(out.factor));
  return out;
}

}  // namespace

ModelConfig read_hf_config(const std::string& path) {
  std::string text;
  try {
    text = datasets::read_regular_file(path, "config.json");
  } catch (const std::runtime_error& e) {
    throw ModelLoadError(path, std::string("cannot read config.json (") + e.what() + ")");
  }
  return parse_hf_config(text, path);
}

ModelConfig parse_hf_config(const std::string& text, const std::string& path) {
  const nlohmann::json json = parse_model_json(text, path);
  if (!json.is_object()) throw ModelLoadError(path, "not a JSON object");
  ConfigReader r(path, text, json);

  ModelConfig c;
  c.source_format = "hf";
  c.rope_style = RopeStyle::kHalfSplit;
  c.architecture = r.string_or(json, "model_type", "");
  if (c.architecture.empty()) throw ModelLoadError(path, "missing field 'model_type'");
  if (c.architecture != "llama" && c.architecture != "mistral" && c.architecture != "qwen2" && c.architecture != "qwen3")
    r.fail("model_type",
           "'" + c.architecture + "' is not a Llama-family model kvbench runs (llama, mistral, qwen2, qwen3)");
  const FamilyDefaults d = defaults_for(c.architecture);

  c.dim = r.integer(json, "hidden_size");
  c.hidden_dim = r.integer(json, "intermediate_size");
  c.n_layers = r.integer(json, "num_hidden_layers");
  c.n_heads = r.integer(json, "num_attention_heads");
  c.vocab_size = r.integer(json, "vocab_size");
  c.n_kv_heads = r.integer_or(json, "num_key_value_heads", c.n_heads);
  if (c.n_heads % c.n_kv_heads != 0) r.fail("num_key_value_heads", "must divide num_attention_heads");
  c.head_dim = r.integer_or(json, "head_dim", d.head_dim ? d.head_dim : c.dim / c.n_heads);
  if (!r.has(json, "head_dim") && !d.head_dim && c.dim % c.n_heads != 0)
    r.fail("hidden_size", "is not a multiple of num_attention_heads and no head_dim is given");
  if (c.head_dim % 2 != 0) r.fail("head_dim", "must be even for RoPE");
  c.max_seq_len = r.integer_or(json, "max_position_embeddings", d.max_position_embeddings);
  c.norm_eps = r.number_or(json, "rms_norm_eps", d.rms_norm_eps);
  // A zero or negative epsilon makes RMSNorm divide by zero or take the root of a negative: NaN.
  if (!(c.norm_eps > 0 && c.norm_eps < 1)) r.fail("rms_norm_eps", "must be in (0, 1), got " + std::to_string(c.norm_eps));
  c.tied_embeddings = r.boolean_or(json, "tie_word_embeddings", false);
  c.dtype = r.string_or(json, "dtype", r.string_or(json, "torch_dtype", "float32"));

  const std::string act = r.string_or(json, "hidden_act", "silu");
  if (act != "silu") r.fail("hidden_act", "'" + act + "' is not supported (the Llama family uses silu)");
  c.qkv_bias = d.qkv_bias;
  c.qk_norm = c.architecture == "qwen3";
  if (r.boolean_or(json, "attention_bias", false) && c.architecture != "qwen2")
    r.fail("attention_bias", "biases on q/k/v/o projections are not supported for " + c.architecture);
  if (r.boolean_or(json, "mlp_bias", false)) r.fail("mlp_bias", "MLP biases are not supported");

  // transformers 5.x keeps theta and scaling together in rope_parameters.
  if (r.has(json, "rope_parameters")) {
    const nlohmann::json& p = json["rope_parameters"];
    if (!p.is_object()) r.fail("rope_parameters", "must be an object");
    c.rope_theta = r.number_or(p, "rope_theta", r.number_or(json, "rope_theta", 10000.0));
    c.rope_scaling = read_rope_scaling(r, p, "rope_parameters", c.max_seq_len);
  } else {
    c.rope_theta = r.number_or(json, "rope_theta", 10000.0);
    if (r.has(json, "rope_scaling")) {
      if (!json["rope_scaling"].is_object()) r.fail("rope_scaling", "must be an object or null");
      c.rope_scaling = read_rope_scaling(r, json["rope_scaling"], "rope_scaling", c.max_seq_len);
    }
  }
  // The frequencies are rope_theta^(-2i/head_dim) in float32: a base below 1 inverts their order,
  // and one like 1e-300 is 0 there, which makes them infinite.
  if (!(c.rope_theta >= 1)) r.fail("rope_theta", "must be at least 1, got " + number_text(c.rope_theta));

  const bool sliding = c.architecture == "mistral" || r.boolean_or(json, "use_sliding_window", false);
  if (sliding && r.has(json, "sliding_window")) c.sliding_window = r.integer_or(json, "sliding_window", 0, 0);
  return c;
}

}  // namespace kvbench::models
