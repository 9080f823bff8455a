// `kvbench info`: what a checkpoint is.
#include <iostream>

#include "harness/command.hpp"
#include "harness/runtime_options.hpp"

namespace kvbench::harness {
namespace {

int run_info(const ModelOptions& options, bool json) {
  LoadedRuntime rt = load_runtime(options);
  const models::ModelConfig& c = rt.loaded.config;
  nlohmann::json j = {{"model", options.model},
                      {"weights", rt.loaded.weights_path},
                      {"architecture", c.architecture},
                      {"format", c.source_format},
                      {"dim", c.dim},
                      {"hidden_dim", c.hidden_dim},
                      {"layers", c.n_layers},
                      {"heads", c.n_heads},
                      {"kv_heads", c.n_kv_heads},
                      {"head_dim", c.head_dim},
                      {"vocab_size", c.vocab_size},
                      {"context_length", c.max_seq_len},
                      {"rope_theta", c.rope_theta},
                      {"rope_style", models::to_string(c.rope_style)},
                      {"rope_scaling", models::to_string(c.rope_scaling.type)},
                      {"tied_embeddings", c.tied_embeddings},
                      {"dtype", c.dtype},
                      {"parameters", rt.transformer->parameter_count()},
                      {"tokenizer", rt.loaded.tokenizer_path},
                      {"tokenizer_vocab", rt.tokenizer->vocab_size()}};
  if (json) {
    std::cout << j.dump(2) << "\n";
  } else {
    for (auto it = j.begin(); it != j.end(); ++it)
      std::cout << it.key() << ": " << (it.value().is_string() ? it.value().get<std::string>() : it.value().dump()) << "\n";
  }
  return 0;
}

const CommandRegistration info_registration("info", "Architecture, parameter count, dtype, context, tokenizer",
                                       [](CLI::App& app) {
                                         auto options = std::make_shared<ModelOptions>();
                                         auto json = std::make_shared<bool>(false);
                                         options->add_to(app);
                                         app.add_flag("--json", *json, "print JSON");
                                         return [options, json] { return run_info(*options, *json); };
                                       });

}  // namespace
}  // namespace kvbench::harness
