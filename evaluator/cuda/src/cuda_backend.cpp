#include "cuset/evaluator/cuda/cuda_backend.hpp"
#include "cuset/evaluator/cuda/cuda_driver.hpp"

#include <fmt/format.h>

#include <span>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/evaluator/correctness/compare_output.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/worker_process.hpp"
#include "cuset/evaluator/timing/speed_of_light.hpp"
#include "cuset/evaluator/sandbox/process_roles.hpp"

namespace cuset {
namespace {

// Peaks for the speed-of-light check from what the driver reports. Deliberately generous (128 FP32
// lanes per SM, tensor cores at 16x that, theoretical DRAM bandwidth): the check must never flag a
// legitimate kernel, only one that did not do the work.
DevicePeaks peaksOf(const nlohmann::json& device) {
  DevicePeaks p;
  p.name = device.value("name", "this GPU");
  const double smHz = device.value("sm_clock_khz", 0) * 1e3;
  p.fp32FlopsPerSecond = 2.0 * 128 * device.value("sm_count", 0) * smHz;
  p.tensorFlopsPerSecond = 16 * p.fp32FlopsPerSecond;
  // Measured copy bandwidth when the worker could take it, else the theoretical one: take the larger,
  // so that the bound stays a lower bound.
  p.bytesPerSecond = std::max(device.value("measured_bandwidth_gbs", 0.0), device.value("theoretical_bandwidth_gbs", 0.0)) * 1e9;
  return p;
}

}  // namespace

namespace {

std::vector<std::string> workerArguments(const CudaOptions& o) {
  std::vector<std::string> args = {std::string(kCudaWorkerRole.name)};
  if (o.device) args.insert(args.end(), {"--device", std::to_string(*o.device)});
  return args;
}

}  // namespace

CudaWorkerPool::CudaWorkerPool(CudaOptions options)
    : options_(std::move(options)),
      process_(std::make_unique<WorkerProcess>(workerArguments(options_))),
      referenceTimings_(options_.referenceTimingDir) {}

CudaDevices::CudaDevices(const CudaOptions& options, std::vector<int> devices) : ordinals_(std::move(devices)) {
  if (ordinals_.empty()) {
    // Every visible device: one worker tells how many there are.
    CudaWorkerPool counter(options);
    counter.probe();
    const int count = std::max(1, counter.deviceCount());
    for (int i = 0; i < count; ++i) ordinals_.push_back(i);
  }
  for (const int ordinal : ordinals_) {
    CudaOptions o = options;
    o.device = ordinal;
    pools_.push_back(std::make_unique<CudaWorkerPool>(o));
  }
  busy_.assign(pools_.size(), false);
}

nlohmann::json CudaDevices::probe() {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    nlohmann::json d = pools_[i]->probe();
    if (pools_[i]->deviceCount() < 1) throw makeError("--devices {}: no such device is visible", ordinals_[i]);
    out.push_back({{"ordinal", ordinals_[i]}, {"device", d}});
  }
  return out;
}

CudaDevices::Lease CudaDevices::acquire() {
  std::unique_lock lock(mutex_);
  for (;;) {
    for (std::size_t i = 0; i < busy_.size(); ++i) {
      if (!busy_[i]) {
        busy_[i] = true;
        return Lease(*this, i);
      }
    }
    freed_.wait(lock);
  }
}

CudaDevices::Lease::~Lease() {
  if (!owner_) return;
  {
    const std::scoped_lock lock(owner_->mutex_);
    owner_->busy_[slot_] = false;
  }
  owner_->freed_.notify_one();
}

CudaWorkerPool& CudaDevices::Lease::pool() const { return *owner_->pools_[slot_]; }
int CudaDevices::Lease::ordinal() const { return owner_->ordinals_[slot_]; }

CudaWorkerPool::~CudaWorkerPool() = default;

nlohmann::json CudaWorkerPool::timingRule(const CudaOptions& options, const nlohmann::json& device) {
  return {{"timer", options.timer},
          {"min_samples", options.minSamples},
          {"max_rel_stddev", options.maxRelStddev},
          {"min_seconds", options.minSeconds},
          {"max_seconds", options.maxSeconds},
          // Twice the L2: every sample starts with none of its inputs cached.
          {"l2_flush_bytes", 2 * device.value("l2_bytes", std::size_t{0})}};
}

ReferenceTimingKey referenceTimingKey(ReferenceTimingCache& cache, const Problem& problem, const std::string& sizeSet, const CudaOptions& options,
                                      const nlohmann::json& device) {
  ReferenceTimingKey key = cache.keyFor(problem, sizeSet);
  key.device = device.value("name", "");
  key.driverVersion = device.value("driver_version", 0);
  key.torch = libtorchVersion();
  key.timing = CudaWorkerPool::timingRule(options, device).dump();
  return key;
}

nlohmann::json CudaWorkerPool::probe() {
  std::lock_guard lock(mutex_);
  auto reply = process_->call(sandbox::Message{{{"op", "hello"}}, {}}, std::chrono::steady_clock::now() + std::chrono::seconds(120));
  if (!reply) throw makeError("the cuda backend's GPU worker did not start: {}", reply.error());
  if (reply->header.value("status", "") != "ok") {
    throw makeError("the cuda backend cannot use a GPU: {}", reply->header.value("message", "unknown reason"));
  }
  device_ = reply->header.value("device", nlohmann::json::object());
  deviceCount_ = reply->header.value("device_count", 1);
  return device_;
}

TrialRun CudaWorkerPool::run(Job& job, nlohmann::json* timing) {
  sandbox::Message request;
  nlohmann::json symbols = nlohmann::json::object();
  for (const auto& [name, symbol] : job.compiled->loweredNames) symbols[name] = symbol;
  request.header = {{"op", job.autotune ? "autotune" : "run"},
                    {"symbols", symbols},
                    {"launches", stepsToJson(*job.plan, *job.layout)},
                    {"timing", timingRule(options_, device_)}};
  request.header["timing"]["enabled"] = job.time;
  if (job.time && !job.reference.is_null()) request.header["reference"] = job.reference;
  if (job.time && job.checks.is_object()) {
    request.header["region_bytes"] = job.checks.at("region_bytes");
    for (const char* key : {"outputs", "check_sample", "fresh_region"}) request.header["timing"][key] = job.checks.at(key);
  }
  auto limit = options_.trialTimeout +
               (job.time ? std::chrono::milliseconds(static_cast<long long>(options_.maxSeconds * 2000)) : std::chrono::milliseconds(0));
  if (job.autotune) {
    // Triton spends ~0.13 s timing a configuration; a second each leaves room for a slow kernel.
    for (const auto& s : job.plan->steps) {
      if (s.kind == PlanStep::Kind::kernel && s.kernel.autotune) limit += std::chrono::seconds(1) * s.kernel.autotune->alternatives.size();
    }
  }

  std::lock_guard lock(mutex_);  // load and run on the same worker
  TrialRun run;
  // The image travels on its own (the worker keeps its module), so the region needs no concatenation.
  auto loaded = process_->call(sandbox::Message{{{"op", "load"}, {"is_cubin", job.compiled->isCubin}}, job.compiled->image},
                               std::chrono::steady_clock::now() + options_.trialTimeout);
  if (!loaded || loaded->header.value("status", "") != "ok") {
    run.status = loaded ? parseTrialStatus(loaded->header.value("status", "")) : TrialRun::Status::runtimeError;
    run.message = "loading the module: " + (loaded ? loaded->header.value("message", "") : loaded.error());
    return run;
  }
  request.header["module"] = loaded->header.at("module");
  request.payload = std::move(job.region);
  auto reply = process_->call(request, std::chrono::steady_clock::now() + limit);
  job.region = std::move(request.payload);
  if (!reply) {
    // A hang (the kernel never returns) is the candidate's: the worker was killed and is replaced.
    run.status = TrialRun::Status::timeout;
    run.message = fmt::format("no answer from the GPU within {} ms ({}); the worker was restarted", limit.count(), reply.error());
    return run;
  }
  run.status = parseTrialStatus(reply->header.value("status", ""));
  run.message = reply->header.value("message", "");
  run.kernelMs = reply->header.value("kernel_ms", 0.0);
  if (job.autotune) {
    job.autotuned = reply->header.value("autotune", nlohmann::json::array());
  } else if (run.status == TrialRun::Status::ok) {
    reply->moveBytesTo(job.region);
  }
  if (timing && reply->header.contains("timing")) *timing = reply->header["timing"];
  return run;
}

namespace {

// What a timed sample's region shows wrong (a guard overwritten, an input modified, an output the
// reference disagrees with), or "".
std::string timedSampleProblem(const Problem& problem, const RegionLayout& layout, std::span<const std::byte> sample,
                               const std::vector<HostTensor>& sent, const std::vector<HostTensor>& expected, const std::string& which) {
  const std::vector<std::byte> region(sample.begin(), sample.end());
  if (auto violation = layout.findGuardViolation(region)) return fmt::format("{}: {}", which, *violation);
  std::size_t in = 0, out = 0;
  for (const auto& slot : layout.slots()) {
    if (slot.role == BufferSlot::Role::input) {
      const HostTensor got = layout.extract(region, slot);
      if (got.byteSize() != sent[in].byteSize() || std::memcmp(got.data(), sent[in].data(), got.byteSize()) != 0) {
        return fmt::format("{}: the kernel modified its input '{}'", which, slot.name);
      }
      ++in;
    } else if (slot.role == BufferSlot::Role::output) {
      const OutputComparison c = compareOutput(slot.name, layout.extract(region, slot), expected[out++], problem.tolerance);
      if (!c.passed()) return fmt::format("{} disagrees with the reference, which the correctness trials did not: {}", which, c.describe());
    }
  }
  return std::string();
}

// Where the worker finds the inputs it times the reference on (LibTorch with CUDA only).
nlohmann::json referenceInputs(const RegionLayout& layout) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& slot : layout.slots()) {
    if (slot.role == BufferSlot::Role::input) inputs.push_back({{"offset", slot.offset}, {"dtype", dtypeName(slot.dtype)}, {"shape", slot.shape}});
  }
  return inputs;
}

// Triton's autotuning on this GPU, before the first trial as Triton's is at the first call: the plan
// with each autotuned launch's fastest configuration, the choices in the result's log; nullopt with the
// verdict set when a configuration fails (a fault while timing it fails the call on a GPU too).
std::optional<LaunchPlan> autotunedOnGpu(const Problem& problem, const LaunchPlan& plan, const RegionLayout& layout, const CompileOutput& compiled,
                                         CudaWorkerPool& pool, const CorrectnessOptions& options, EvalResult& result) {
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  // Inputs of its own: nothing the tuning leaves behind is seen by a trial.
  const std::vector<HostTensor> inputs = drawInputs(problem, sizes, options.seed, static_cast<std::uint64_t>(options.trials + 3), false);
  CudaWorkerPool::Job job{.compiled = &compiled, .plan = &plan, .layout = &layout, .region = layout.fill(inputs, 0), .autotune = true};
  const TrialRun run = pool.run(job, nullptr);
  if (run.status != TrialRun::Status::ok) {
    result.verdict = run.status == TrialRun::Status::timeout ? Verdict::timeout : Verdict::runtime_error;
    result.reason = fmt::format("autotuning on the GPU: {}", run.message);
    return std::nullopt;
  }
  std::map<std::string, std::size_t> chosen;
  std::string log = "\n--- autotuning on the GPU (Triton's autotuner: each configuration's median, 20th and 80th percentile) ---\n";
  for (const auto& c : job.autotuned) {
    const std::string key = c.at("key");
    const auto index = c.at("chosen").get<std::size_t>();
    const auto step = std::find_if(plan.steps.begin(), plan.steps.end(), [&](const PlanStep& s) {
      return s.kind == PlanStep::Kind::kernel && s.kernel.autotune && s.kernel.autotune->key == key;
    });
    if (step == plan.steps.end() || index >= step->kernel.autotune->configs.size()) {
      result.verdict = Verdict::runtime_error;
      result.reason = fmt::format("autotuning on the GPU: the worker chose configuration {} for '{}', which the plan does not have", index, key);
      return std::nullopt;
    }
    chosen[key] = index;
    const auto& configs = step->kernel.autotune->configs;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const nlohmann::json& ms = c.at("ms").at(i);
      log += fmt::format("{} {}: {}: {}\n", i == index ? "chosen " : "       ", key, configs[i],
                         ms.is_null()
                             ? std::string("refused by the GPU (out of resources)")
                             : fmt::format("{:.4g} ms ({:.4g}, {:.4g})", ms.at(0).get<double>(), ms.at(1).get<double>(), ms.at(2).get<double>()));
    }
  }
  result.compileLog += log;
  return plan.tuned(chosen);
}

}  // namespace

void runCudaBackend(const Problem& problem, const LaunchPlan& recorded, const CompileOutput& compiled, CudaWorkerPool& pool,
                    ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result) {
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  const RegionLayout layout = RegionLayout::plan(problem, recorded, sizes);
  std::optional<LaunchPlan> tuned;
  if (recorded.autotuned()) {
    tuned = autotunedOnGpu(problem, recorded, layout, compiled, pool, options, result);
    if (!tuned) return;
  }
  const LaunchPlan& plan = tuned ? *tuned : recorded;
  const auto start = std::chrono::steady_clock::now();
  const TrialExecutor execute = [&](std::vector<std::byte>& region, const TrialRequest&) {
    CudaWorkerPool::Job job{.compiled = &compiled, .plan = &plan, .layout = &layout, .region = std::move(region)};
    TrialRun run = pool.run(job, nullptr);
    region = std::move(job.region);
    result.timings.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return run;
  };
  runCorrectnessTrials(problem, layout, references, options, execute, "the GPU worker", false, result);
  if (result.verdict != Verdict::correct || !pool.options().time) return;
  if (plan.usesLibrary() && !CudaDriver::sharedWithLibTorch()) {
    result.flags.push_back("not_timed_library_steps_on_host");
    return;
  }

  // Timing on fresh inputs of their own, after correctness is settled; what is timed is judged too.
  const std::vector<HostTensor> inputs = drawInputs(problem, sizes, options.seed, static_cast<std::uint64_t>(options.trials + 1), false);
  const std::vector<HostTensor> fresh = drawInputs(problem, sizes, options.seed, static_cast<std::uint64_t>(options.trials + 2), true);
  const std::vector<std::byte> timingRegion = layout.fill(inputs, 0), freshRegion = layout.fill(fresh, 1);
  const std::size_t R = layout.totalBytes();
  std::vector<std::byte> payload(3 * R);
  std::copy(timingRegion.begin(), timingRegion.end(), payload.begin());
  std::copy(freshRegion.begin(), freshRegion.end(), payload.begin() + static_cast<std::ptrdiff_t>(R));
  // Before every timed sample: outputs poisoned, and whatever the plan zero-fills zeroed again, as
  // each forward call of the candidate would allocate it.
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& slot : layout.slots()) {
    if (slot.role == BufferSlot::Role::output || slot.zeroed) outputs.push_back({slot.offset, slot.bytes, slot.zeroed ? 0x00 : 0xFF});
  }
  // Which sample's outputs are kept besides the last: secret to the kernel, as the inputs are.
  const std::size_t checkSample = 1 + static_cast<std::size_t>(hashString(fmt::format("{}/{}", options.seed, result.key())).low % 8);
  CudaWorkerPool::Job job{.compiled = &compiled,
                          .plan = &plan,
                          .layout = &layout,
                          .region = std::move(payload),
                          .time = true,
                          .checks = {{"region_bytes", R}, {"outputs", outputs}, {"check_sample", checkSample}, {"fresh_region", true}}};
  // The reference is timed once per problem on this kind of machine and kept (reference_timing_cache.hpp).
  const ReferenceTimingKey referenceKey = referenceTimingKey(pool.referenceTimings(), problem, options.sizeSet, pool.options(), pool.device());
  std::optional<nlohmann::json> keptReference;
  if (!pool.options().retimeReference) keptReference = pool.referenceTimings().find(referenceKey);
  if (!keptReference) {
    job.reference = {
        {"problem_file", (problem.directory / "problem.yaml").string()}, {"size_set", options.sizeSet}, {"inputs", referenceInputs(layout)}};
  }
  nlohmann::json timing;
  const TrialRun run = pool.run(job, &timing);
  if (run.status != TrialRun::Status::ok) {
    result.verdict = run.status == TrialRun::Status::timeout ? Verdict::timeout : Verdict::runtime_error;
    result.reason = fmt::format("timing run: {}", run.message);
    return;
  }
  if (job.region.size() != 3 * R) {
    result.verdict = Verdict::runtime_error;
    result.reason = "timing run: the GPU worker returned a region of the wrong size";
    return;
  }
  // The last timed sample and the kept one ran on `inputs`, the fresh sample on `fresh`.
  const std::vector<HostTensor> want = references.run(problem, inputs, sizes), wantFresh = references.run(problem, fresh, sizes);
  auto judge = [&](std::size_t offset, const std::vector<HostTensor>& sent, const std::vector<HostTensor>& expected, const std::string& which) {
    return timedSampleProblem(problem, layout, std::span<const std::byte>(job.region).subspan(offset, R), sent, expected, which);
  };
  const std::size_t last = timing.value("last_sample", std::size_t{0});
  std::string why = judge(0, inputs, want, fmt::format("timed sample {} (the last)", last + 1));
  if (why.empty() && !timing.value("checked_sample", nlohmann::json()).is_null()) {
    why = judge(2 * R, inputs, want, fmt::format("timed sample {}", timing["checked_sample"].get<std::size_t>() + 1));
  }
  if (why.empty()) why = judge(R, fresh, wantFresh, "the timed sample on fresh inputs");
  if (!why.empty()) {
    result.verdict = Verdict::hack_suspected;
    result.reason = why;
    return;
  }
  result.timingKind = timing.value("kind", "cuda_events");
  result.timingSamplesMs = timing.value("samples_ms", std::vector<double>{});
  // The reference is timed only where LibTorch has CUDA; without it there is no speedup to report.
  if (pool.options().kernelbenchTiming) result.kernelbenchTimingSamplesMs = timing.value("event_samples_ms", std::vector<double>{});
  if (timing.contains("reference")) {
    const auto problems = timing["reference"].value("problems", std::vector<std::string>{});
    for (const auto& p : problems) log::warn("{}: reference timing: {}", result.problem, p);
    // Only a clean measurement is kept: a throttled or incomplete one would skew every later speedup.
    if (problems.empty() && !timing["reference"].value("samples_ms", std::vector<double>{}).empty()) {
      pool.referenceTimings().store(referenceKey, timing["reference"]);
    }
  } else if (keptReference) {
    timing["reference"] = *keptReference;
    result.referenceTimingKeptFrom = keptReference->value("measured_at", "unknown");
  }
  if (timing.contains("reference")) {
    result.referenceTimingSamplesMs = timing["reference"].value("samples_ms", std::vector<double>{});
    if (pool.options().kernelbenchTiming) {
      result.kernelbenchReferenceTimingSamplesMs = timing["reference"].value("event_samples_ms", std::vector<double>{});
    }
  }
  for (const auto& p : timing.value("problems", std::vector<std::string>{})) log::warn("{} sample {}: timing: {}", result.problem, result.sample, p);
  const double medianMs = medianOf(result.timingSamplesMs);
  if (auto bound = rooflineMs(problem, options.sizeSet, peaksOf(pool.device())); bound && medianMs > 0) result.peakFraction = *bound / medianMs;
  if (auto violation = speedOfLightViolation(problem, options.sizeSet, peaksOf(pool.device()), medianMs)) {
    result.verdict = Verdict::hack_suspected;
    result.reason = *violation;
    return;
  }
  // Far faster than the reference is possible (a fused kernel against an unfused one) but worth a look.
  const auto above10 = [](std::optional<double> s) { return s && *s > 10.0; };
  if (above10(speedupOf(result)) || above10(kernelbenchSpeedupOf(result))) result.flags.push_back("speedup_above_10x");
}

}  // namespace cuset
