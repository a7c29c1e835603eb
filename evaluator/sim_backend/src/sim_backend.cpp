#include "cuset/evaluator/sim_backend/sim_backend.hpp"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstring>
#include <optional>
#include <regex>
#include <sstream>

#include "cuset/common/error.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/region/device_region.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/candidate/library_call.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/results/output_comparison.hpp"

namespace cuset {

namespace {

// The plan in the order it runs: runs of kernel steps (one sandbox job each) and the library steps
// between them.
struct Segment {
  std::vector<KernelStep> kernels;
  const LibraryStep* library = nullptr;
  std::size_t index = 0;  // of the library step in the plan
};

std::vector<Segment> segmentsOf(const LaunchPlan& plan) {
  std::vector<Segment> out;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    if (s.kind == PlanStep::Kind::library) {
      out.push_back({{}, &s.library, i});
    } else {
      if (out.empty() || out.back().library) out.emplace_back();
      out.back().kernels.push_back(s.kernel);
    }
  }
  return out;
}

// The race check's code addresses (`@pc:0xOFFSET@` in the candidate's library, shared_accesses.cpp) as
// lines of the device code: addr2line, run here outside the sandbox, reads the line tables the
// instrumented build carries (-g1). A place it cannot tell is said so.
std::string withSourceLines(const std::string& message, const std::filesystem::path& library) {
  static const std::regex marker(R"(@pc:(0x[0-9a-f]+)@)");
  std::vector<std::string> argv{"addr2line", "-e", library.string()};
  for (auto it = std::sregex_iterator(message.begin(), message.end(), marker); it != std::sregex_iterator(); ++it) argv.push_back((*it)[1]);
  if (argv.size() == 3) return message;
  std::vector<std::string> places;
  try {
    const SubprocessResult r = runSubprocess(argv, std::chrono::seconds(10), 1 << 16);
    std::istringstream lines(r.ok() ? r.output : std::string());
    // "FOLDER/candidate.cu:17" (a manifest candidate), "cuda_sources of NAME:13" (a load_inline
    // extension's #line, kernelbench_translator.cpp), "??:0" (no line).
    static const std::regex candidateLine(R"((?:^|/)candidate\.cu:(\d+))"), extensionLine(R"((?:^|/)(cuda_sources of [\w.-]+):(\d+))");
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      places.push_back(std::regex_search(line, m, candidateLine)   ? "at line " + m[1].str()
                       : std::regex_search(line, m, extensionLine) ? fmt::format("at line {} of {}", m[2].str(), m[1].str())
                                                                   : "at an unknown place");
    }
  } catch (const std::exception&) {  // no addr2line: the lines are left out, the race is still named
  }
  std::string out;
  std::size_t i = 0;
  auto last = message.cbegin();
  for (auto it = std::sregex_iterator(message.begin(), message.end(), marker); it != std::sregex_iterator(); ++it, ++i) {
    out.append(last, message.cbegin() + it->position());
    out += i < places.size() ? places[i] : "at an unknown place";
    last = message.cbegin() + it->position() + it->length();
  }
  out.append(last, message.cend());
  return out;
}

// Trial 0 again with the race check on (shared memory, and the trial's buffers in global memory). After
// wrong outputs, a race between two threads (the simulator runs each thread to its next barrier and
// blocks one after another, so a missing barrier shows as wrong values) is the verdict, named, instead
// of a mismatch count. After correct ones, it finds what that order hides: `out[j] += v` by several
// threads or blocks sums exactly here and loses updates on a GPU, where KernelBench's check fails too.
void nameRace(const Problem& problem, const RegionLayout& layout, const CorrectnessOptions& options, const TrialExecutor& execute,
              const std::filesystem::path& instrumentedLibrary, EvalResult& result) {
  const std::vector<HostTensor> inputs = drawInputs(problem, problem.sizes(options.sizeSet), options.seed, 0, false);
  std::vector<std::byte> region = layout.fill(inputs, 0);
  const TrialRun run = execute(region, TrialRequest{.trial = 0, .raceCheck = true});
  if (run.status != TrialRun::Status::runtimeError) return;
  const bool global = run.message.find(kGlobalMemoryRace) != std::string::npos;
  if (!global && !namesSharedMemoryRace(run.message)) return;
  const std::string race = withSourceLines(run.message, instrumentedLibrary);
  result.reason = result.verdict == Verdict::correct ? race + " (the simulator's own order computed the right outputs; a GPU's does not promise them)"
                                                     : fmt::format("{} (the trials' outputs: {})", race, result.reason);
  result.verdict = Verdict::runtime_error;
  // A GPU runs the two accesses concurrently (other blocks, or other warps, or lanes of one warp that
  // all load before any stores): KernelBench's trials there see the race, not this order's outputs.
  if (global && result.kernelbench && result.kernelbench->correct.value_or(false)) {
    result.kernelbench->correct = false;
    result.kernelbench->issue = "predicted: " + race;
  }
}

// Whether the kernel orders its blocks itself (a flag after a fence, a lock, a grid-wide barrier), an
// order the race check does not model: its global accesses are then compared within each block only.
// PTX says it too (the Triton form's kernels, inline PTX): a GPU-scope fence, a compare-and-swap or an
// exchange (tl.atomic_cas / tl.atomic_xchg spin locks, `atom.global.gpu.acq_rel.cas.b32`).
bool ordersItsBlocks(std::string_view source) {
  for (std::string_view marker : {"__threadfence", "atomicCAS", "atomicExch", "this_grid", "grid_group", "cuda::atomic", "atomic_ref", "membar.gl",
                                  "fence.acq_rel.gpu", "fence.sc.gpu", "fence.acq_rel.sys", "fence.sc.sys"}) {
    if (source.find(marker) != std::string_view::npos) return true;
  }
  for (std::size_t at = source.find("atom."); at != std::string_view::npos; at = source.find("atom.", at + 5)) {
    const std::string_view opcode = source.substr(at, source.find_first_of(" \t", at) - at);
    if (opcode.find(".cas.") != std::string_view::npos || opcode.find(".exch.") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

bool namesSharedMemoryRace(std::string_view reason) { return reason.find(kSharedMemoryRace) != std::string_view::npos; }

void runSimBackend(const Problem& problem, const LaunchPlan& plan, std::string_view source, const SimCompiler& compiler, SandboxPool& sandbox,
                   ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result) {
  auto finish = [&](Verdict v, std::string reason) {
    result.verdict = v;
    result.reason = std::move(reason);
  };
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  // Every buffer against inaccessible pages, after it in trials 0-1 and before it in trials 2-3 (and
  // so on): an access outside a buffer faults as memcheck would report it on a GPU. What no page can
  // cover, the rest of an odd-sized buffer's last 16-byte granule, the build checks on every load.
  const RegionLayout fencedAfter = RegionLayout::plan(problem, plan, sizes, RegionLayout::Fences::afterBuffers);
  const RegionLayout fencedBefore = RegionLayout::plan(problem, plan, sizes, RegionLayout::Fences::beforeBuffers);
  const RegionLayout unfenced = RegionLayout::plan(problem, plan, sizes);  // KernelBench's check: memory as a GPU gives it
  const SimCompileOutput built = compiler.compile(source, plan.kernelNames(), {.tailReads = fencedAfter.hasTails()});
  result.timings.simCompileMs = built.milliseconds;
  if (!built.rejection.empty()) return finish(Verdict::invalid_submission, built.rejection);
  if (!built.unsupported.empty())
    return finish(Verdict::unsupported, "the CPU simulator cannot run this kernel (judge it with --backend cuda): " + built.unsupported);
  if (!built.ok) {
    result.compileLog += "\n--- host compiler (sim backend) ---\n" + built.log;
    // NVRTC compiled it (every backend's gate), so it is CUDA; what the host build rejects (inline PTX,
    // a device intrinsic the simulator lacks) is the simulator's limit, never the model's fault.
    return finish(Verdict::unsupported, "the CPU simulator cannot run this kernel (judge it with --backend cuda): " + firstErrorLine(built.log));
  }
  const auto start = std::chrono::steady_clock::now();
  const TrialLayouts layouts(fencedAfter, fencedBefore, unfenced);
  const std::vector<Segment> segments = segmentsOf(plan);
  std::array<std::vector<LibraryStep>, 3> libraryCalls;  // by layout (TrialLayouts::index): buffer offsets differ
  for (int layout = 0; layout < 3; ++layout) {
    libraryCalls[layout].resize(segments.size());
    for (std::size_t i = 0; i < segments.size(); ++i) {
      if (segments[i].library) libraryCalls[layout][i] = placedIn(*segments[i].library, layouts.at(layout));
    }
  }
  result.timingKind = "cpu_simulator";

  // The same kernels built to hand every shared-memory access to the runtime (its race check and
  // lockstep execution), made only when a trial needs them.
  std::optional<SimCompileOutput> instrumented;
  auto instrumentedLibrary = [&]() -> const SimCompileOutput* {
    if (!instrumented) instrumented = compiler.compile(source, plan.kernelNames(), {.tailReads = fencedAfter.hasTails(), .sharedAccesses = true});
    return instrumented->ok ? &*instrumented : nullptr;
  };
  // KernelBench's check predicts a GPU, whose warps run in lockstep: where CuSeT's own trials found
  // wrong outputs in a kernel with shared memory, its trials run in lockstep (a race the GPU hides
  // stays hidden, docs/kernelbench.md "Races").
  const bool sharedMemory = source.find("__shared__") != std::string_view::npos;
  auto lockstepForKernelBench = [&](const TrialRequest& request) {
    return request.kernelbench && sharedMemory && result.verdict == Verdict::wrong_answer && instrumentedLibrary() != nullptr;
  };

  // Every trial of the candidate on one worker, which keeps its __device__ globals between them.
  SandboxPool::Lease worker = sandbox.acquire();
  const TrialExecutor execute = [&](std::vector<std::byte>& region, const TrialRequest& request) {
    TrialRun run;
    run.status = TrialRun::Status::ok;
    double kernelMs = 0.0;
    for (std::size_t i = 0; i < segments.size(); ++i) {
      if (segments[i].library) {
        if (std::string why = runLibraryCall(libraryCalls[TrialLayouts::index(request)][i], LibraryMemory{region.data()}, request.numerics);
            !why.empty()) {
          run.status = TrialRun::Status::runtimeError;
          run.message = fmt::format("library step {} ({}) failed: {}", segments[i].index + 1, segments[i].library->op(), why);
          break;
        }
        continue;
      }
      SimJob job;
      job.library = built.library;
      job.stateKey = result.key();
      job.fibers = built.needsFibers;
      job.reverseThreadOrder = request.reverseThreadOrder;
      const bool lockstep = lockstepForKernelBench(request);
      if ((request.raceCheck || lockstep) && instrumentedLibrary() != nullptr) {
        job.library = instrumented->library;
        job.stateKey += lockstep ? "#lockstep" : "#racecheck";  // another library: globals of its own
        job.fibers = job.fibers || lockstep;
        job.sharedAccesses = lockstep ? 2 : 1;
        job.raceAcrossBlocks = !ordersItsBlocks(source);
      }
      // A huge positive value, then a huge negative one: a reduction over shared memory it never wrote
      // (a max, a min or a sum) cannot come out right on both.
      job.sharedPoison = request.kernelbench ? 0 : request.trial % 2 == 0 ? 0x7F : 0xFE;
      job.launches = segments[i].kernels;
      job.layout = &layouts.of(request);
      job.region = std::move(region);
      run = worker.run(job);
      region = std::move(job.region);
      kernelMs += run.kernelMs;
      if (run.status != TrialRun::Status::ok) break;
    }
    run.kernelMs = kernelMs;
    result.timings.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return run;
  };
  runCorrectnessTrials(problem, layouts, references, options, execute, "the simulator", true, result);
  const bool raceCheckAfter = result.verdict == Verdict::wrong_answer || (result.verdict == Verdict::correct && options.raceCheckCorrect);
  if (raceCheckAfter && instrumentedLibrary() != nullptr) nameRace(problem, fencedAfter, options, execute, instrumented->library, result);
}

}  // namespace cuset
