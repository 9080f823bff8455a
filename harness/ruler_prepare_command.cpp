// `kvbench ruler-prepare --task T --tokenizer P --max-seq-length N --out F`: RULER's
// scripts/data/prepare.py natively (datasets/ruler/): the same validation.jsonl, byte for byte,
// counted with the given tokenizer (a tokenizer.json folder, a sentencepiece .model, a model
// folder). The options keep prepare.py's names; the file is written atomically.
#include <iostream>
#include <memory>

#include "datasets/data_root.hpp"
#include "datasets/ruler/ruler_config.hpp"
#include "datasets/ruler/ruler_generator.hpp"
#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::harness {
namespace {

struct PrepareOptions {
  datasets::ruler::Request request;
  std::string tokenizer, out, data_root, squad_file, hotpotqa_file;
};

int run_ruler_prepare(const PrepareOptions& o) {
  namespace ruler = datasets::ruler;
  const models::Tokenizer tokenizer(o.tokenizer);
  const std::string root = o.data_root.empty() ? datasets::default_data_root() : o.data_root;
  std::map<std::string, std::string> overrides;
  if (!o.squad_file.empty()) overrides["squad.json"] = o.squad_file;
  if (!o.hotpotqa_file.empty()) overrides["hotpotqa.json"] = o.hotpotqa_file;
  ruler::RulerData data({root + "/ruler", datasets::bundled_data_dir() + "/ruler"}, overrides);
  const auto count = [&tokenizer](const std::string& text) { return static_cast<int64_t>(tokenizer.encode(text, false).size()); };
  std::string out;
  for (const ruler::Sample& s : ruler::generate(o.request, count, data)) out += ruler::manifest_line(s) + "\n";
  write_file_atomically(o.out, out);
  std::cerr << "ruler-prepare: " << o.request.num_samples << " samples of " << o.request.task << " to " << o.out << "\n";
  return 0;
}

const CommandRegistration ruler_prepare_registration(
    "ruler-prepare", "Generate RULER samples exactly as its prepare.py (validation.jsonl) for a tokenizer",
    [](CLI::App& app) {
      auto o = std::make_shared<PrepareOptions>();
      std::vector<std::string> tasks;
      for (const auto& t : datasets::ruler::tasks()) tasks.push_back(t.name);
      app.add_option("--task", o->request.task, "a synthetic.yaml task")->required()->check(CLI::IsMember(tasks));
      app.add_option("--tokenizer", o->tokenizer, "tokenizer.json folder, sentencepiece .model, or model folder")->required();
      app.add_option("--max-seq-length,--max_seq_length", o->request.max_seq_length, "input plus generated tokens")
          ->required()
          ->check(CLI::Range(int64_t{16}, int64_t{1} << 24));
      app.add_option("--num-samples,--num_samples", o->request.num_samples, "samples (prepare.py: 500)")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
      app.add_option("--random-seed,--random_seed", o->request.random_seed, "seed")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{0}, int64_t{4294967295LL}));
      app.add_option("--model-template-type,--model_template_type", o->request.model_template_type, "template.py's wrapper")
          ->capture_default_str()
          ->check(CLI::IsMember(datasets::ruler::model_template_names()));
      app.add_option("--tokens-to-generate,--tokens_to_generate", o->request.tokens_to_generate,
                     "the task scripts' --tokens_to_generate (default: RULER's for the task)")
          ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
      app.add_flag("--remove-newline-tab,--remove_newline_tab", o->request.remove_newline_tab, "join all lines with spaces");
      app.add_option("--data-root", o->data_root, "folder holding ruler/ (default: the data root, then the bundled data)");
      app.add_option("--squad-file", o->squad_file, "SQuAD v2.0 dev (qa_1)");
      app.add_option("--hotpotqa-file", o->hotpotqa_file, "HotpotQA dev distractor (qa_2)");
      app.add_option("--out", o->out, "the JSONL to write")->required();
      return [o] { return run_ruler_prepare(*o); };
    });

}  // namespace
}  // namespace kvbench::harness
