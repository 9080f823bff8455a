// tokenizer.json -> HfTokenizer. Every component is checked field by field; anything kvbench does
// not implement is an error naming the field, never a silently different tokenization.
#include "tokenizers/hf_tokenizer.hpp"

#include <unordered_map>
#include <unordered_set>

#include "tokenizers/model_error.hpp"
#include "tokenizers/model_json.hpp"

namespace kvbench::models {
namespace {

// Ids index dense tables; real vocabularies stay far below this (Gemma's has 262,144 tokens).
constexpr int64_t kMaxTokenId = (1 << 24) - 1;

int id_value(const JsonFields& f, const std::string& key, const nlohmann::json& v) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    f.fail(key, "must be a non-negative integer id, got " + v.dump().substr(0, 80));
  if (v.get<int64_t>() > kMaxTokenId) f.fail(key, "ids above " + std::to_string(kMaxTokenId) + " are not supported");
  return v.get<int>();
}

std::unique_ptr<BpeModel> parse_bpe(const JsonFields& f) {
  const std::string type = f.string("type");
  if (type != "BPE") f.fail("type", "unknown \"" + type + "\" (supported: BPE)");
  f.allow_only({"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
                "byte_fallback", "ignore_merges", "vocab", "merges"});
  if (f.has("dropout") && !(f.at("dropout").is_number() && f.at("dropout").get<double>() == 0.0))
    f.fail("dropout", "BPE dropout is not supported (it makes encoding random)");
  BpeOptions options;
  options.unk_token = f.optional_string("unk_token");
  options.continuing_subword_prefix = f.optional_string("continuing_subword_prefix");
  options.end_of_word_suffix = f.optional_string("end_of_word_suffix");
  options.fuse_unk = f.boolean_or("fuse_unk", false);
  options.byte_fallback = f.boolean_or("byte_fallback", false);
  options.ignore_merges = f.boolean_or("ignore_merges", false);

  JsonFields vocab_fields = f.object("vocab");
  BpeModel::Vocab vocab;
  vocab.reserve(vocab_fields.json().size());
  for (auto it = vocab_fields.json().begin(); it != vocab_fields.json().end(); ++it)
    vocab.emplace(it.key(), id_value(vocab_fields, it.key(), it.value()));
  if (const std::string problem = vocab_problem(vocab); !problem.empty()) f.fail("vocab", problem);
  // Hugging Face fails on the first unknown character; silently dropping it would change the text.
  if (options.unk_token && !vocab.count(*options.unk_token))
    f.fail("unk_token", "\"" + *options.unk_token + "\" is not in model.vocab");

  const nlohmann::json& merges_json = f.array("merges");
  BpeModel::Merges merges;
  merges.reserve(merges_json.size());
  auto merge_where = [&f](size_t i) { return f.where("merges") + "[" + std::to_string(i) + "]"; };
  for (size_t i = 0; i < merges_json.size(); ++i) {
    const nlohmann::json& m = merges_json[i];
    if (m.is_string()) {  // the legacy "a b" form
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw ModelLoadError(f.file(), merge_where(i) + ": must be two tokens separated by one space, got \"" + s + "\"");
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      throw ModelLoadError(f.file(), merge_where(i) + ": must be \"a b\" or [\"a\", \"b\"], got " + m.dump().substr(0, 80));
    }
  }
  return std::make_unique<BpeModel>(std::move(vocab), merges, std::move(options), [&](size_t i, const std::string& what) {
    throw ModelLoadError(f.file(), merge_where(i) + ": " + what);
  });
}

// The id of a token new to the vocabulary: the next after the highest added id, at least the
// model's vocabulary size.
int next_new_id(int highest_added, int model_size) {
  if (highest_added < 0) return model_size;
  return highest_added >= model_size || model_size == 0 ? highest_added + 1 : model_size;
}

// Hugging Face re-adds the tokens in order (AddedVocabulary::add_tokens) and ignores the ids
// written in the file: a token already known keeps its id (an earlier entry's, or the model's);
// a new one takes next_new_id. Earlier entries are looked up by content, not scanned: a file
// may list hundreds of thousands.
std::vector<AddedToken> parse_added_tokens(const JsonFields& top, const BpeModel& model) {
  std::vector<AddedToken> out;
  if (!top.has("added_tokens")) return out;
  const size_t count = top.array("added_tokens").size();
  std::unordered_map<std::string, int> known;  // content -> id, of the first entry
  known.reserve(count);
  int highest = -1;
  for (size_t i = 0; i < count; ++i) {
    JsonFields t = top.element("added_tokens", i);
    t.allow_only({"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"});
    AddedToken a;
    a.content = t.string("content");
    if (a.content.empty()) t.fail("content", "must not be empty");
    id_value(t, "id", t.at("id"));  // checked, but the id is assigned as Hugging Face assigns it:
    auto [entry, first] = known.emplace(a.content, 0);
    if (first) entry->second = model.token_to_id(a.content).value_or(next_new_id(highest, model.vocab_size()));
    a.id = entry->second;
    highest = std::max(highest, a.id);
    a.special = t.boolean_or("special", false);
    a.lstrip = t.boolean_or("lstrip", false);
    a.rstrip = t.boolean_or("rstrip", false);
    a.single_word = t.boolean_or("single_word", false);
    a.normalized = t.boolean_or("normalized", !a.special);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::unique_ptr<HfTokenizer> load_tokenizer_json(const std::string& path) {
  const nlohmann::json json = read_model_json(path, "tokenizer.json");
  JsonFields top(path, "", json);
  // truncation and padding shape batches for training; kvbench never truncates or pads a prompt.
  top.allow_only({"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor",
                  "decoder", "model"});
  HfPipeline p;
  try {
    p.model = parse_bpe(top.object("model"));
    if (top.has("normalizer")) p.normalizer = parse_normalizer(top.object("normalizer"));
    if (top.has("pre_tokenizer")) p.pre_tokenizer = parse_pre_tokenizer(top.object("pre_tokenizer"));
    p.added_tokens = parse_added_tokens(top, *p.model);
    std::unordered_set<int> added_ids;
    for (const AddedToken& a : p.added_tokens) added_ids.insert(a.id);
    const auto is_token = [&](int id) { return p.model->id_to_token(id) != nullptr || added_ids.count(id) > 0; };
    if (top.has("post_processor")) p.post_processor = parse_post_processor(top.object("post_processor"), is_token);
    if (top.has("decoder")) p.decoder = parse_decoder(top.object("decoder"));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for an int
    throw ModelLoadError(path, std::string("malformed field: ") + e.what());
  }
  return std::make_unique<HfTokenizer>(std::move(p), "tokenizer.json");
}

}  // namespace kvbench::models
