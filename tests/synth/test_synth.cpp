#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/synth/dataset_synth.hpp"
#include "cuset/synth/op_family.hpp"
#include "test_util.hpp"

namespace cuset::synth {
namespace {

using nlohmann::json;

std::vector<json> readJsonl(const std::filesystem::path& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// Every variant of every family gives a problem.yaml the evaluator accepts and a response whose
// manifest parses against that problem: generator bugs show up here without running anything.
TEST(SynthFamilies, EveryVariantParsesAsProblemAndCandidate) {
  std::set<std::string> keys;
  SynthRng rng(3);
  for (const auto& family : allFamilies()) {
    ASSERT_GT(family->variantCount(), 1u) << family->name();
    for (std::size_t v = 0; v < family->variantCount(); ++v) {
      const std::string key = family->variantKey(v);
      EXPECT_TRUE(keys.insert(key).second) << "duplicate variant key " << key;
      EXPECT_EQ(key.rfind(std::string(family->name()) + "/", 0), 0u) << key;
      const SynthInstance inst = family->realize(v, "p_" + std::to_string(v), rng);
      EXPECT_EQ(inst.key, key);
      SCOPED_TRACE(inst.problem.yaml());
      const Problem problem = parseProblem(inst.problem.yaml(), key, {});
      EXPECT_EQ(problem.name, "p_" + std::to_string(v));
      const auto source = extractCodeFromResponse(inst.response);
      ASSERT_TRUE(source.ok()) << inst.response;
      const auto manifest = parseLaunchManifest(*source, problem);
      EXPECT_TRUE(manifest.ok()) << (manifest.ok() ? std::string() : manifest.error()) << "\n" << inst.response;
    }
  }
  EXPECT_GT(keys.size(), 150u);
}

TEST(SynthFamilies, SameSeedSameInstance) {
  const OpFamily* unary = findFamily("unary");
  ASSERT_NE(unary, nullptr);
  EXPECT_EQ(findFamily("no-such-family"), nullptr);
  SynthRng a(42), b(42), c(43);
  std::string ya, yb, yc;
  for (int i = 0; i < 5; ++i) {
    ya += unary->realize(7, "x", a).response;
    yb += unary->realize(7, "x", b).response;
    yc += unary->realize(7, "x", c).problem.yaml();
  }
  EXPECT_EQ(ya, yb);
  EXPECT_NE(yc, "");
}

class SynthDataset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("CUSET_WORKER", CUSET_BINARY, 1); }
  static SynthOptions smallOptions(const std::filesystem::path& out) {
    SynthOptions o;
    o.out = out;
    o.families = {"unary", "reduce"};
    o.heldoutFamilies = {"scan"};
    o.perFamily = 6;
    o.heldoutInstances = 3;
    o.heldoutVariants = 2;
    o.heldoutPerFamily = 2;
    o.trials = 1;
    o.seed = 5;
    o.showProgress = false;
    return o;
  }
};

TEST_F(SynthDataset, WritesVerifiedSamplesHeldOutSuiteAndCardWithoutLeaks) {
  test::TempDir dir;
  const SynthSummary s = runSynth(smallOptions(dir / "d/train.jsonl"));
  EXPECT_EQ(s.samples, 12u);
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_EQ(s.heldoutProblems, 7u);
  const auto records = readJsonl(s.paths.train);
  ASSERT_EQ(records.size(), 12u);
  std::set<std::string> trainKeys, trainTexts;
  for (const auto& r : records) {
    const Problem p = parseProblem(r["problem_yaml"].get<std::string>(), "record", {});
    trainTexts.insert(p.description + "\n" + p.reference);
    for (const char* field : {"instruction", "response", "family", "key", "problem_yaml"}) EXPECT_TRUE(r.contains(field)) << field;
    EXPECT_NE(r["family"], "scan");
    trainKeys.insert(r["key"].get<std::string>());
  }
  const json card = json::parse(test::readText(s.paths.cardJson));
  EXPECT_EQ(card["samples"], 12);
  EXPECT_EQ(card["heldout"]["unseen_families"], 2);
  EXPECT_EQ(card["heldout"]["unseen_instances"], 3);
  EXPECT_EQ(card["heldout"]["unseen_variants"], 2);
  EXPECT_EQ(card["heldout"]["leak_check"], "passed");
  EXPECT_NE(test::readText(s.paths.cardMarkdown).find("| unary | train |"), std::string::npos);

  // The held-out suite loads, carries a verified solution per problem, and shares nothing with training.
  const ProblemSuite suite = ProblemSuite::load(s.paths.heldoutDir);
  suite.requireNoErrors();
  EXPECT_EQ(suite.problems().size(), 7u);
  const json index = json::parse(test::readText(s.paths.heldoutDir / "heldout.json"));
  std::map<std::string, int> sets;
  json variantEntry;
  for (const auto& p : index["problems"]) {
    const std::string set = p["set"].get<std::string>();
    ++sets[set];
    // Unseen instances are of trained variants but never with a training problem's text; the other
    // sets never share a variant with training.
    if (set == "unseen_instance") {
      EXPECT_TRUE(trainKeys.contains(p["key"].get<std::string>())) << p.dump();
    } else {
      EXPECT_FALSE(trainKeys.contains(p["key"].get<std::string>())) << p.dump();
      if (set == "unseen_variant") variantEntry = p;
    }
    const Problem* problem = suite.find(p["id"].get<std::string>());
    ASSERT_NE(problem, nullptr);
    EXPECT_FALSE(trainTexts.contains(problem->description + "\n" + problem->reference)) << p.dump();
    EXPECT_TRUE(std::filesystem::exists(s.paths.heldoutDir / p["id"].get<std::string>() / "solutions" / "reference.cu"));
  }
  EXPECT_EQ(sets, (std::map<std::string, int>{{"unseen_family", 2}, {"unseen_instance", 3}, {"unseen_variant", 2}}));
  EXPECT_TRUE(findHeldoutLeaks(s.paths.train, s.paths.heldoutDir).empty());

  // A training record carrying a held-out variant is found by the leak check.
  const json leaked = {{"instruction", "i"}, {"response", "r"}, {"key", variantEntry["key"]}};
  std::ofstream(s.paths.train, std::ios::app) << leaked.dump() << "\n";
  const auto leaks = findHeldoutLeaks(s.paths.train, s.paths.heldoutDir);
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_NE(leaks[0].find(variantEntry["id"].get<std::string>()), std::string::npos);
}

// The verification is real: a response with an off-by-one bound never reaches the dataset.
TEST_F(SynthDataset, VerificationRejectsWrongResponses) {
  test::TempDir dir;
  SynthOptions o = smallOptions(dir / "train.jsonl");
  o.families = {"unary"};
  o.heldoutFamilies = {"scan"};
  int broken = 0;
  o.alterInstance = [&broken](SynthInstance& inst) {
    // Break every other guarded elementwise kernel: drop the last element.
    const auto at = inst.response.find("if (i < n)");
    if (at != std::string::npos && broken % 2 == 0) inst.response.replace(at, 10, "if (i < n - 1)");
    if (at != std::string::npos) ++broken;
  };
  const SynthSummary s = runSynth(o);
  ASSERT_GT(broken, 0);
  EXPECT_GT(s.rejected, 0u);
  const json card = json::parse(test::readText(s.paths.cardJson));
  EXPECT_EQ(card["rejected"].get<std::size_t>(), s.rejected);
  for (const auto& r : card["rejects"]) EXPECT_EQ(r["verdict"], "wrong_answer") << r.dump();
  for (const auto& r : readJsonl(s.paths.train)) EXPECT_EQ(r["response"].get<std::string>().find("n - 1)"), std::string::npos);
}

TEST_F(SynthDataset, BadOptionsNameTheProblem) {
  test::TempDir dir;
  SynthOptions o = smallOptions(dir / "t.jsonl");
  o.families = {"unary", "nope"};
  CUSET_EXPECT_THROW_WITH(runSynth(o), "--families", "nope", "known:");
  o.families = {"scan"};
  CUSET_EXPECT_THROW_WITH(runSynth(o), "scan", "both trained on and held out");
  o = smallOptions(dir / "t.jsonl");
  o.perFamily = 0;
  CUSET_EXPECT_THROW_WITH(runSynth(o), "--per-family");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.jsonl"));
}

}  // namespace
}  // namespace cuset::synth
