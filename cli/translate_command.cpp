// `cuset translate SOLUTION --problem ID`: what a KernelBench solution becomes (docs/kernelbench.md).
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "commands.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

namespace cuset::cli {
namespace {

struct DeviceCodeReport {
  bool ok = false;
  nlohmann::json json;
  std::string text;
};

// The plan's device code through NVRTC for `arch` (its architecture-specific target where the code needs
// it, as the cuda backend compiles it), and what each kernel's cubin says it needs.
DeviceCodeReport compileDeviceCode(const CandidatePlan& plan, const std::string& arch) {
  const std::string target = plan.deviceArch.empty() ? arch : plan.deviceArch;
  const CompileOutput out = NvrtcCompiler(CompileOptions{.arch = target}, {}).compile(plan.deviceSource, plan.kernelNames);
  DeviceCodeReport r;
  r.ok = out.status == CompileOutput::Status::ok;
  r.json = {{"arch", target}, {"ok", r.ok}, {"log", out.log}, {"kernels", nlohmann::json::object()}};
  r.text = fmt::format("\ncompiled for {}: {}\n", target, r.ok ? "ok" : "FAILED");
  if (!r.ok) r.text += out.log;
  for (const auto& [name, k] : out.resources) {
    r.json["kernels"][name] = {
        {"registers", k.registers}, {"static_shared_bytes", k.staticSharedBytes}, {"max_threads", k.maxThreads}, {"local_bytes", k.localBytes}};
    r.text += fmt::format("   {}: {} registers, {} B static shared, {} B local{}\n", name, k.registers, k.staticSharedBytes, k.localBytes,
                          k.maxThreads ? fmt::format(", at most {} threads", k.maxThreads) : "");
  }
  return r;
}

}  // namespace

void registerTranslateCommand(CLI::App& app, CommandContext& context) {
  struct Options {
    std::filesystem::path solution;
    std::string problem;
    std::filesystem::path problems = "problems";
    bool json = false;
    bool noCache = false;
    std::string gpuArch;
    bool compile = false;
  };
  auto o = std::make_shared<Options>();
  o->problems = defaultProblemsDir();
  CLI::App* cmd = app.add_subcommand("translate", "Show the launch plan a KernelBench solution (ModelNew + load_inline) translates to");
  cmd->add_option("solution", o->solution, "The solution: a .py file, or a model's response with a ```python block")->required();
  cmd->add_option("--problem", o->problem, "The problem it solves (level1/kb19_relu)")->required();
  cmd->add_option("--problems", o->problems, "The suite")->capture_default_str();
  cmd->add_flag("--json", o->json, "The recording as JSON, per size set, instead of the summary");
  cmd->add_flag("--no-cache", o->noCache, "Translate again even when the cache has this solution");
  cmd->add_option("--gpu-arch", o->gpuArch,
                  "Translate as the cuda backend does on a GPU of this architecture (sm_90): Triton kernels compiled as Triton compiles them there");
  cmd->add_flag("--compile", o->compile, "Compile the device code with NVRTC (for --gpu-arch, else sm_90) and show what each kernel needs");
  cmd->callback([o, &context] {
    const ProblemSuite suite = ProblemSuite::load(o->problems);
    suite.requireNoErrors();
    const Problem* problem = suite.find(o->problem);
    if (!problem) throw makeError("{}: no problem '{}'", o->problems.string(), o->problem);
    std::string source = readFile(o->solution);
    if (!isKernelBenchSolution(source)) {
      auto extracted = extractCodeFromResponse(source);
      if (!extracted || !isKernelBenchSolution(*extracted)) throw makeError("{}: not a KernelBench solution (no ModelNew)", o->solution.string());
      source = *extracted;
    }
    if (!o->gpuArch.empty() && !archNumber(o->gpuArch))
      throw makeError("--gpu-arch '{}' is not a CUDA architecture (expected e.g. sm_90)", o->gpuArch);
    const KernelBenchTranslator translator(TranslatorOptions{.cacheDir = o->noCache ? std::filesystem::path() : defaultCacheDir() / "kernelbench",
                                                             .tritonCapability = archNumber(o->gpuArch)});
    const Translation t = translator.translate(*problem, source);
    std::optional<DeviceCodeReport> compiled;
    if (o->compile && t.ok()) compiled = compileDeviceCode(t.plan, o->gpuArch.empty() ? "sm_90" : o->gpuArch);
    if (o->json) {
      nlohmann::json out = {{"verdict", t.ok() ? std::string_view("plan") : verdictName(*t.verdict)},
                            {"reason", t.reason},
                            {"plans", t.recorded},
                            {"device_source", t.plan.deviceSource},
                            {"device_arch", t.plan.deviceArch},
                            {"milliseconds", t.milliseconds},
                            {"cache_hit", t.cacheHit}};
      if (compiled) out["compiled"] = compiled->json;
      std::cout << out.dump(2) << "\n";
    } else {
      fmt::print("{}", describeTranslation(t));
      if (compiled) fmt::print("{}", compiled->text);
    }
    context.exitCode = t.ok() && (!compiled || compiled->ok) ? 0 : 1;
  });
}

}  // namespace cuset::cli
