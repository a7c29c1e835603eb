#include "cuset/evaluator/kernelbench/recorded_plan.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "cuset/evaluator/candidate/plan_validator.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/candidate/library_call.hpp"

namespace cuset {
namespace {

struct Buffer {
  std::string name;  // after outputs are renamed
  std::string role;  // input, scratch, output
  DType dtype = DType::float32;
  std::int64_t numel = 0;
  bool zeroed = false;
  bool moduleBuffer = false;  // an input bound to a module buffer of ModelNew (running statistics)
};

struct Refused {
  PlanRefusal refusal;
};

[[noreturn]] void refuse(Verdict verdict, std::string reason) { throw Refused{{verdict, std::move(reason)}}; }

// What the recording did, it did on a GPU: a launch the driver refuses and a pointer past its buffer are
// the run's runtime errors; anything else the validator finds, no correct recording holds.
void refuseIf(const std::optional<PlanViolation>& v, std::string_view context = {}) {
  if (!v) return;
  const bool gpu = v->kind == PlanViolation::Kind::launchConfiguration || v->kind == PlanViolation::Kind::pointerOutOfBounds;
  refuse(gpu ? Verdict::runtime_error : Verdict::invalid_submission, std::string(context) + v->message);
}

std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool contiguous(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides) {
  std::int64_t expected = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

class Converter {
 public:
  Converter(const nlohmann::json& recorded, const Problem& problem, const SizeSet& set, const MemoryBudget& budget,
            std::optional<PlanRefusal>* standing)
      : recorded_(recorded),
        problem_(problem),
        set_(set),
        budget_(budget),
        standing_(standing),
        problemBuffers_(problemBuffers(problem, set.sizes)) {}

  LaunchPlan run() {
    // The recorder found two steps on two streams that nothing orders: whatever order a GPU happened to
    // run them in, the solution has a race.
    if (recorded_.contains("race")) stand(Verdict::runtime_error, recorded_.at("race").get<std::string>());
    readBuffers();
    mapOutputs();
    LaunchPlan plan;
    for (const auto& s : recorded_.at("steps")) plan.steps.push_back(step(s));
    plan.steps.insert(plan.steps.end(), outputCopies_.begin(), outputCopies_.end());
    for (const auto& [original, b] : buffers_) {
      if (b.role == "scratch") plan.scratch.push_back({b.name, b.dtype, {b.numel}, b.zeroed});
      if (b.role == "output" && b.zeroed) plan.zeroedOutputs.push_back(b.name);
    }
    refuseIf(validatePlan(plan, problemBuffers_));
    return plan;
  }

 private:
  void readBuffers() {
    std::map<std::string, const TensorSpec*> inputs;
    for (const auto& t : problem_.inputs) inputs[t.name] = &t;
    std::int64_t problemBytes = 0, scratchBytes = 0;
    for (const auto& [name, b] : problemBuffers_) problemBytes += b.bytes();
    for (const auto& j : recorded_.at("buffers")) {
      Buffer b;
      b.name = j.at("name").get<std::string>();
      b.role = j.at("role").get<std::string>();
      const auto dtype = parseDType(j.at("dtype").get<std::string>());
      if (!dtype) refuse(Verdict::unsupported, fmt::format("a tensor of dtype {}", j.at("dtype").get<std::string>()));
      b.dtype = *dtype;
      b.numel = j.at("numel").get<std::int64_t>();
      b.zeroed = j.value("init", "empty") == "zeros";
      b.moduleBuffer = j.value("module_buffer", false);
      refuseIf(checkBufferSize(b.name, b.dtype, b.numel), "the recording's ");
      if (b.role == "input") {
        const auto it = inputs.find(b.name);
        if (it == inputs.end() || it->second->dtype != b.dtype || problemBuffers_.at(b.name).numel != b.numel) {
          refuse(Verdict::invalid_submission, fmt::format("the recording's input '{}' is not the problem's", b.name));
        }
      } else if (b.role == "scratch") {
        scratchBytes += b.numel * static_cast<std::int64_t>(dtypeSize(b.dtype));
      } else {
        refuse(Verdict::invalid_submission, fmt::format("the recording has a buffer of role '{}'", b.role));
      }
      if (!buffers_.emplace(b.name, b).second) refuse(Verdict::invalid_submission, fmt::format("the recording names buffer '{}' twice", b.name));
      views_[b.name] = {b.dtype, b.numel};
    }
    if (budget_.bytes > 0 && problemBytes + scratchBytes > budget_.bytes) {
      refuse(budget_.verdict,
             fmt::format("the solution allocates {:.3g} GB of intermediates beside the problem's {:.3g} GB, over the {:.3g} GB of {}",
                         static_cast<double>(scratchBytes) / 1e9, static_cast<double>(problemBytes) / 1e9, static_cast<double>(budget_.bytes) / 1e9,
                         budget_.what));
    }
  }

  // Each returned tensor becomes the problem's output: a whole scratch buffer is renamed to it (the
  // kernel writes the output directly), anything else is copied into it by a final library step.
  void mapOutputs() {
    const auto& outs = recorded_.at("outputs");
    if (outs.size() != problem_.outputs.size()) refuse(Verdict::wrong_answer, "the solution returns another number of outputs than the problem has");
    std::set<std::string> taken;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const TensorSpec& spec = problem_.outputs[i];
      const TensorView view = checkedView(outs[i].at("view"));
      const std::string source = view.buffer;
      Buffer& b = buffers_.at(source);
      const bool whole = b.role == "scratch" && !taken.contains(source) && view.offset == 0 && contiguous(view.sizes, view.strides) &&
                         product(view.sizes) == b.numel && b.dtype == spec.dtype;
      if (whole) {
        b.role = "output";
        b.name = spec.name;
        taken.insert(source);
        continue;
      }
      const auto shape = *evaluateShape(spec, set_.sizes);
      std::vector<std::int64_t> strides(shape.size(), 1);
      for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
      const TensorView target{.buffer = spec.name, .offset = 0, .sizes = shape, .strides = strides, .dtype = spec.dtype};
      PlanStep copy;
      copy.kind = PlanStep::Kind::library;
      copy.library = {.name = "aten::copy_", .args = {{target}, {renamed(view)}}, .purpose = LibraryStep::Purpose::output};
      outputCopies_.push_back(std::move(copy));
    }
  }

  const Buffer& buffer(const std::string& name) const {
    const auto it = buffers_.find(name);
    if (it == buffers_.end()) refuse(Verdict::invalid_submission, fmt::format("the recording refers to an unknown buffer '{}'", name));
    return it->second;
  }

  // Before renaming: the recording's names are the ones its views use.
  TensorView checkedView(const nlohmann::json& j) const {
    auto view = tensorViewFromJson(j);
    if (!view) refuse(Verdict::invalid_submission, "the recording: " + view.error());
    checkView(*view);
    return std::move(*view);
  }

  void checkView(const TensorView& v) const {
    buffer(v.buffer);
    refuseIf(cuset::checkView(v, views_), "the recording: ");
  }

  TensorView renamed(TensorView v) const {
    v.buffer = buffer(v.buffer).name;
    return v;
  }

  // A verdict the plan keeps whatever its trials show: with nowhere to put it, it refuses the plan.
  void stand(Verdict verdict, std::string reason) const {
    if (!standing_) refuse(std::move(verdict), std::move(reason));
    if (!*standing_) *standing_ = PlanRefusal{verdict, std::move(reason)};
  }

  PlanStep step(const nlohmann::json& s) const {
    if (s.contains("library")) return libraryStep(s.at("library"));
    const auto& k = s.at("kernel");
    PlanStep out;
    out.kernel = kernelStep(k);
    if (k.contains("autotune")) {
      const auto& recorded = k.at("autotune");
      auto tuning = std::make_shared<AutotunedLaunch>();
      tuning->key = recorded.at("key").get<std::string>();
      tuning->configs = recorded.at("configs").get<std::vector<std::string>>();
      for (const auto& a : recorded.at("alternatives")) {
        tuning->alternatives.push_back(kernelStep(a, &out.kernel.args));  // validatePlan checks the rest
      }
      out.kernel.autotune = std::move(tuning);
    }
    return out;
  }

  // `sameArgs`: the arguments of a launch that writes none of its own (an autotuned configuration's are
  // the step's unless the recording says otherwise).
  KernelStep kernelStep(const nlohmann::json& k, const std::vector<PlanArg>* sameArgs = nullptr) const {
    KernelStep out;
    out.kernel = k.at("name").get<std::string>();
    if (out.kernel.empty() || out.kernel.find_first_of("\"'\n;{}") != std::string::npos) {
      refuse(Verdict::invalid_submission, fmt::format("the recording launches a kernel named '{}'", out.kernel));
    }
    const std::string where = fmt::format("the launch of {}", out.kernel);
    const auto grid = k.at("grid").get<std::array<std::int64_t, 3>>();
    const auto block = k.at("block").get<std::array<std::int64_t, 3>>();
    const auto shared = k.at("shared").get<std::int64_t>();
    refuseIf(checkLaunchConfiguration(where, grid, block, shared));  // before narrowing
    for (std::size_t d = 0; d < 3; ++d) {
      out.grid[d] = static_cast<std::uint32_t>(grid[d]);
      out.block[d] = static_cast<std::uint32_t>(block[d]);
    }
    out.sharedBytes = static_cast<std::uint32_t>(shared);
    if (sameArgs && !k.contains("args")) {
      out.args = *sameArgs;
      return out;
    }
    for (const auto& a : k.at("args")) out.args.push_back(argument(a, where));
    return out;
  }

  PlanStep libraryStep(const nlohmann::json& recorded) const {
    auto parsed = libraryStepFromJson(recorded);
    if (!parsed) refuse(Verdict::invalid_submission, "the recording: " + parsed.error());
    LibraryStep call = std::move(*parsed);
    // Only the harness marks a step as its copy into the output; a recorded step is the solution's own.
    if (call.purpose == LibraryStep::Purpose::output) call.purpose = LibraryStep::Purpose::candidate;
    if (std::string why = libraryOpRefusal(call.name, call.overload); !why.empty()) refuse(Verdict::unsupported, why);
    if (std::string why = libraryArgumentRefusal(call); !why.empty()) refuse(Verdict::unsupported, why);
    call.forEachView([&](const TensorView& v) { checkView(v); });
    for (const TensorView& v : call.outputs) {
      if (buffer(v.buffer).role == "input") refuse(Verdict::invalid_submission, "a library step's result is recorded into an input");
    }
    // KernelBench's inputs are the reference's too: a step that writes one is input mutation, whether
    // or not the trial's values happen to change (relu_ on inputs that are all positive). A module
    // buffer is the exception: the reference updates it too (BatchNorm in training mode), and the
    // trials compare what the plan leaves there with the reference's update.
    for (const TensorView& v : libraryWrittenArguments(call)) {
      const Buffer& b = buffer(v.buffer);
      if (b.role != "input" || b.moduleBuffer) continue;
      stand(Verdict::hack_suspected,
            fmt::format("forward modifies its input '{}' in place ({}); the inputs are the reference's too, and no step may write them", b.name,
                        call.name));
    }
    call.forEachView([&](TensorView& v) { v = renamed(std::move(v)); });
    PlanStep out;
    out.kind = PlanStep::Kind::library;
    out.library = std::move(call);
    return out;
  }

  PlanArg argument(const nlohmann::json& a, const std::string& where) const {
    if (a.contains("null")) {
      PlanArg p;
      p.kind = PlanArg::Kind::null;
      return p;
    }
    if (a.contains("buffer")) {
      return PlanArg::pointer(buffer(a.at("buffer").get<std::string>()).name, a.at("byte_offset").get<std::int64_t>());  // validatePlan checks it
    }
    PlanArg p;
    const std::string hex = a.at("bytes").get<std::string>();
    if (hex.size() % 2 || hex.size() > 2 * LaunchLimits::maxScalarBytes)
      refuse(Verdict::invalid_submission, fmt::format("{}: a malformed scalar argument", where));
    for (std::size_t i = 0; i < hex.size(); i += 2) p.bytes.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    const std::string kind = a.value("kind", "bytes");
    const std::size_t bits = 8 * p.bytes.size();
    p.type = (kind == "int" && bits >= 8)                      ? fmt::format("int{}", bits)
             : kind == "uint"                                  ? fmt::format("uint{}", bits)
             : (kind == "float" && (bits == 32 || bits == 64)) ? fmt::format("float{}", bits)
                                                               : fmt::format("bytes{}", p.bytes.size());
    return p;
  }

  const nlohmann::json& recorded_;
  const Problem& problem_;
  const SizeSet& set_;
  const MemoryBudget& budget_;
  std::optional<PlanRefusal>* standing_;
  std::map<std::string, Buffer> buffers_;  // by the recording's name
  PlanBuffers views_;                      // the same, as the validator reads them
  const PlanBuffers problemBuffers_;       // the problem's inputs and outputs at these sizes
  std::vector<PlanStep> outputCopies_;
};

}  // namespace

std::variant<LaunchPlan, PlanRefusal> planFromRecording(const nlohmann::json& recorded, const Problem& problem, const SizeSet& sizeSet,
                                                        const MemoryBudget& budget, std::optional<PlanRefusal>* standing) {
  try {
    return Converter(recorded, problem, sizeSet, budget, standing).run();
  } catch (const Refused& r) {
    return r.refusal;
  } catch (const nlohmann::json::exception& e) {
    return PlanRefusal{Verdict::invalid_submission, fmt::format("the recording is malformed: {}", e.what())};
  }
}

namespace {

// Every kernel launch of the recording's plans, as its JSON.
template <class F>
void forEachKernelLaunch(nlohmann::json& plans, F&& f) {
  for (auto& [set, plan] : plans.items()) {
    for (auto& step : plan.at("steps")) {
      if (step.contains("kernel")) f(step["kernel"]);
    }
  }
}

// The kernels a launch may run: its own and, autotuned, each configuration's.
template <class F>
void forEachLaunchedKernel(const nlohmann::json& kernel, F&& f) {
  f(kernel.at("name").get<std::string>());
  if (!kernel.contains("autotune")) return;
  for (const auto& a : kernel["autotune"].at("alternatives")) f(a.at("name").get<std::string>());
}

}  // namespace

std::string assembledTritonConfigurations(const nlohmann::json& triton, nlohmann::json& plans, const std::string& arch, std::string& log) {
  if (!triton.contains("kernels")) return triton.value("device_source", std::string());  // the simulator's: no configurations
  std::string every;
  std::map<std::string, std::string> code;
  for (const auto& k : triton.at("kernels")) every += code[k.at("name").get<std::string>()] = k.at("code").get<std::string>();
  bool autotuned = false;
  forEachKernelLaunch(plans, [&](nlohmann::json& kernel) { autotuned = autotuned || kernel.contains("autotune"); });
  if (!autotuned) return every;

  std::map<std::string, std::string> refused;  // kernel -> ptxas's first error
  try {
    const NvrtcCompiler compiler(CompileOptions{.arch = arch, .lineinfo = false}, {});
    std::set<std::string> assembled;
    forEachKernelLaunch(plans, [&](nlohmann::json& kernel) {
      if (!kernel.contains("autotune")) return;
      forEachLaunchedKernel(kernel, [&](const std::string& name) {
        const auto it = code.find(name);
        if (it == code.end() || !assembled.insert(name).second) return;  // not Triton's (the module's build will say), or done
        const CompileOutput built = compiler.compile(it->second, {name});
        if (built.status == CompileOutput::Status::compileError) refused[name] = firstErrorLine(built.log);
      });
    });
  } catch (const std::exception& e) {
    log += fmt::format("autotuned configurations not assembled alone for {}: {}\n", arch, e.what());
    return every;
  }
  std::set<std::string> said;
  forEachKernelLaunch(plans, [&](nlohmann::json& kernel) {
    if (!kernel.contains("autotune")) return;
    nlohmann::json& tuning = kernel["autotune"];
    nlohmann::json kept = nlohmann::json::array(), names = nlohmann::json::array();
    for (std::size_t i = 0; i < tuning.at("alternatives").size(); ++i) {
      const nlohmann::json& a = tuning["alternatives"][i];
      const std::string name = a.at("name");
      if (!refused.contains(name)) {
        kept.push_back(a);
        names.push_back(tuning["configs"][i]);
      } else if (said.insert(name).second) {
        log += fmt::format("autotune {}: {} is not timed on the GPU: ptxas refuses it ({})\n", tuning.value("key", std::string()),
                           tuning["configs"][i].get<std::string>(), refused[name]);
      }
    }
    if (kept.empty()) return;  // every configuration refused: the build fails, as Triton's call would
    for (const char* field : {"name", "grid", "block", "shared", "args"}) {
      if (kept[0].contains(field)) kernel[field] = kept[0][field];
    }
    if (kept.size() == 1) {
      kernel.erase("autotune");
    } else {
      tuning["alternatives"] = kept;
      tuning["configs"] = names;
    }
  });

  // The code of every kernel a launch still names: not a configuration left out, here or by the recorder
  // (one over the shared memory a block can have is compiled, never launched, and may not assemble).
  std::set<std::string> launched;
  forEachKernelLaunch(plans, [&](nlohmann::json& kernel) { forEachLaunchedKernel(kernel, [&](const std::string& n) { launched.insert(n); }); });
  std::string source;
  for (const auto& k : triton.at("kernels")) {
    if (launched.contains(k.at("name").get<std::string>())) source += k.at("code").get<std::string>();
  }
  return source;
}

}  // namespace cuset
