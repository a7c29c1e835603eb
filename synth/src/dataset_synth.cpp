#include "cuset/synth/dataset_synth.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
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
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
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
    case Role::unseenInstance: return "unseen_instance";
    case Role::unseenVariant: return "unseen_variant";
    case Role::unseenFamily: return "unseen_family";
    default: return "train";
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
  return {{"name", f.name()},          {"summary", f.summary()},         {"role", role},
          {"variants", f.variantCount()}, {"heldout_variants", heldoutVariantCount}, {"samples", samples},
          {"rejected", rejected},       {"heldout_problems", heldout},   {"implementations", impls},
          {"output_dtypes", dtypes}};
}

std::string cardMarkdown(const json& card) {
  std::string md = fmt::format(
      "# Dataset card: {}\n\nGenerated by `cuset data synth` ({}), seed {}. Every response was run on the `sim` backend against the "
      "problem's LibTorch reference ({} trials with fresh inputs) before it entered the dataset.\n\n"
      "- training samples: **{}** ({} rejected by verification)\n- held-out problems (`{}`): **{}** unseen instances of trained variants "
      "(new sizes and tensor names), **{}** unseen variants of training families (new op / constant / dtype / layout combinations), **{}** "
      "from families never trained on\n- instruction wording: {}\n\n"
      "| family | role | variants | held-out variants | samples | rejected | held-out problems | implementations |\n|---|---|---|---|---|---|---|---|\n",
      card["train_file"].get<std::string>(), card["generator_version"].get<std::string>(), card["seed"].get<std::uint64_t>(),
      card["verification"]["trials"].get<int>(), card["samples"].get<std::size_t>(), card["rejected"].get<std::size_t>(),
      card["heldout"]["dir"].get<std::string>(), card["heldout"]["unseen_instances"].get<std::size_t>(),
      card["heldout"]["unseen_variants"].get<std::size_t>(), card["heldout"]["unseen_families"].get<std::size_t>(), card["instruction_styles"].dump());
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
  md += "\nVariants never in training (the unseen-variant set draws from these): " + fmt::format("`{}`\n", fmt::join(card["heldout"]["variants"].get<std::vector<std::string>>(), "`, `"));
  return md;
}

}  // namespace

SynthPaths SynthPaths::forOutput(const fs::path& out) {
  const fs::path stem = out.parent_path() / out.stem();
  return {out, fs::path(stem.string() + ".card.json"), fs::path(stem.string() + ".card.md"), fs::path(stem.string() + "-heldout"),
          fs::path(stem.string() + ".verify")};
}

SynthSummary runSynth(const SynthOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.out.empty()) throw Error("data synth: --out is required");
  if (o.perFamily == 0 || o.perFamily > 100000) throw Error(fmt::format("data synth: --per-family must be in 1..100000 (got {})", o.perFamily));
  if (!(o.heldoutVariantFraction > 0.0 && o.heldoutVariantFraction < 1.0)) throw Error("data synth: the held-out variant fraction must be in (0, 1)");
  const auto heldoutFamilies = resolveFamilies(o.heldoutFamilies, "--heldout-families");
  std::vector<const OpFamily*> trainFamilies;
  if (o.families.empty()) {
    for (const auto& f : allFamilies()) {
      if (std::find(heldoutFamilies.begin(), heldoutFamilies.end(), f.get()) == heldoutFamilies.end()) trainFamilies.push_back(f.get());
    }
  } else {
    trainFamilies = resolveFamilies(o.families, "--families");
    for (const auto* f : trainFamilies) {
      if (std::find(heldoutFamilies.begin(), heldoutFamilies.end(), f) != heldoutFamilies.end()) {
        throw Error(fmt::format("data synth: family '{}' is both trained on and held out", f->name()));
      }
    }
  }
  if (trainFamilies.empty()) throw Error("data synth: no training families left");

  SynthSummary summary;
  summary.paths = SynthPaths::forOutput(o.out);
  const SynthPaths& paths = summary.paths;
  SynthRng rng(o.seed);

  // Plan every instance: training samples, then the two held-out sets.
  std::vector<Planned> plans;
  std::map<std::string, std::set<std::size_t>> heldoutByFamily;
  std::map<std::string, std::vector<std::size_t>> trainedByFamily;  // variants that have training samples
  std::vector<std::string> heldoutKeys;
  std::size_t counter = 0;
  for (const auto* f : trainFamilies) {
    const auto held = heldoutVariants(*f, o.seed, o.heldoutVariantFraction);
    heldoutByFamily[std::string(f->name())] = held;
    for (auto v : held) heldoutKeys.push_back(f->variantKey(v));
    std::vector<std::size_t> trainable;
    for (std::size_t v = 0; v < f->variantCount(); ++v) {
      if (!held.contains(v)) trainable.push_back(v);
    }
    for (std::size_t i = 0; i < o.perFamily; ++i) {
      const std::size_t v = trainable[i < trainable.size() ? i : rng.below(trainable.size())];  // every variant at least once
      if (i < trainable.size()) trainedByFamily[std::string(f->name())].push_back(v);
      plans.push_back({f->realize(v, fmt::format("s{:05}_{}", counter++, identifier(f->variantKey(v))), rng), Role::train, "", ""});
    }
  }
  // Unseen instances: trained variants, redrawn until the problem text is new.
  std::set<std::string> trainTexts;
  for (const auto& p : plans) trainTexts.insert(problemText(p.instance.problem));
  for (std::size_t i = 0, attempts = 0; i < o.heldoutInstances && attempts < 50 * (o.heldoutInstances + 1); ++attempts) {
    const OpFamily* f = trainFamilies[attempts % trainFamilies.size()];  // a family whose texts are all taken cannot stall the rest
    const std::size_t v = rng.pick(trainedByFamily[std::string(f->name())]);
    SynthInstance inst = f->realize(v, fmt::format("hi_{}_{}", identifier(f->variantKey(v)), i), rng);
    if (trainTexts.contains(problemText(inst.problem))) continue;
    trainTexts.insert(problemText(inst.problem));
    plans.push_back({std::move(inst), Role::unseenInstance, "", ""});
    ++i;
  }
  // Unseen variants: round-robin over the training families' held-out variants.
  {
    std::vector<std::pair<const OpFamily*, std::vector<std::size_t>>> queues;
    for (const auto* f : trainFamilies) {
      const auto& held = heldoutByFamily[std::string(f->name())];
      queues.emplace_back(f, std::vector<std::size_t>(held.begin(), held.end()));
    }
    std::size_t taken = 0;
    for (std::size_t round = 0; taken < o.heldoutVariants; ++round) {
      bool any = false;
      for (auto& [f, vs] : queues) {
        if (round < vs.size() && taken < o.heldoutVariants) {
          plans.push_back({f->realize(vs[round], fmt::format("hv_{}", identifier(f->variantKey(vs[round]))), rng), Role::unseenVariant, "", ""});
          ++taken;
          any = true;
        }
      }
      if (!any) break;
    }
  }
  for (const auto* f : heldoutFamilies) {
    for (std::size_t i = 0; i < o.heldoutPerFamily; ++i) {
      const std::size_t v = i % f->variantCount();
      plans.push_back({f->realize(v, fmt::format("hf_{}_{}", identifier(f->variantKey(v)), i / f->variantCount()), rng), Role::unseenFamily, "", ""});
    }
  }

  if (o.alterInstance) {
    for (auto& plan : plans) o.alterInstance(plan.instance);
  }

  // Write the verification suite and candidates; parsing each problem back also validates the generator.
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

  EvalConfig eval;
  eval.problemsDir = verifyProblems;
  eval.candidatesPath = paths.verifyDir / "candidates.jsonl";
  eval.outDir = paths.verifyDir / "run";
  eval.backend = BackendKind::sim;
  eval.seed = o.seed * 7919 + 17;
  eval.trials = o.trials;
  eval.jobs = o.jobs;
  eval.showProgress = o.showProgress;
  if (!o.cacheDir.empty()) eval.cacheDir = o.cacheDir;
  eval.commandLine = {"cuset", "data", "synth", "(verification)"};
  log::info("data synth: verifying {} responses on the sim backend", plans.size());
  const EvalRunSummary verified = runEvaluation(eval);

  std::map<std::string, bool> accepted;
  json rejects = json::array();
  std::map<std::string, const EvalResult*> byProblem;
  for (const auto& r : verified.results) byProblem[r.problem] = &r;
  for (const auto& plan : plans) {
    const auto it = byProblem.find(plan.problemId());
    const bool ok = it != byProblem.end() && it->second->verdict == Verdict::correct;
    accepted[plan.problemId()] = ok;
    if (!ok) {
      rejects.push_back({{"problem", plan.problemId()},
                         {"key", plan.instance.key},
                         {"role", roleName(plan.role)},
                         {"verdict", it == byProblem.end() ? "missing" : std::string(verdictName(it->second->verdict))},
                         {"reason", it == byProblem.end() ? "" : it->second->reason.substr(0, 300)}});
    }
  }

  // The held-out suite: each problem with its verified solution, and the set it belongs to.
  fs::remove_all(paths.heldoutDir);
  json heldoutIndex = json::array();
  std::map<Role, std::size_t> perSet;
  for (const auto& plan : plans) {
    if (plan.role == Role::train || !accepted[plan.problemId()]) continue;
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

  // The training file, written whole and renamed into place.
  std::string lines;
  std::map<std::string, std::size_t> styles;
  for (const auto& plan : plans) {
    if (plan.role != Role::train || !accepted[plan.problemId()]) continue;
    ++summary.samples;
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
  summary.rejected = rejects.size();
  summary.heldoutProblems = perSet[Role::unseenInstance] + perSet[Role::unseenVariant] + perSet[Role::unseenFamily];
  if (!paths.train.parent_path().empty()) fs::create_directories(paths.train.parent_path());
  writeFileAtomic(paths.train, lines);

  const auto leaks = findHeldoutLeaks(paths.train, paths.heldoutDir);
  if (!leaks.empty()) throw Error(fmt::format("data synth: held-out problems leaked into {}: {}", paths.train.string(), fmt::join(leaks, "; ")));

  json families = json::array();
  for (const auto* f : trainFamilies) families.push_back(familyCard(*f, "train", plans, accepted, heldoutByFamily[std::string(f->name())].size()));
  for (const auto* f : heldoutFamilies) families.push_back(familyCard(*f, "heldout", plans, accepted, f->variantCount()));
  std::sort(heldoutKeys.begin(), heldoutKeys.end());
  const json card = {
      {"schema_version", 1},
      {"generator_version", fmt::format("cuset {} ({})", kVersion, gitRevision())},
      {"train_file", paths.train.filename().string()},
      {"seed", o.seed},
      {"per_family", o.perFamily},
      {"samples", summary.samples},
      {"rejected", summary.rejected},
      {"rejects", rejects},
      {"families", families},
      {"instruction_styles", styles},
      {"verification", {{"backend", "sim"}, {"trials", o.trials}, {"run", (paths.verifyDir / "run").string()}}},
      {"heldout",
       {{"dir", paths.heldoutDir.filename().string()},
        {"unseen_instances", perSet[Role::unseenInstance]},
        {"unseen_variants", perSet[Role::unseenVariant]},
        {"unseen_families", perSet[Role::unseenFamily]},
        {"variants", heldoutKeys},
        {"leak_check", "passed"}}},
  };
  writeFileAtomic(paths.cardJson, card.dump(2) + "\n");
  writeFileAtomic(paths.cardMarkdown, cardMarkdown(card));
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
    if (keyMustBeNew && trainKeys.contains(entry["key"].get<std::string>())) leaks.push_back(fmt::format("{} (variant {})", id, entry["key"].get<std::string>()));
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
