// `kvbench score`: on the real binary (per-example numbers equal the golden vectors bit for bit
// after printing, so the JSON printer must round-trip doubles; errors exit 1 with FILE:LINE and
// the field), and in-process through the same reader and metric adapters for the other metrics
// and error kinds (each binary start loads libtorch, so those are kept few).
#include "harness/file_tree.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <unistd.h>

#include "cli/run_binary.hpp"
#include "harness/score_metrics.hpp"

namespace kvbench::testing {
namespace {

using nlohmann::json;

json golden(const std::string& name) {
  std::ifstream in(std::string(KVBENCH_SHARED_DIR) + "/golden/" + name);
  return json::parse(in);
}

uint64_t bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

class ScoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kvbench_score_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { harness::remove_tree(dir_.string()); }

  std::string write(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string write_lines(const std::string& name, const std::vector<json>& lines) {
    std::string s;
    for (const auto& l : lines) s += l.dump() + "\n";
    return write(name, s);
  }
  // Runs `score ARGS`, expects success, returns the parsed JSON.
  json score(const std::string& args) {
    CommandResult r = run_kvbench("score " + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(r.output);
  }
  // The same scoring in-process: reader + adapter, as `kvbench score` does.
  json score_in_process(const std::string& metric, const std::map<std::string, std::string>& params,
                        const std::string& path, bool per_example) {
    auto scorer = harness::make_metric_scorer(metric, params);
    return scorer->score(harness::read_score_examples(path, *scorer), per_example);
  }
  // The message of the std::exception `fn` throws ("" if none).
  template <typename Fn>
  static std::string error_of(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  // Runs `score ARGS`, expects failure, returns the output (stderr included).
  std::string fail(const std::string& args) {
    CommandResult r = run_kvbench("score " + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(r.output.find("Segmentation"), std::string::npos);
    return r.output;
  }

  std::filesystem::path dir_;
};

TEST_F(ScoreCli, BleuSentencePerExampleIsBitExact) {
  const json g = golden("sacrebleu.json");
  std::vector<json> lines;
  for (const auto& c : g.at("cases")) lines.push_back({{"prediction", c.at("prediction")}, {"references", c.at("references")}});
  const json out = score("--metric bleu --input " + write_lines("bleu.jsonl", lines) + " --per-example");
  ASSERT_EQ(out.at("per_example").size(), lines.size());
  double sum = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& e = g.at("cases")[i].at("sentence_bleu");
    const json& a = out.at("per_example")[i];
    EXPECT_EQ(bits(a.at("score").get<double>()), bits(e.at("score").get<double>())) << i;
    EXPECT_EQ(bits(a.at("bp").get<double>()), bits(e.at("bp").get<double>())) << i;
    EXPECT_EQ(a.at("precisions"), e.at("precisions")) << i;
    EXPECT_EQ(a.at("sys_len"), e.at("sys_len"));
    EXPECT_EQ(a.at("ref_len"), e.at("ref_len"));
    sum += e.at("score").get<double>();
  }
  EXPECT_EQ(bits(out.at("aggregate").at("score").get<double>()), bits(sum / static_cast<double>(lines.size())));
  EXPECT_EQ(out.at("aggregate").at("signature"), "nrefs:var|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0");
}

TEST_F(ScoreCli, BleuCorpusWithOptionsMatchesGolden) {
  const json g = golden("sacrebleu.json");
  for (const auto& c : g.at("corpus_cases")) {
    if (c.at("id") != "v-corpus-edge_and_mmlu-lowercase=True-tokenize=intl") continue;
    std::vector<json> lines;
    for (size_t i = 0; i < c.at("hypotheses").size(); ++i)
      lines.push_back({{"prediction", c.at("hypotheses")[i]}, {"references", {c.at("references")[0][i]}}});
    const json out = score_in_process("bleu", {{"level", "corpus"}, {"tokenize", "intl"}, {"lowercase", "true"}},
                                      write_lines("corpus.jsonl", lines), false);
    const json& a = out.at("aggregate");
    EXPECT_EQ(bits(a.at("score").get<double>()), bits(c.at("corpus_bleu").at("score").get<double>()));
    EXPECT_EQ(a.at("counts"), c.at("corpus_bleu").at("counts"));
    EXPECT_EQ(a.at("signature"), c.at("signature"));
  }
}

TEST_F(ScoreCli, RougeWithStemmerAndPltrdyErrors) {
  const json g = golden("rouge_score.json");
  std::vector<json> lines;
  for (size_t i = 0; i < 40; ++i) {
    const auto& c = g.at("cases")[i];
    lines.push_back({{"prediction", c.at("prediction")}, {"references", c.at("references")}});
  }
  const json out = score_in_process("rouge", {{"stemmer", "true"}}, write_lines("rouge.jsonl", lines), true);
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& e = g.at("cases")[i].at("use_stemmer_true").at("score_multi");
    for (const char* type : {"rouge1", "rouge2", "rougeL", "rougeLsum"})
      for (const char* f : {"precision", "recall", "fmeasure"})
        EXPECT_EQ(bits(out.at("per_example")[i].at(type).at(f).get<double>()), bits(e.at(type).at(f).get<double>()))
            << i << type << f;
  }

  const std::string pl = write_lines("pltrdy.jsonl", {{{"prediction", "..."}, {"references", {"the cat sat"}}},
                                                      {{"prediction", "the cat sat"}, {"references", {"the cat sat"}}}});
  const json p = score_in_process("rouge_pltrdy", {}, pl, true);
  EXPECT_EQ(p.at("per_example")[0], json({{"error", "ValueError: Hypothesis is empty."}}));
  EXPECT_EQ(p.at("per_example")[1].at("rouge-l").at("f"), 0.999999995);
  EXPECT_EQ(p.at("aggregate").at("errors"), 1);
  EXPECT_EQ(p.at("aggregate").at("scored"), 1);
}

// A file on which pltrdy scores no example has no value: null numbers, printed, then exit 1.
TEST_F(ScoreCli, PltrdyOverZeroScoredExamplesIsNullAndFails) {
  const std::string path = write_lines("empty_pair.jsonl", {{{"prediction", ""}, {"references", {""}}}});
  const json p = score_in_process("rouge_pltrdy", {}, path, false);
  for (const char* type : {"rouge-1", "rouge-2", "rouge-l"})
    for (const char* f : {"r", "p", "f"}) EXPECT_TRUE(p.at("aggregate").at(type).at(f).is_null()) << type << f;
  EXPECT_EQ(p.at("aggregate").at("scored"), 0);
  EXPECT_EQ(p.at("failure"),
            "rouge_pltrdy: no example was scored (errors = 1, the first at line 1: ValueError: Hypothesis is empty.); "
            "a metric over zero examples has no value");

  CommandResult r = run_kvbench("score --metric rouge_pltrdy --input " + path + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("\"f\": null"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kvbench: error: rouge_pltrdy: no example was scored"), std::string::npos) << r.output;
}

TEST_F(ScoreCli, QaAndLongBenchAggregates) {
  const json q = golden("squad_qa.json");
  std::vector<json> lines;
  for (const auto& c : q.at("cases")) lines.push_back({{"prediction", c.at("prediction")}, {"references", c.at("ground_truths")}});
  const json out = score_in_process("squad", {}, write_lines("qa.jsonl", lines), true);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(out.at("per_example")[i].at("exact_match"), q.at("cases")[i].at("exact_match")) << i;
    EXPECT_EQ(bits(out.at("per_example")[i].at("f1").get<double>()), bits(q.at("cases")[i].at("f1").get<double>())) << i;
  }
  const json bs = score_in_process("best_subspan_em", {}, write_lines("qa.jsonl", lines), true);
  EXPECT_EQ(bs.at("per_example")[0].at("score"), q.at("cases")[0].at("best_subspan_em"));

  // eval.py's scorer on whole datasets: first-line rule (trec) and all_classes.
  const json lb = golden("longbench.json");
  for (const auto& agg : lb.at("aggregates")) {
    const std::string dataset = agg.at("dataset");
    if (dataset != "trec" && dataset != "multi_news") continue;
    std::vector<json> rows;
    for (size_t i = 0; i < agg.at("predictions").size(); ++i) {
      json row = {{"prediction", agg.at("predictions")[i]}, {"references", agg.at("answers")[i]}};
      if (!agg.at("all_classes").is_null()) row["all_classes"] = agg.at("all_classes");
      rows.push_back(row);
    }
    const std::string path = write_lines(dataset + ".jsonl", rows);
    const std::string metric = "longbench." + agg.at("metric").get<std::string>();
    const json r = dataset == "trec" ? score("--metric " + metric + " --param dataset=trec --per-example --input " + path)
                                     : score_in_process(metric, {{"dataset", dataset}}, path, true);
    EXPECT_EQ(r.at("aggregate").at("score"), agg.at("scorer")) << dataset;
    for (size_t i = 0; i < rows.size(); ++i)
      EXPECT_EQ(bits(r.at("per_example")[i].at("score").get<double>()), bits(agg.at("per_example")[i].get<double>()))
          << dataset << " " << i;
  }
}

TEST_F(ScoreCli, MeteorPerExampleAndMean) {
  const json g = golden("meteor.json");
  std::vector<json> lines;
  double sum = 0;
  for (size_t i = 0; i < 60; ++i) {
    const auto& c = g.at("cases")[i];
    lines.push_back({{"prediction", c.at("prediction")}, {"references", c.at("references")}});
    sum += c.at("meteor").get<double>();
  }
  const json out = score("--metric meteor --per-example --input " + write_lines("meteor.jsonl", lines));
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(bits(out.at("per_example")[i].at("meteor").get<double>()), bits(g.at("cases")[i].at("meteor").get<double>()))
        << i;
  EXPECT_EQ(bits(out.at("aggregate").at("meteor").get<double>()), bits(sum / 60));
  EXPECT_EQ(out.at("params").at("alpha"), 0.9);
}

TEST_F(ScoreCli, SelfBleuPerLineOfSentences) {
  const json g = golden("self_bleu.json");
  std::vector<json> lines;
  for (const auto& s : g.at("sets")) lines.push_back({{"sentences", s.at("sentences")}});
  const json out = score_in_process("self_bleu", {{"ngram", "3"}}, write_lines("sb.jsonl", lines), true);
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& e = g.at("sets")[i].at("w3_buzz");
    EXPECT_EQ(bits(out.at("per_example")[i].at("score").get<double>()), bits(e.at("mean_numpy").get<double>())) << i;
    EXPECT_EQ(bits(out.at("per_example")[i].at("mean_python").get<double>()), bits(e.at("mean_python").get<double>()));
  }
}

// RULER's and LongBench-v2's scorers through `kvbench score` (their functions are tested against
// the reference code in tests/metrics/).
TEST_F(ScoreCli, RulerAndLongBenchV2) {
  const std::string ruler = write_lines("ruler.jsonl", {{{"prediction", "a\tb 12"}, {"references", {"ab", "12"}}},
                                                        {{"prediction", " x "}, {"references", {"y"}}}});
  json r = score_in_process("ruler.string_match_all", {}, ruler, true);
  EXPECT_EQ(r["per_example"][0]["score"], 0.5);
  EXPECT_EQ(r["aggregate"]["score"], 25.0);
  r = score_in_process("ruler.string_match_all", {{"postprocess", "kvpress"}}, ruler, true);
  EXPECT_EQ(r["per_example"][0]["score"], 1.0);
  EXPECT_EQ(score_in_process("ruler.string_match_part", {}, ruler, false)["aggregate"]["score"], 50.0);
  const std::string v2 = write_lines("v2.jsonl", {{{"prediction", "**The correct answer is (B)**"}, {"references", {"B"}}},
                                                  {{"prediction", "The correct answer is C"}, {"references", {"B"}}},
                                                  {{"prediction", "no idea"}, {"references", {"A"}}}});
  r = score_in_process("longbench_v2", {}, v2, true);
  EXPECT_EQ(r["per_example"][0]["score"], 1.0);
  EXPECT_EQ(r["per_example"][2]["pred"], nullptr);
  EXPECT_EQ(r["aggregate"]["overall"], 33.3);
}

TEST_F(ScoreCli, BadInputIsOneClearErrorFromTheBinary) {
  const std::string good = R"({"prediction": "a b", "references": ["a b"]})";
  const std::string broken = write("broken.jsonl", good + "\n{\"prediction\": \"x\", \"references\": [\n");
  std::string o = fail("--metric bleu --input " + broken);
  EXPECT_NE(o.find("kvbench: error: " + broken + ":2: invalid JSON"), std::string::npos) << o;

  const std::string missing = write("missing.jsonl", good + "\n\n" + R"({"prediction": "x"})" + "\n");
  o = fail("--metric rouge --input " + missing);
  EXPECT_NE(o.find("kvbench: error: " + missing + ":3: missing field \"references\""), std::string::npos) << o;

  o = fail("--metric bleu --param tokenizer=intl --input " + write("ok.jsonl", good));
  EXPECT_NE(o.find("kvbench: error: unknown parameter 'tokenizer' for metric bleu (accepted: level, tokenize"),
            std::string::npos)
      << o;

  CommandResult help = run_kvbench("score --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--per-example"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("longbench.code_sim_score"), std::string::npos) << help.output;
}

TEST_F(ScoreCli, BadInputErrorsNameFileLineAndField) {
  const std::string good = R"({"prediction": "a b", "references": ["a b"]})";
  auto run = [&](const std::string& metric, const std::map<std::string, std::string>& params, const std::string& path,
                 bool per_example = false) {
    return error_of([&] { score_in_process(metric, params, path, per_example); });
  };
  const std::string wrong_type = write("type.jsonl", R"({"prediction": 3, "references": ["a"]})");
  EXPECT_EQ(run("squad", {}, wrong_type), wrong_type + ":1: field \"prediction\" must be a string, got number");
  const std::string bad_refs = write("refs.jsonl", good + "\n" + R"({"prediction": "a", "references": ["a", 7]})");
  EXPECT_EQ(run("meteor", {}, bad_refs),
            bad_refs + ":2: field \"references\" must be a non-empty array of strings (element 1 is number)");
  const std::string no_refs = write("norefs.jsonl", R"({"prediction": "a", "references": []})");
  EXPECT_EQ(run("bleu", {}, no_refs), no_refs + ":1: field \"references\" must be a non-empty array of strings");
  const std::string not_object = write("array.jsonl", "[1, 2]");
  EXPECT_EQ(run("bleu", {}, not_object), not_object + ":1: expected a JSON object, got array");
  const std::string no_classes = write("cls.jsonl", good);
  EXPECT_EQ(run("longbench.classification_score", {}, no_classes), no_classes + ":1: missing field \"all_classes\"");
  // Unknown fields are errors (a field the scorer ignored could be one the user meant to count);
  // "id" is a label any line may carry, "all_classes" belongs to classification only.
  const std::string unknown = write("unk.jsonl", good + "\n" + R"({"prediction": "a", "references": ["x"], "foo": 1})");
  EXPECT_EQ(run("bleu", {}, unknown), unknown + ":2: foo: unknown field (expected one of: prediction, references, id)");
  const std::string per_line_dataset =
      write("ds.jsonl", R"({"prediction": "a", "references": ["a"], "dataset": "trec"})");
  EXPECT_EQ(run("longbench.qa_f1_score", {}, per_line_dataset),
            per_line_dataset + ":1: dataset: unknown field (expected one of: prediction, references, id)");
  const std::string stray_classes = write("sc.jsonl", R"({"prediction": "a", "references": ["a"], "all_classes": []})");
  EXPECT_EQ(run("squad", {}, stray_classes),
            stray_classes + ":1: all_classes: unknown field (expected one of: prediction, references, id)");
  const std::string with_id =
      write("id.jsonl", R"({"id": "q1", "prediction": "a", "references": ["a"], "all_classes": ["a", "b"]})");
  EXPECT_EQ(run("longbench.classification_score", {}, with_id), "");
  EXPECT_EQ(run("self_bleu", {}, write("sid.jsonl", R"({"id": 3, "sentences": ["a b", "a c"]})")), "");
  EXPECT_EQ(run("self_bleu", {}, write("sp.jsonl", R"({"sentences": ["a b", "a c"], "prediction": "a"})")),
            (dir_ / "sp.jsonl").string() + ":1: prediction: unknown field (expected one of: sentences, id)");
  const std::string no_sentences = write("nos.jsonl", good);
  EXPECT_EQ(run("self_bleu", {}, no_sentences), no_sentences + ":1: missing field \"sentences\"");
  EXPECT_NE(run("bleu", {}, write("empty.jsonl", "\n  \n")).find("no examples"), std::string::npos);
  EXPECT_NE(run("bleu", {}, (dir_ / "absent.jsonl").string()).find("cannot open"), std::string::npos);

  // A scorer failing on one example names its line (the command adds the file).
  const std::string one_sentence = write("sb.jsonl", R"({"sentences": ["a b", "c d"]})" "\n" R"({"sentences": ["a b c"]})");
  auto scorer = harness::make_metric_scorer("self_bleu", {});
  try {
    scorer->score(harness::read_score_examples(one_sentence, *scorer), false);
    ADD_FAILURE() << "no error";
  } catch (const harness::ScoreLineError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("needs at least 2 sentences"), std::string::npos) << e.what();
  }

  const std::string ok = write("ok.jsonl", good);
  EXPECT_NE(run("blue", {}, ok).find("unknown metric 'blue' (known: rouge, rouge_pltrdy, bleu, meteor"), std::string::npos);
  EXPECT_EQ(run("bleu", {{"tokenize", "zh"}}, ok), "bleu: parameter tokenize=zh is not one of 13a, intl, none");
  EXPECT_EQ(run("rouge", {{"stemmer", "yes"}}, ok), "rouge: parameter stemmer=yes must be true or false");
  EXPECT_EQ(run("self_bleu", {{"ngram", "0"}}, ok), "self_bleu: parameter ngram=0 must be an integer in 1..255");
  EXPECT_EQ(run("meteor", {{"alpha", "x"}}, ok), "meteor: parameter alpha=x must be a finite number");
  // nltk's ranges (see meteor_metric): out of them the score is NaN, negative or above fmean.
  EXPECT_EQ(run("meteor", {{"alpha", "-1"}}, ok), "meteor: parameter alpha=-1 must be a number in [0, 1]");
  EXPECT_EQ(run("meteor", {{"alpha", "5"}}, ok), "meteor: parameter alpha=5 must be a number in [0, 1]");
  EXPECT_EQ(run("meteor", {{"beta", "-3"}}, ok), "meteor: parameter beta=-3 must be a finite number >= 0");
  EXPECT_EQ(run("meteor", {{"gamma", "1e308"}}, ok), "meteor: parameter gamma=1e308 must be a number in [0, 1]");
  EXPECT_NE(run("meteor", {{"delta", "0.5"}}, ok).find("unknown parameter 'delta' for metric meteor"), std::string::npos);
  EXPECT_EQ(run("meteor", {{"alpha", "0"}, {"beta", "0"}, {"gamma", "1"}}, ok), "");
  EXPECT_EQ(run("bleu", {{"smooth_value", "0.5"}}, ok),
            "bleu: parameter smooth_value is used only by smooth_method floor and add-k (not exp)");
  EXPECT_EQ(run("bleu", {{"smooth_method", "none"}, {"smooth_value", "0.5"}}, ok),
            "bleu: parameter smooth_value is used only by smooth_method floor and add-k (not none)");
  EXPECT_EQ(run("bleu", {{"smooth_method", "add-k"}, {"smooth_value", "-1"}}, ok),
            "bleu: parameter smooth_value=-1 must be a finite number >= 0");
  EXPECT_EQ(run("bleu", {{"smooth_method", "floor"}, {"smooth_value", "0"}}, ok), "");
  EXPECT_EQ(run("squad", {{"stemmer", "true"}}, ok), "unknown parameter 'stemmer' for metric squad (accepted: none)");
  EXPECT_NE(run("bleu", {{"level", "corpus"}}, ok, true).find("no per-example"), std::string::npos);
  EXPECT_NE(run("longbench.rouge_zh_score", {}, ok).find("unknown metric longbench.rouge_zh_score"), std::string::npos);
  EXPECT_EQ(run("longbench.qa_f1_score", {{"dataset", "trec"}}, ok),
            "longbench.qa_f1_score: dataset trec is scored with classification_score");
}

}  // namespace
}  // namespace kvbench::testing

namespace kvbench::testing {
namespace {

// The answer graders through the score command's reader: extraction and correctness per line,
// accuracy over the file, the choices read from all_classes where the grader needs them.
TEST_F(ScoreCli, AnswerGradersScoreExtractedAnswers) {
  const std::string math = write_lines("math.jsonl", {{{"prediction", "so $\\boxed{\\dfrac{1}{2}}$"}, {"references", {"0.5"}}},
                                                      {{"prediction", "no box, 5"}, {"references", {"5"}}}});
  const json m = score_in_process("math.boxed_equiv", {}, math, true);
  EXPECT_EQ(m.at("aggregate").at("accuracy"), 0.5);
  EXPECT_EQ(m.at("per_example").at(0), (json{{"extracted", "\\dfrac{1}{2}"}, {"correct", true}}));
  EXPECT_EQ(m.at("per_example").at(1), (json{{"extracted", nullptr}, {"correct", false}}));
  const std::string gpqa = write_lines("gpqa.jsonl", {{{"prediction", "It is fermentation."}, {"references", {"(C)"}},
                                                       {"all_classes", {"Photosynthesis", "Respiration", "Fermentation", "Glycolysis"}}}});
  EXPECT_EQ(score_in_process("gpqa.flexible", {}, gpqa, true).at("per_example").at(0).at("extracted"), "(C)");
  EXPECT_THROW(score_in_process("gpqa.flexible", {}, math, true), std::invalid_argument);  // no all_classes
}

}  // namespace
}  // namespace kvbench::testing
