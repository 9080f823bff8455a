#include "models/hf_post_processor.hpp"

#include <cstdint>

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

std::unique_ptr<HfPostProcessor> parse_template(const JsonFields& f) {
  f.allow_only({"type", "single", "pair", "special_tokens"});
  f.array("pair");  // only checked: kvbench encodes single sequences
  JsonFields specials = f.object("special_tokens");
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
      if (!specials.json().contains(name)) tok.fail("id", "\"" + name + "\" is not in special_tokens");
      JsonFields special = specials.object(name);
      special.allow_only({"id", "ids", "tokens"});
      std::vector<int> ids;
      for (const auto& id : special.array("ids")) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
          special.fail("ids", "must be non-negative integer ids");
        ids.push_back(id.get<int>());
      }
      items.push_back({false, std::move(ids)});
    } else {
      piece.fail_here("must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  return std::make_unique<TemplatePostProcessor>(std::move(items));
}

}  // namespace

std::unique_ptr<HfPostProcessor> parse_post_processor(const JsonFields& f) {
  const std::string type = f.string("type");
  if (type == "ByteLevel") {
    f.allow_only({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    return std::make_unique<ByteLevelPostProcessor>();
  }
  if (type == "TemplateProcessing") return parse_template(f);
  if (type == "Sequence") {
    f.allow_only({"type", "processors"});
    std::vector<std::unique_ptr<HfPostProcessor>> steps;
    for (size_t i = 0; i < f.array("processors").size(); ++i) steps.push_back(parse_post_processor(f.element("processors", i)));
    return std::make_unique<SequencePostProcessor>(std::move(steps));
  }
  f.fail("type", "unknown \"" + type + "\" (supported: TemplateProcessing, ByteLevel, Sequence)");
}

}  // namespace kvbench::models
