#include "tokenizers/hf_post_processor.hpp"

#include <cstdint>
#include <map>

namespace kvbench::models {
namespace {

class ByteLevelPostProcessor : public HfPostProcessor {
 public:
  void process(std::vector<int>&, bool) const override {}
};

// The "single" template: a list of special tokens' ids and the place of the sequence.
class TemplatePostProcessor : public HfPostProcessor {
 public:
  struct Item {
    bool is_sequence;
    std::vector<int> ids;  // special token ids when !is_sequence
  };
  explicit TemplatePostProcessor(std::vector<Item> single) : single_(std::move(single)) {}
  void process(std::vector<int>& ids, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    std::vector<int> out;
    out.reserve(ids.size() + 4);
    for (const Item& item : single_) {
      if (item.is_sequence) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), item.ids.begin(), item.ids.end());
      }
    }
    ids.swap(out);
  }

 private:
  std::vector<Item> single_;
};

class SequencePostProcessor : public HfPostProcessor {
 public:
  explicit SequencePostProcessor(std::vector<std::unique_ptr<HfPostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<int>& ids, bool add_special_tokens) const override {
    for (const auto& s : steps_) s->process(ids, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<HfPostProcessor>> steps_;
};

// special_tokens: {name: {"id", "ids", "tokens"}} -> name -> ids, each id a token of the tokenizer.
std::map<std::string, std::vector<int>> parse_special_tokens(const JsonFields& specials,
                                                             const std::function<bool(int)>& is_token) {
  std::map<std::string, std::vector<int>> out;
  for (auto it = specials.json().begin(); it != specials.json().end(); ++it) {
    JsonFields special = specials.object(it.key());
    special.allow_only({"id", "ids", "tokens"});
    const nlohmann::json& ids_json = special.array("ids");
    const size_t tokens = special.array("tokens").size();
    if (ids_json.size() != tokens)  // Hugging Face's SpecialToken refuses this too
      special.fail_here(std::to_string(ids_json.size()) + " ids and " + std::to_string(tokens) +
                        " tokens: \"ids\" and \"tokens\" must have the same length");
    std::vector<int>& ids = out[it.key()];
    for (size_t i = 0; i < ids_json.size(); ++i) {
      const nlohmann::json& id = ids_json[i];
      const std::string where = "ids[" + std::to_string(i) + "]";
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
        special.fail(where, "must be a non-negative integer id, got " + id.dump().substr(0, 80));
      if (!is_token(id.get<int>()))
        special.fail(where, "id " + id.dump() + " is not a token of the tokenizer (model.vocab or added_tokens)");
      ids.push_back(id.get<int>());
    }
  }
  return out;
}

std::unique_ptr<HfPostProcessor> parse_template(const JsonFields& f, const std::function<bool(int)>& is_token) {
  f.allow_only({"type", "single", "pair", "special_tokens"});
  f.array("pair");  // only checked: kvbench encodes single sequences
  const std::map<std::string, std::vector<int>> specials = parse_special_tokens(f.object("special_tokens"), is_token);
  std::vector<TemplatePostProcessor::Item> items;
  const nlohmann::json& single = f.array("single");
  for (size_t i = 0; i < single.size(); ++i) {
    JsonFields piece = f.element("single", i);
    if (piece.has("Sequence")) {
      piece.allow_only({"Sequence"});
      JsonFields seq = piece.object("Sequence");
      seq.allow_only({"id", "type_id"});
      if (seq.string("id") != "A") seq.fail("id", "a single-sequence template uses \"A\", got \"" + seq.string("id") + "\"");
      items.push_back({true, {}});
    } else if (piece.has("SpecialToken")) {
      piece.allow_only({"SpecialToken"});
      JsonFields tok = piece.object("SpecialToken");
      tok.allow_only({"id", "type_id"});
      const std::string name = tok.string("id");
      auto special = specials.find(name);
      if (special == specials.end()) tok.fail("id", "\"" + name + "\" is not in special_tokens");
      items.push_back({false, special->second});
    } else {
      piece.fail_here("must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  return std::make_unique<TemplatePostProcessor>(std::move(items));
}

}  // namespace

std::unique_ptr<HfPostProcessor> parse_post_processor(const JsonFields& f, const std::function<bool(int)>& is_token) {
  const std::string type = f.string("type");
  if (type == "ByteLevel") {
    f.allow_only({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    return std::make_unique<ByteLevelPostProcessor>();
  }
  if (type == "TemplateProcessing") return parse_template(f, is_token);
  if (type == "Sequence") {
    f.allow_only({"type", "processors"});
    std::vector<std::unique_ptr<HfPostProcessor>> steps;
    for (size_t i = 0; i < f.array("processors").size(); ++i)
      steps.push_back(parse_post_processor(f.element("processors", i), is_token));
    return std::make_unique<SequencePostProcessor>(std::move(steps));
  }
  f.fail("type", "unknown \"" + type + "\" (supported: TemplateProcessing, ByteLevel, Sequence)");
}

}  // namespace kvbench::models
