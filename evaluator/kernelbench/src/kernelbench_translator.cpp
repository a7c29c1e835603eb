// KernelBench solutions into launch plans (kernelbench_translator.hpp): the recorder run twice in a
// restricted process, the host build between the runs, and the recording checked and cached.
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <functional>
#include <cctype>
#include <chrono>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/sandbox/restricted_process.hpp"
#include "cuset/evaluator/kernelbench/cuda_source_split.hpp"
#include "host_build.hpp"
#include "warm_recorder.hpp"
#include "cuset/evaluator/kernelbench/recorded_plan.hpp"
#include "cuset/evaluator/problem/large_sizes.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

using Clock = std::chrono::steady_clock;

// What nvcc's compile of a load_inline .cu gives device code without an include of its own: the C
// library's limits and math (torch/extension.h pulls in <cfloat>, <climits>, <cstdint>, <cmath> and
// <limits>), and ATen's half types in template arguments (k<c10::Half>, from AT_DISPATCH), which are
// CUDA's own under NVRTC. docs/kernelbench-solutions.md lists what still differs.
constexpr std::string_view kDevicePrelude =
    "#include <cfloat>\n#include <climits>\n#include <cstdint>\n#include <cmath>\n#include <limits>\n"
    "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\nnamespace c10 { using Half = __half; using BFloat16 = __nv_bfloat16; }\n"
    "namespace at { using c10::Half; using c10::BFloat16; }\n";

// The file name device code is compiled under: load_inline's extension name, kept to characters a #line
// directive and a reader take as they are.
std::string cudaSourcesFile(const std::string& extension) {
  std::string name;
  for (char c : extension.substr(0, 64)) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  return "cuda_sources of " + name;
}

// One load_inline extension's device code and the host library its launches come from.
struct DevicePart {
  fs::path library;
  std::string code;
};

// The device code of the extensions the recording launches kernels of, as load_inline keeps each in a
// module of its own: a solution that builds a first version and then a second defining the same kernel
// names, launching only the second's, must not meet the first's definitions. All of them where a launch
// does not say its library (the recorder's shim names it from the kernel's host symbol). Each launch's
// library (a path in the work folder) is taken out of `plans`: the plan does not depend on it.
std::string launchedDeviceCode(const std::vector<DevicePart>& parts, json& plans) {
  std::vector<std::string> launched;
  bool unknown = false;
  std::function<void(json&)> walk = [&](json& j) {
    if (j.is_object()) {
      if (const auto k = j.find("kernel"); k != j.end() && k->is_object() && k->contains("args")) {
        const std::string library = k->value("library", "");
        k->erase("library");
        if (library.empty()) unknown = true;
        if (std::find(launched.begin(), launched.end(), library) == launched.end()) launched.push_back(library);
      }
      for (auto& [key, value] : j.items()) walk(value);
    } else if (j.is_array()) {
      for (auto& value : j) walk(value);
    }
  };
  walk(plans);
  auto isLaunched = [&](const fs::path& library) {
    for (const std::string& l : launched) {
      std::error_code ec;
      if (!l.empty() && (l == library.string() || fs::equivalent(l, library, ec))) return true;
    }
    return false;
  };
  std::string code;
  for (const DevicePart& p : parts) {
    if (unknown || launched.empty() || isLaunched(p.library)) code += p.code;
  }
  return code;
}

bool named(const std::vector<std::string>& sets, const std::string& name) { return std::find(sets.begin(), sets.end(), name) != sets.end(); }

// Whether a size set is one the translation records (all of them when none is named): those the backend
// runs and those only checked.
bool records(const TranslatorOptions& options, const std::string& name) {
  return options.sizeSets.empty() || named(options.sizeSets, name) || named(options.checkedSizeSets, name);
}

// What the recorder needs of the problem: its sizes' shapes, which inputs are lifted weights, and the
// KernelBench file (with the constants the importer scaled) that builds its Model.
json problemSpec(const Problem& p, const TranslatorOptions& options) {
  json spec = {{"id", p.id}, {"parameters", json::array()}, {"size_sets", json::object()}, {"origin", nullptr}};
  if (options.tritonCapability) spec["triton_capability"] = options.tritonCapability;
  if (p.referenceArchive) spec["parameters"] = p.referenceArchive->attributes;
  if (p.origin && p.origin->suite == "kernelbench" && !p.origin->source.empty()) {
    json overrides = json::object();
    for (const auto& [set, knobs] : p.origin->sizeOverrides) overrides[set] = knobs;
    spec["origin"] = {{"source", p.origin->source}, {"file", p.origin->file}, {"size_overrides", overrides}};
  }
  for (const auto& set : p.sizeSets) {
    if (!records(options, set.name)) continue;
    json s = {{"inputs", json::array()}, {"outputs", json::array()}, {"sizes", set.sizes}};
    for (const auto& t : p.inputs) s["inputs"].push_back({{"name", t.name}, {"dtype", dtypeName(t.dtype)}, {"shape", *evaluateShape(t, set.sizes)}});
    for (const auto& t : p.outputs)
      s["outputs"].push_back({{"name", t.name}, {"dtype", dtypeName(t.dtype)}, {"shape", *evaluateShape(t, set.sizes)}});
    spec["size_sets"][set.name] = s;
  }
  return spec;
}

// The translator's own files, where this build or install keeps them (resources.hpp).
struct TranslatorFiles {
  fs::path entry;              // cuset_kernelbench.py, the one entry point of KernelBench's Python
  fs::path kernelbenchPython;  // its folder: the recorder, the importer's problem-file loader it imports
  fs::path standinInclude;     // the torch and CUDA runtime stand-in headers
  fs::path standinLibrary;     // their library, linked into every host build
  fs::path restrictLibrary;    // libcuset_restrict.so, which the recorder's children restrict themselves with
};

const TranslatorFiles& files() {
  static const TranslatorFiles f = [] {
    const Resources& r = resources();
    return TranslatorFiles{r.path("kb_entry"), r.path("kb_python"), r.path("kb_standin_include"), r.path("kb_standin_library"),
                           r.path("restrict_library")};
  }();
  return f;
}

// KernelBench's Python (the recorder's and the importer's: one folder), the torch stand-ins and their library: a
// change to any is a new translator.
std::string translatorDigest() {
  ContentHasher h;
  // The C++ half of the translator (splitter, host build, device check): bumped when what it makes changes.
  h.add("cuset-kb-translate-v13");  // v13: Triton configurations ptxas refuses left out; v11: construction compared; PYBIND11_MODULE with
                                    // functions=[...] fails; "not a member of torch" asks the real
                                    // headers
  std::vector<fs::path> headers;
  for (const fs::path& folder : {files().standinInclude, files().kernelbenchPython}) {
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
      if (e.is_regular_file() && e.path().extension() != ".pyc") headers.push_back(e.path());
    }
  }
  std::sort(headers.begin(), headers.end());
  for (const auto& f : headers) h.add(f.string()).add(readFile(f));
  h.add(readFile(files().standinLibrary));
  return h.digest().hex();
}

// The restricted environment of a recorder run whose folder (HOME, torch's cache) is `home`.
std::vector<std::string> recorderEnvironment(const fs::path& home) {
  // torch._dynamo's import (kb_recorder.py loads it) asks for a cache folder: named, and one
  // that exists, it is neither looked up as a user (a passwd lookup opens a socket), nor probed by
  // writing a temporary file, nor made.
  return {"PATH=/usr/bin:/bin",        "HOME=" + home.string(), "USER=cuset",       "TORCHINDUCTOR_CACHE_DIR=" + home.string(),
          "PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1",    "PYTHONHASHSEED=0", "LANG=C.UTF-8",
          "OMP_NUM_THREADS=1"};
}

// What every recorder run may read besides its own folder: the system, KernelBench's Python (the
// recorder and the importer's loader), the stand-in's library, the restrict library, and the Python prefix as named (a virtual environment, whose
// site-packages hold torch) and as resolved (the base interpreter a venv's bin/python links to).
std::vector<fs::path> recorderReadable(const std::string& python) {
  std::vector<fs::path> readable = {
      "/usr", "/lib", "/lib64", "/etc", "/proc", "/sys", "/dev", "/bin", files().kernelbenchPython, files().standinLibrary, files().restrictLibrary};
  std::error_code ec;
  if (const fs::path named = fs::absolute(python, ec); !ec && named.has_parent_path()) readable.push_back(named.parent_path().parent_path());
  if (const fs::path real = fs::canonical(python, ec); !ec) readable.push_back(real.parent_path().parent_path());
  return readable;
}

class Session {
 public:
  Session(const TranslatorOptions& options, detail::WarmRecorderPool* warm, detail::HostBuildCache* hostBuilds, const Problem& problem,
          std::string_view solution, const fs::path& folder)
      : options_(options), warm_(warm), hostBuilds_(hostBuilds), problem_(problem), folder_(folder) {
    writeFileAtomic(folder / "problem.json", problemSpec(problem, options).dump());
    writeFileAtomic(folder / "solution.py", solution);
    fs::create_directories(folder / "scratch");
  }

  Translation run() {
    Translation t;
    const json captured = recorder("capture", {}, t);
    if (!t.ok()) return t;
    json extensions = json::object();
    std::vector<DevicePart> deviceParts;  // each built extension's device code, by its host library
    for (const auto& e : captured.at("extensions")) {
      detail::Extension x{e.at("key"), e.at("name"), e.at("cpp_sources"), e.at("cuda_sources"), e.at("functions").get<std::vector<std::string>>()};
      const SplitCudaSource split = splitCudaSource(x.cudaSources);
      const detail::HostBuild built = detail::buildHostLibrary(x, split.host, folder_ / ("ext-" + x.key), options_.timeout, hostBuilds_);
      t.log += built.log;
      const std::string reason = fmt::format("extension '{}': {}", x.name, built.reason);
      if (built.verdict == Verdict::compile_error) {
        // load_inline raises where its build fails, and KernelBench runs whatever the solution does
        // then (many catch it and fall back to torch): the recorder raises the same in the solution.
        extensions[x.key] = {{"failed", verdictName(*built.verdict)}, {"reason", reason}};
        continue;
      }
      if (!built.ok()) return fail(t, *built.verdict, reason);
      // Lines as the solution's cuda_sources numbers them (the split keeps every line where it was): a
      // compiler message or a named race points into the string the solution wrote.
      const std::string device =
          fmt::format("// ---- load_inline extension '{}' ----\n#line 1 \"{}\"\n{}\n", x.name, cudaSourcesFile(x.name), split.device);
      if (options_.deviceCompiler) {
        const CompileOutput compiled = options_.deviceCompiler->compile(std::string(kDevicePrelude) + device, {});
        if (compiled.status == CompileOutput::Status::compileError) {
          t.log += compiled.log;
          extensions[x.key] = {{"failed", verdictName(Verdict::compile_error)},
                               {"reason", fmt::format("extension '{}': device code: {}", x.name, firstErrorLine(compiled.log))}};
          continue;
        }
      }
      deviceParts.push_back({built.library, device});
      extensions[x.key] = built.library.string();
    }
    if (captured.at("extensions").empty()) t.log += "the solution compiles no CUDA source with load_inline\n";
    writeFileAtomic(folder_ / "extensions.json", extensions.dump());
    json recorded = recorder("record", folder_ / "extensions.json", t);
    if (!t.ok()) return t;
    t.plan.deviceSource = std::string(kDevicePrelude) + launchedDeviceCode(deviceParts, recorded.at("plans"));
    // The Triton form: each Triton kernel it launched, compiled to PTX and wrapped as CUDA (kb_triton.py).
    if (const auto triton = recorded.find("triton"); triton != recorded.end() && triton->is_object()) {
      t.plan.deviceArch = triton->value("target", std::string());
      for (const auto& line : triton->value("log", json::array())) t.log += line.get<std::string>() + "\n";
      const std::string arch = t.plan.deviceArch.empty() ? fmt::format("sm_{}", options_.tritonCapability) : t.plan.deviceArch;
      t.plan.deviceSource += assembledTritonConfigurations(*triton, recorded.at("plans"), arch, t.log);
    }
    t.recorded = recorded.at("plans");
    return t;
  }

 private:
  static Translation& fail(Translation& t, Verdict verdict, std::string reason) {
    t.verdict = verdict;
    t.reason = std::move(reason);
    return t;
  }

  json recorder(const std::string& mode, const fs::path& extensions, Translation& t) {
    const std::string python = pythonWithTorch(options_.python);
    RestrictedCommand c;
    c.argv = {python,
              files().entry.string(),
              mode,
              "--solution",
              (folder_ / "solution.py").string(),
              "--problem",
              (folder_ / "problem.json").string(),
              "--kb-lib",
              files().kernelbenchPython.string(),
              "--result-fd",
              "3",
              "--restrict-lib",
              files().restrictLibrary.string()};
    if (!extensions.empty()) c.argv.insert(c.argv.end(), {"--extensions", extensions.string()});
    c.environment = recorderEnvironment(folder_);
    // A solution that makes its own build folder (os.makedirs, tempfile) writes there, and nowhere else.
    c.scratch = folder_ / "scratch";
    c.environment.push_back("TMPDIR=" + c.scratch.string());
    c.argv.insert(c.argv.end(), {"--scratch", c.scratch.string()});
    c.readable = recorderReadable(python);
    c.readable.push_back(folder_);
    c.timeout = options_.timeout;
    c.memoryBytes = options_.memoryBytes;
    std::optional<RestrictedResult> warm = warm_ ? warm_->run(c) : std::nullopt;
    t.warmRuns += warm ? 1 : 0;
    const RestrictedResult r = warm ? std::move(*warm) : runRestricted(c);
    t.interrupted = t.interrupted || r.timedOut || (r.signal != 0 && r.signal != SIGSYS && r.signal != SIGSEGV && r.signal != SIGBUS);
    if (r.timedOut)
      return fail(t, Verdict::timeout, fmt::format("the translation ({}) did not finish within {} s", mode, options_.timeout.count() / 1000.0)),
             json();
    if (r.signal == SIGSYS) {
      return fail(t, Verdict::sandbox_violation, "the solution's Python or host code made a forbidden system call (network, a new process, ...)"),
             json();
    }
    if (r.signal == SIGSEGV || r.signal == SIGBUS) {
      return fail(t, Verdict::unsupported, "host code read or wrote tensor data on the host (or crashed): the recording has no data"), json();
    }
    if (r.signal != 0)
      return fail(t, Verdict::runtime_error, fmt::format("the translation was killed by signal {} (over the memory limit?)", r.signal)), json();
    if (r.exitCode == 126) throw makeError("the KernelBench translator could not restrict its helper: Landlock failed");
    if (r.log.find("No module named 'torch'") != std::string::npos || r.exitCode == 127) {
      throw makeError(
          "the KernelBench translator needs a Python with torch ({}: {}); run scripts/install-deps.sh (the project's .venv) or set CUSET_PYTHON",
          python, r.log.substr(0, 300));
    }
    if (r.resultTruncated) {
      return fail(t, Verdict::unsupported,
                  fmt::format("the recording is larger than {} MiB (thousands of recorded ops: a recurrent network "
                              "unrolled over its sequence, say); a launch plan that size is not judged",
                              c.maxOutputBytes >> 20)),
             json();
    }
    json answer;
    try {
      answer = json::parse(r.result);
    } catch (const json::exception&) {
      t.log += r.log;
      return fail(t, Verdict::runtime_error, fmt::format("the translation ended without a result (exit {}): {}", r.exitCode, lastLine(r.log))),
             json();
    }
    const std::string status = answer.value("status", "");
    if (status == "captured" || status == "recorded") return answer;
    if (status == "error") return fail(t, Verdict::unsupported, answer.value("reason", "")), json();
    // The channel is a descriptor of the process the solution runs in, so the solution can write to it:
    // only the verdicts a recording can end with are taken from it, never one that would skip the trials.
    static const std::set<Verdict> kRecorderVerdicts = {Verdict::unsupported,  Verdict::runtime_error,     Verdict::invalid_submission,
                                                        Verdict::wrong_answer, Verdict::sandbox_violation, Verdict::compile_error};
    const std::optional<Verdict> told = parseVerdict(status);
    if (!told || !kRecorderVerdicts.contains(*told)) {
      return fail(t, Verdict::invalid_submission,
                  fmt::format("the recorder's result channel says '{}', which no recording ends with: the solution wrote to it",
                              status.substr(0, 40))),
             json();
    }
    return fail(t, *told, answer.value("reason", "")), json();
  }

  static std::string lastLine(const std::string& log) {
    std::string s = log;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1, 300);
  }

  const TranslatorOptions& options_;
  detail::WarmRecorderPool* warm_;
  detail::HostBuildCache* hostBuilds_;
  const Problem& problem_;
  fs::path folder_;
};

// The recorder's comparison of KernelBench's two constructions (written by the solution's process, so
// read as untrusted: what is not three strings is left out).
void readConstruction(const json& recorded, Translation& t) {
  const auto text = [](const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
  };
  if (const auto it = recorded.find("construction"); it != recorded.end() && it->is_array()) {
    for (const auto& d : *it) {
      ConstructionDifference c{text(d, "parameter"), text(d, "weight"), text(d, "how")};
      if (!c.parameter.empty() && !c.weight.empty() && !c.how.empty()) t.construction.push_back(std::move(c));
    }
  }
  if (const std::string why = text(recorded, "construction_unchecked"); !why.empty()) {
    t.log += fmt::format("KernelBench's construction not compared: {}\n", why);
  }
}

// The recorded plans checked against the problem, one per size set.
void finishPlans(Translation& t, const Problem& problem, const TranslatorOptions& options) {
  if (!t.ok()) return;
  for (const auto& set : problem.sizeSets) {
    if (!records(options, set.name)) continue;
    if (!t.recorded.contains(set.name)) {
      t.verdict = Verdict::invalid_submission;
      t.reason = fmt::format("the recording has no plan for size set '{}'", set.name);
      return;
    }
    // A set recorded only to check the plan there (KernelBench's own sizes on the simulator): a GPU's
    // memory, not this machine's, holds it, and what the recording cannot express there is no verdict.
    const bool checkedOnly = !options.sizeSets.empty() && !named(options.sizeSets, set.name);
    std::optional<PlanRefusal> standing;
    auto plan = planFromRecording(t.recorded[set.name], problem, set, checkedOnly ? MemoryBudget{} : options.budget, &standing);
    if (standing && !t.standing) t.standing = PlanRefusal{standing->verdict, fmt::format("sizes '{}': {}", set.name, standing->reason)};
    if (auto* refusal = std::get_if<PlanRefusal>(&plan)) {
      // What the recording cannot express at the simulator's `large` set only costs that trial.
      if ((checkedOnly || set.name == kLargeSizeSet) && refusal->verdict == Verdict::unsupported) continue;
      t.verdict = refusal->verdict;
      t.reason = checkedOnly ? fmt::format("at sizes '{}' (checked, not run here): {}", set.name, refusal->reason)
                             : fmt::format("sizes '{}': {}", set.name, refusal->reason);
      return;
    }
    const json& recorded = t.recorded[set.name];
    readConstruction(recorded, t);
    LaunchPlan& p = std::get<LaunchPlan>(plan);
    for (const auto& k : p.kernelNames()) {
      if (std::find(t.plan.kernelNames.begin(), t.plan.kernelNames.end(), k) == t.plan.kernelNames.end()) t.plan.kernelNames.push_back(k);
    }
    t.plan.plans[set.name] = std::move(p);
  }
}

}  // namespace

std::string describeTranslation(const Translation& t) {
  if (!t.ok()) return fmt::format("{}: {}\n", verdictName(*t.verdict), t.reason);
  std::string out =
      t.standing ? fmt::format("{} whatever its trials show: {}\n", verdictName(t.standing->verdict), t.standing->reason) : std::string();
  out += fmt::format("plan ({} kernel(s){}; translated in {:.0f} ms{})\n", t.plan.kernelNames.size(),
                     t.plan.libraryOps().empty() ? "" : fmt::format(", library ops: {}", fmt::join(t.plan.libraryOps(), ", ")), t.milliseconds,
                     t.cacheHit ? ", cached" : "");
  for (const auto& c : t.construction) {
    out += fmt::format("KernelBench's construction starts ModelNew's '{}' elsewhere than Model's '{}': {}\n", c.parameter, c.weight, c.how);
  }
  for (const auto& [set, plan] : t.plan.plans) {
    out += fmt::format("\nsizes '{}':\n", set);
    for (const auto& b : plan.scratch) {
      out += fmt::format("  buffer {} {} [{}] {}\n", b.name, dtypeName(b.dtype), fmt::join(b.shape, ", "), b.zeroed ? "zeros" : "uninitialised");
    }
    for (const auto& o : plan.zeroedOutputs) out += fmt::format("  output {} starts as zeros\n", o);
    std::size_t n = 0;
    for (const auto& s : plan.steps) {
      if (s.kind == PlanStep::Kind::library) {
        out += fmt::format("  {:>2}. library {}\n", ++n, s.library.describe());
        continue;
      }
      std::vector<std::string> args;
      for (const auto& a : s.kernel.args) args.push_back(a.describe());
      out += fmt::format("  {:>2}. kernel {}<<<[{}], [{}], {}>>>({})\n", ++n, s.kernel.kernel, fmt::join(s.kernel.grid, ", "),
                         fmt::join(s.kernel.block, ", "), s.kernel.sharedBytes, fmt::join(args, ", "));
      if (!s.kernel.autotune) continue;
      for (std::size_t i = 0; i < s.kernel.autotune->alternatives.size(); ++i) {
        const KernelStep& a = s.kernel.autotune->alternatives[i];
        out += fmt::format("      autotuned on the GPU, configuration {}: {} as {}<<<[{}], [{}], {}>>>\n", i + 1, s.kernel.autotune->configs[i],
                           a.kernel, fmt::join(a.grid, ", "), fmt::join(a.block, ", "), a.sharedBytes);
      }
    }
  }
  return out;
}

bool isKernelBenchSolution(std::string_view source) {
  if (source.find("/*@cuset") != std::string_view::npos) return false;
  return source.find("class ModelNew") != std::string_view::npos || source.find("import torch") != std::string_view::npos;
}

KernelBenchTranslator::KernelBenchTranslator(TranslatorOptions options) : options_(std::move(options)), digest_(translatorDigest()) {
  if (!options_.cacheDir.empty()) {
    fs::create_directories(options_.cacheDir);
    workRoot_ = options_.cacheDir;
  } else {
    ownRoot_ = std::make_shared<ScratchDir>(fs::temp_directory_path());
    workRoot_ = ownRoot_->path();
  }
  hostBuilds_ = std::make_shared<detail::HostBuildCache>(workRoot_, digest_);
  const char* env = std::getenv("CUSET_KB_WARM");
  if (options_.warm && !(env && std::string_view(env) == "0")) {
    // The server reads every translation's folder and lets each child write its own scratch folder
    // beneath the work root; it runs no candidate code itself.
    const std::string python = pythonWithTorch(options_.python);
    RestrictedCommand server;
    server.argv = {python,           files().entry.string(),          "serve", "--kb-lib", files().kernelbenchPython.string(),
                   "--restrict-lib", files().restrictLibrary.string()};
    server.environment = recorderEnvironment(workRoot_);
    server.readable = recorderReadable(python);
    server.readable.push_back(workRoot_);
    server.scratch = workRoot_;
    server.timeout = options_.timeout;
    server.memoryBytes = options_.memoryBytes;
    warm_ = std::make_shared<detail::WarmRecorderPool>(std::move(server));
  }
}

Translation KernelBenchTranslator::translate(const Problem& problem, std::string_view solution) const {
  const auto start = Clock::now();
  const std::string key = ContentHasher().add(digest_).add(problemSpec(problem, options_).dump()).add(solution).digest().hex();
  const fs::path cached = options_.cacheDir.empty() ? fs::path() : options_.cacheDir / (key + ".json");
  Translation t;
  if (!cached.empty() && fs::exists(cached)) {
    const json j = readJsonFile(cached);
    const std::string verdict = j.at("verdict");
    if (verdict != "plan") t.verdict = parseVerdict(verdict).value_or(Verdict::runtime_error);
    t.reason = j.at("reason");
    t.log = j.at("log");
    t.plan.deviceSource = j.at("device_source");
    t.plan.deviceArch = j.value("device_arch", std::string());
    t.recorded = j.at("recorded");
    t.cacheHit = true;
  } else {
    const ScratchDir folder(workRoot_);
    t = Session(options_, warm_.get(), hostBuilds_.get(), problem, solution, folder.path()).run();
    // A timeout may be the machine's load, a kill the machine's doing (the worker stopped, the OOM killer):
    // tried again next time.
    if (!cached.empty() && t.verdict != Verdict::timeout && !t.interrupted) {
      writeFileAtomic(cached, json{{"verdict", t.ok() ? std::string_view("plan") : verdictName(*t.verdict)},
                                   {"reason", t.reason},
                                   {"log", t.log.substr(0, 1 << 16)},
                                   {"device_source", t.plan.deviceSource},
                                   {"device_arch", t.plan.deviceArch},
                                   {"recorded", t.recorded}}
                                  .dump());
    }
  }
  finishPlans(t, problem, options_);
  t.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return t;
}

}  // namespace cuset
