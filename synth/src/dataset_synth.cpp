#include "cuset/synth/dataset_synth.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/version.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/synth/op_family.hpp"
#include "cuset/trainer/problem_prompt.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset::synth {
namespace {

// Three distances from the training data: a new instance of a trained variant (other sizes and tensor
// names: its problem text never occurs in training), a variant never trained on (a new combination of
// op, constants, dtype and layout), and a family never trained on.
enum class Role { train, unseenInstance, unseenVariant, unseenFamily };

std::string_view roleName(Role r) {
  switch (r) {
    case Role::unseenInstance:
      return "unseen_instance";
    case Role::unseenVariant:
      return "unseen_variant";
    case Role::unseenFamily:
      return "unseen_family";
    default:
      return "train";
  }
}

std::string problemText(const SynthProblem& p) { return p.description + "\n" + p.reference; }

struct Planned {
  SynthInstance instance;
  Role role = Role::train;
  std::string instruction;
  std::string instructionStyle;
  std::string problemId() const { return "level1/" + instance.problem.name; }
};

std::string identifier(std::string_view key) {
  std::string s;
  for (char c : key) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

// Variants never trained on: the given share of each training family's variants with the smallest
// seeded hash (at least one, never all), so the split is stable for a seed and spreads over ops.
std::set<std::size_t> heldoutVariants(const OpFamily& family, std::uint64_t seed, double fraction) {
  const std::size_t n = family.variantCount();
  std::vector<std::pair<std::uint64_t, std::size_t>> order;
  for (std::size_t v = 0; v < n; ++v) order.emplace_back(hashString(fmt::format("{}#{}", family.variantKey(v), seed)).low, v);
  std::sort(order.begin(), order.end());
  const auto count = std::clamp<std::size_t>(static_cast<std::size_t>(fraction * static_cast<double>(n) + 0.5), 1, n - 1);
  std::set<std::size_t> out;
  for (std::size_t i = 0; i < count; ++i) out.insert(order[i].second);
  return out;
}

std::string tensorSummary(const Problem& p) {
  std::vector<std::string> parts;
  for (const auto* list : {&p.inputs, &p.outputs}) {
    for (const auto& t : *list) {
      std::vector<std::string> dims;
      for (const auto& d : t.shape) dims.push_back(d.text());
      parts.push_back(fmt::format("{}: {} [{}]", t.name, dtypeName(t.dtype), fmt::join(dims, ", ")));
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Training instructions: mostly the exact prompt `cuset generate` renders (so a model is asked the way
// it was taught), the rest reworded so it does not learn one phrasing only.
std::pair<std::string, std::string> instructionFor(const Problem& p, SynthRng& rng, double canonicalShare) {
  if (rng.chance(canonicalShare)) return {renderProblemPrompt(p), "canonical"};
  if (rng.chance(0.5)) {
    return {fmt::format("Implement `{}` as a CUDA kernel.\n{}\nTensors: {}.\nReply with the kernel and its /*@cuset launch manifest.", p.name,
                        p.description, tensorSummary(p)),
            "short"};
  }
  return {fmt::format("{}\n\nWrite this as a CUDA kernel with a /*@cuset launch manifest (sizes are named in the manifest). Tensors: {}.",
                      p.description, tensorSummary(p)),
          "task-first"};
}

std::vector<const OpFamily*> resolveFamilies(const std::vector<std::string>& names, const std::string& option) {
  std::vector<const OpFamily*> out;
  for (const auto& n : names) {
    const OpFamily* f = findFamily(n);
    if (f == nullptr) {
      std::vector<std::string> known;
      for (const auto& k : allFamilies()) known.emplace_back(k->name());
      throw Error(fmt::format("{}: unknown family '{}' (known: {})", option, n, fmt::join(known, ", ")));
    }
    out.push_back(f);
  }
  return out;
}

json familyCard(const OpFamily& f, std::string_view role, const std::vector<Planned>& plans, const std::map<std::string, bool>& accepted,
                std::size_t heldoutVariantCount) {
  std::map<std::string, std::size_t> impls;
  std::map<std::string, std::size_t> dtypes;
  std::size_t samples = 0, rejected = 0, heldout = 0;
  for (const auto& p : plans) {
    if (p.instance.family != f.name()) continue;
    const bool ok = accepted.at(p.problemId());
    if (p.role != Role::train) {
      heldout += ok ? 1 : 0;
      continue;
    }
    if (!ok) {
      ++rejected;
      continue;
    }
    ++samples;
    ++impls[p.instance.implementation.substr(0, p.instance.implementation.find(' '))];
    ++dtypes[std::string(dtypeName(p.instance.problem.outputs.front().dtype))];
  }
  return {{"name", f.name()},
          {"summary", f.summary()},
          {"role", role},
          {"variants", f.variantCount()},
          {"heldout_variants", heldoutVariantCount},
          {"samples", samples},
          {"rejected", rejected},
          {"heldout_problems", heldout},
          {"implementations", impls},
          {"output_dtypes", dtypes}};
}

std::string cardMarkdown(const json& card) {
  std::string md = fmt::format(
      "# Dataset card: {}\n\nGenerated by `cuset data synth` ({}), seed {}. Every response was run on the `sim` backend against the "
      "problem's LibTorch reference ({} trials with fresh inputs) before it entered the dataset.\n\n"
      "- training samples: **{}** ({} rejected by verification)\n- held-out problems (`{}`): **{}** unseen instances of trained variants "
      "(new sizes and tensor names), **{}** unseen variants of training families (new op / constant / dtype / layout combinations), **{}** "
      "from families never trained on\n- instruction wording: {}\n\n"
      "| family | role | variants | held-out variants | samples | rejected | held-out problems | implementations "
      "|\n|---|---|---|---|---|---|---|---|\n",
      card["train_file"].get<std::string>(), card["generator_version"].get<std::string>(), card["seed"].get<std::uint64_t>(),
      card["verification"]["trials"].get<int>(), card["samples"].get<std::size_t>(), card["rejected"].get<std::size_t>(),
      card["heldout"]["dir"].get<std::string>(), card["heldout"]["unseen_instances"].get<std::size_t>(),
      card["heldout"]["unseen_variants"].get<std::size_t>(), card["heldout"]["unseen_families"].get<std::size_t>(),
      card["instruction_styles"].dump());
  for (const auto& f : card["families"]) {
    std::vector<std::string> impls;
    for (const auto& [k, v] : f["implementations"].items()) impls.push_back(fmt::format("{} {}", k, v.get<std::size_t>()));
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", f["name"].get<std::string>(), f["role"].get<std::string>(),
                      f["variants"].get<std::size_t>(), f["heldout_variants"].get<std::size_t>(), f["samples"].get<std::size_t>(),
                      f["rejected"].get<std::size_t>(), f["heldout_problems"].get<std::size_t>(), fmt::join(impls, ", "));
  }
  if (!card["rejects"].empty()) {
    md += "\n## Rejected responses\n\n| problem | variant | verdict | reason |\n|---|---|---|---|\n";
    for (const auto& r : card["rejects"]) {
      md += fmt::format("| {} | {} | {} | {} |\n", r["problem"].get<std::string>(), r["key"].get<std::string>(), r["verdict"].get<std::string>(),
                        r["reason"].get<std::string>());
    }
  }
  md += "\nVariants never in training (the unseen-variant set draws from these): " +
        fmt::format("`{}`\n", fmt::join(card["heldout"]["variants"].get<std::vector<std::string>>(), "`, `"));
  return md;
}

}  // namespace

SynthPaths SynthPaths::forOutput(const fs::path& out) {
  const fs::path stem = out.parent_path() / out.stem();
  return {out, fs::path(stem.string() + ".card.json"), fs::path(stem.string() + ".card.md"), fs::path(stem.string() + "-heldout"),
          fs::path(stem.string() + ".verify")};
}

namespace {

// Which families are trained on and which are held out whole.
struct FamilySplit {
  std::vector<const OpFamily*> train;
  std::vector<const OpFamily*> heldout;
};

void requireValidOptions(const SynthOptions& o) {
  if (o.out.empty()) throw Error("data synth: --out is required");
  if (o.perFamily == 0 || o.perFamily > 100000) throw Error(fmt::format("data synth: --per-family must be in 1..100000 (got {})", o.perFamily));
  if (!(o.heldoutVariantFraction > 0.0 && o.heldoutVariantFraction < 1.0)) throw Error("data synth: the held-out variant fraction must be in (0, 1)");
}

FamilySplit splitFamilies(const SynthOptions& o) {
  FamilySplit split;
  split.heldout = resolveFamilies(o.heldoutFamilies, "--heldout-families");
  const auto heldOut = [&](const OpFamily* f) { return std::find(split.heldout.begin(), split.heldout.end(), f) != split.heldout.end(); };
  if (o.families.empty()) {
    for (const auto& f : allFamilies()) {
      if (!heldOut(f.get())) split.train.push_back(f.get());
    }
  } else {
    split.train = resolveFamilies(o.families, "--families");
    for (const auto* f : split.train) {
      if (heldOut(f)) throw Error(fmt::format("data synth: family '{}' is both trained on and held out", f->name()));
    }
  }
  if (split.train.empty()) throw Error("data synth: no training families left");
  return split;
}

// Every instance to realise: training samples, then the three held-out sets. One rng draws them all,
// in this order, so a seed gives one dataset.
struct SynthPlan {
  std::vector<Planned> plans;
  std::map<std::string, std::set<std::size_t>> heldoutByFamily;     // variants never trained on
  std::map<std::string, std::vector<std::size_t>> trainedByFamily;  // variants that have training samples
  std::vector<std::string> heldoutKeys;
};

void planTrainingSamples(const SynthOptions& o, const FamilySplit& families, SynthRng& rng, SynthPlan& plan) {
  std::size_t counter = 0;
  for (const auto* f : families.train) {
    const auto held = heldoutVariants(*f, o.seed, o.heldoutVariantFraction);
    plan.heldoutByFamily[std::string(f->name())] = held;
    for (auto v : held) plan.heldoutKeys.push_back(f->variantKey(v));
    std::vector<std::size_t> trainable;
    for (std::size_t v = 0; v < f->variantCount(); ++v) {
      if (!held.contains(v)) trainable.push_back(v);
    }
    for (std::size_t i = 0; i < o.perFamily; ++i) {
      const std::size_t v = trainable[i < trainable.size() ? i : rng.below(trainable.size())];  // every variant at least once
      if (i < trainable.size()) plan.trainedByFamily[std::string(f->name())].push_back(v);
      plan.plans.push_back({f->realize(v, fmt::format("s{:05}_{}", counter++, identifier(f->variantKey(v))), rng), Role::train, "", ""});
    }
  }
}

// Trained variants, redrawn until the problem text is new.
void planUnseenInstances(const SynthOptions& o, const FamilySplit& families, SynthRng& rng, SynthPlan& plan) {
  std::set<std::string> trainTexts;
  for (const auto& p : plan.plans) trainTexts.insert(problemText(p.instance.problem));
  for (std::size_t i = 0, attempts = 0; i < o.heldoutInstances && attempts < 50 * (o.heldoutInstances + 1); ++attempts) {
    const OpFamily* f = families.train[attempts % families.train.size()];  // a family whose texts are all taken cannot stall the rest
    const std::size_t v = rng.pick(plan.trainedByFamily[std::string(f->name())]);
    SynthInstance inst = f->realize(v, fmt::format("hi_{}_{}", identifier(f->variantKey(v)), i), rng);
    if (trainTexts.contains(problemText(inst.problem))) continue;
    trainTexts.insert(problemText(inst.problem));
    plan.plans.push_back({std::move(inst), Role::unseenInstance, "", ""});
    ++i;
  }
}

// Round-robin over the training families' held-out variants.
void planUnseenVariants(const SynthOptions& o, const FamilySplit& families, SynthRng& rng, SynthPlan& plan) {
  std::vector<std::pair<const OpFamily*, std::vector<std::size_t>>> queues;
  for (const auto* f : families.train) {
    const auto& held = plan.heldoutByFamily[std::string(f->name())];
    queues.emplace_back(f, std::vector<std::size_t>(held.begin(), held.end()));
  }
  std::size_t taken = 0;
  for (std::size_t round = 0; taken < o.heldoutVariants; ++round) {
    bool any = false;
    for (auto& [f, vs] : queues) {
      if (round < vs.size() && taken < o.heldoutVariants) {
        plan.plans.push_back({f->realize(vs[round], fmt::format("hv_{}", identifier(f->variantKey(vs[round]))), rng), Role::unseenVariant, "", ""});
        ++taken;
        any = true;
      }
    }
    if (!any) break;
  }
}

void planUnseenFamilies(const SynthOptions& o, const FamilySplit& families, SynthRng& rng, SynthPlan& plan) {
  for (const auto* f : families.heldout) {
    for (std::size_t i = 0; i < o.heldoutPerFamily; ++i) {
      const std::size_t v = i % f->variantCount();
      plan.plans.push_back(
          {f->realize(v, fmt::format("hf_{}_{}", identifier(f->variantKey(v)), i / f->variantCount()), rng), Role::unseenFamily, "", ""});
    }
  }
}

SynthPlan planInstances(const SynthOptions& o, const FamilySplit& families, SynthRng& rng) {
  SynthPlan plan;
  planTrainingSamples(o, families, rng, plan);
  planUnseenInstances(o, families, rng, plan);
  planUnseenVariants(o, families, rng, plan);
  planUnseenFamilies(o, families, rng, plan);
  if (o.alterInstance) {
    for (auto& p : plan.plans) o.alterInstance(p.instance);
  }
  return plan;
}

// The verification suite and its candidates, and each training sample's instruction; parsing each
// problem back also validates the generator.
void writeVerificationSuite(const SynthOptions& o, const SynthPaths& paths, SynthRng& rng, std::vector<Planned>& plans) {
  fs::remove_all(paths.verifyDir);
  const fs::path verifyProblems = paths.verifyDir / "problems";
  std::string candidates;
  for (auto& plan : plans) {
    const SynthProblem& sp = plan.instance.problem;
    const fs::path dir = verifyProblems / "level1" / sp.name;
    fs::create_directories(dir);
    const std::string yaml = sp.yaml();
    writeFileAtomic(dir / "problem.yaml", yaml);
    const Problem problem = parseProblem(yaml, (dir / "problem.yaml").string(), dir);
    if (plan.role == Role::train) std::tie(plan.instruction, plan.instructionStyle) = instructionFor(problem, rng, o.canonicalPromptShare);
    candidates += json{{"problem", plan.problemId()}, {"sample", 0}, {"model", "synth"}, {"response", plan.instance.response}}.dump() + "\n";
  }
  writeFileAtomic(paths.verifyDir / "candidates.jsonl", candidates);
}

EvalRunSummary verifyResponses(const SynthOptions& o, const SynthPaths& paths, std::size_t count) {
  EvalConfig eval;
  eval.problemsDir = paths.verifyDir / "problems";
  eval.candidatesPath = paths.verifyDir / "candidates.jsonl";
  eval.outDir = paths.verifyDir / "run";
  eval.backend = BackendKind::sim;
  eval.seed = o.seed * 7919 + 17;
  eval.trials = o.trials;
  eval.jobs = o.jobs;
  eval.showProgress = o.showProgress;
  if (!o.cacheDir.empty()) eval.cacheDir = o.cacheDir;
  eval.commandLine = {"cuset", "data", "synth", "(verification)"};
  log::info("data synth: verifying {} responses on the sim backend", count);
  return runEvaluation(eval);
}

// Which responses the evaluator judged correct; the others with their verdicts, for the card.
struct Verification {
  std::map<std::string, bool> accepted;  // problem id -> judged correct
  json rejects = json::array();
};

Verification acceptVerified(const std::vector<Planned>& plans, const EvalRunSummary& verified) {
  Verification v;
  std::map<std::string, const EvalResult*> byProblem;
  for (const auto& r : verified.results) byProblem[r.problem] = &r;
  for (const auto& plan : plans) {
    const auto it = byProblem.find(plan.problemId());
    const bool ok = it != byProblem.end() && it->second->verdict == Verdict::correct;
    v.accepted[plan.problemId()] = ok;
    if (ok) continue;
    v.rejects.push_back({{"problem", plan.problemId()},
                         {"key", plan.instance.key},
                         {"role", roleName(plan.role)},
                         {"verdict", it == byProblem.end() ? "missing" : std::string(verdictName(it->second->verdict))},
                         {"reason", it == byProblem.end() ? "" : it->second->reason.substr(0, 300)}});
  }
  return v;
}

// The held-out suite: each problem with its verified solution, and the set it belongs to. Returns the
// number of problems per set.
std::map<Role, std::size_t> writeHeldoutSuite(const SynthOptions& o, const SynthPaths& paths, const std::vector<Planned>& plans,
                                              const Verification& verification) {
  fs::remove_all(paths.heldoutDir);
  json heldoutIndex = json::array();
  std::map<Role, std::size_t> perSet;
  for (const auto& plan : plans) {
    if (plan.role == Role::train || !verification.accepted.at(plan.problemId())) continue;
    const fs::path dir = paths.heldoutDir / "level1" / plan.instance.problem.name;
    fs::create_directories(dir / "solutions");
    writeFileAtomic(dir / "problem.yaml", plan.instance.problem.yaml());
    // The evaluator's own extraction: the solution is exactly the code it judged.
    writeFileAtomic(dir / "solutions" / "reference.cu", extractCodeFromResponse(plan.instance.response).value());
    heldoutIndex.push_back({{"id", plan.problemId()}, {"set", roleName(plan.role)}, {"family", plan.instance.family}, {"key", plan.instance.key}});
    ++perSet[plan.role];
  }
  writeFileAtomic(paths.heldoutDir / "heldout.json",
                  json{{"train_file", paths.train.filename().string()}, {"seed", o.seed}, {"problems", heldoutIndex}}.dump(2) + "\n");
  return perSet;
}

// The training file, written whole and renamed into place. Returns the samples per instruction style.
std::map<std::string, std::size_t> writeTrainingFile(const SynthPaths& paths, const std::vector<Planned>& plans, const Verification& verification) {
  std::string lines;
  std::map<std::string, std::size_t> styles;
  for (const auto& plan : plans) {
    if (plan.role != Role::train || !verification.accepted.at(plan.problemId())) continue;
    ++styles[plan.instructionStyle];
    lines += json{{"instruction", plan.instruction},
                  {"response", plan.instance.response},
                  {"family", plan.instance.family},
                  {"key", plan.instance.key},
                  {"implementation", plan.instance.implementation},
                  {"problem", plan.instance.problem.name},
                  {"problem_yaml", plan.instance.problem.yaml()}}
                 .dump() +
             "\n";
  }
  if (!paths.train.parent_path().empty()) fs::create_directories(paths.train.parent_path());
  writeFileAtomic(paths.train, lines);
  return styles;
}

void writeDatasetCard(const SynthOptions& o, const SynthSummary& summary, const FamilySplit& families, SynthPlan& plan,
                      const Verification& verification, const std::map<std::string, std::size_t>& styles, std::map<Role, std::size_t>& perSet) {
  const SynthPaths& paths = summary.paths;
  json familiesCard = json::array();
  for (const auto* f : families.train) {
    familiesCard.push_back(familyCard(*f, "train", plan.plans, verification.accepted, plan.heldoutByFamily[std::string(f->name())].size()));
  }
  for (const auto* f : families.heldout) familiesCard.push_back(familyCard(*f, "heldout", plan.plans, verification.accepted, f->variantCount()));
  std::sort(plan.heldoutKeys.begin(), plan.heldoutKeys.end());
  const json card = {
      {"schema_version", 1},
      {"generator_version", fmt::format("cuset {} ({})", kVersion, gitRevision())},
      {"train_file", paths.train.filename().string()},
      {"seed", o.seed},
      {"per_family", o.perFamily},
      {"samples", summary.samples},
      {"rejected", summary.rejected},
      {"rejects", verification.rejects},
      {"families", familiesCard},
      {"instruction_styles", styles},
      {"verification", {{"backend", "sim"}, {"trials", o.trials}, {"run", (paths.verifyDir / "run").string()}}},
      {"heldout",
       {{"dir", paths.heldoutDir.filename().string()},
        {"unseen_instances", perSet[Role::unseenInstance]},
        {"unseen_variants", perSet[Role::unseenVariant]},
        {"unseen_families", perSet[Role::unseenFamily]},
        {"variants", plan.heldoutKeys},
        {"leak_check", "passed"}}},
  };
  writeFileAtomic(paths.cardJson, card.dump(2) + "\n");
  writeFileAtomic(paths.cardMarkdown, cardMarkdown(card));
}

}  // namespace

SynthSummary runSynth(const SynthOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  requireValidOptions(o);
  const FamilySplit families = splitFamilies(o);
  SynthSummary summary;
  summary.paths = SynthPaths::forOutput(o.out);
  const SynthPaths& paths = summary.paths;
  SynthRng rng(o.seed);
  SynthPlan plan = planInstances(o, families, rng);

  writeVerificationSuite(o, paths, rng, plan.plans);
  const Verification verification = acceptVerified(plan.plans, verifyResponses(o, paths, plan.plans.size()));
  std::map<Role, std::size_t> perSet = writeHeldoutSuite(o, paths, plan.plans, verification);
  const std::map<std::string, std::size_t> styles = writeTrainingFile(paths, plan.plans, verification);
  for (const auto& [style, n] : styles) summary.samples += n;
  summary.rejected = verification.rejects.size();
  summary.heldoutProblems = perSet[Role::unseenInstance] + perSet[Role::unseenVariant] + perSet[Role::unseenFamily];

  const auto leaks = findHeldoutLeaks(paths.train, paths.heldoutDir);
  if (!leaks.empty()) throw Error(fmt::format("data synth: held-out problems leaked into {}: {}", paths.train.string(), fmt::join(leaks, "; ")));
  writeDatasetCard(o, summary, families, plan, verification, styles, perSet);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::vector<std::string> findHeldoutLeaks(const fs::path& trainFile, const fs::path& heldoutDir) {
  std::set<std::string> trainKeys;
  std::set<std::string> trainTexts;
  std::ifstream in(trainFile);
  if (!in) throw Error(fmt::format("{}: cannot open", trainFile.string()));
  std::string line;
  std::size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) continue;
    json r;
    try {
      r = json::parse(line);
    } catch (const json::exception& e) {
      throw Error(fmt::format("{}:{}: not JSON ({})", trainFile.string(), lineNo, e.what()));
    }
    if (r.contains("key")) trainKeys.insert(r["key"].get<std::string>());
    if (r.contains("problem_yaml")) {
      const Problem p = parseProblem(r["problem_yaml"].get<std::string>(), fmt::format("{}:{}", trainFile.string(), lineNo), {});
      trainTexts.insert(p.description + "\n" + p.reference);
    }
  }
  const json index = json::parse(readFile(heldoutDir / "heldout.json"));
  std::vector<std::string> leaks;
  const ProblemSuite suite = ProblemSuite::load(heldoutDir);
  suite.requireNoErrors();
  for (const auto& entry : index["problems"]) {
    const std::string id = entry["id"].get<std::string>();
    const bool keyMustBeNew = entry.value("set", "") != "unseen_instance";
    if (keyMustBeNew && trainKeys.contains(entry["key"].get<std::string>()))
      leaks.push_back(fmt::format("{} (variant {})", id, entry["key"].get<std::string>()));
    const Problem* p = suite.find(id);
    if (p == nullptr) {
      leaks.push_back(fmt::format("{} (listed in heldout.json but missing)", id));
    } else if (trainTexts.contains(p->description + "\n" + p->reference)) {
      leaks.push_back(fmt::format("{} (same description and reference as a training sample)", id));
    }
  }
  return leaks;
}

}  // namespace cuset::synth
