#include "cuset/evaluator/cuda/cuda_worker.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>

#include "cuda_handles.hpp"
#include "gpu_measurement.hpp"
#include "triton_benchmark.hpp"

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/evaluator/cuda/cuda_driver.hpp"
#include "cuset/evaluator/cuda/cupti_kernel_timer.hpp"
#include "cuset/evaluator/cuda/nvml_clock_monitor.hpp"
#include "cuset/evaluator/candidate/library_call.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/shared_payload.hpp"

namespace cuset {
namespace {

using detail::Cuda;
using detail::CudaFailure;
using detail::DeviceMemory;
using detail::Event;
using detail::GpuMeasurement;
using detail::Module;

// One step of a plan: a kernel launch, or (when `library` holds one) a LibTorch op.
struct PreparedLaunch {
  CUfunction function = nullptr;
  std::array<unsigned, 3> grid{}, block{};
  unsigned shared = 0;
  std::vector<std::array<std::max_align_t, 4>> storage;  // one slot per parameter, room for 64 bytes
  std::vector<void*> params;
  std::optional<LibraryStep> library;
};

std::vector<unsigned char> hexBytes(const std::string& hex) {
  std::vector<unsigned char> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// $CUSET_CUDA_MODULE_CACHE: modules a worker keeps loaded (default 64).
std::size_t moduleCacheLimit() {
  const char* v = std::getenv("CUSET_CUDA_MODULE_CACHE");
  const long n = v && *v ? std::strtol(v, nullptr, 10) : 64;
  return static_cast<std::size_t>(std::max(1L, n));
}

class GpuSession {
 public:
  explicit GpuSession(const CudaDriver& driver) : cuda_(driver) {
    cuda_(driver.cuDeviceGet(&device_, 0), "cuDeviceGet");
    cuda_(driver.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    cuda_(driver.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    cuda_(driver.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    char pci[32] = {};
    if (driver.cuDeviceGetPCIBusId(pci, sizeof(pci), device_) == CUDA_SUCCESS) clocks_ = NvmlClockMonitor::open(pci);
  }
  ~GpuSession() {
    timer_.reset();
    benchCache_.reset();
    modules_.clear();
    if (stream_) cuda_.driver().cuStreamDestroy(stream_);
    if (context_) cuda_.driver().cuDevicePrimaryCtxRelease(device_);
  }
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  nlohmann::json describeDevice() const {
    const CudaDriver& d = cuda_.driver();
    char name[256] = {};
    d.cuDeviceGetName(name, sizeof(name), device_);
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      d.cuDeviceGetAttribute(&v, a, device_);
      return v;
    };
    std::size_t memory = 0;
    d.cuDeviceTotalMem(&memory, device_);
    const int busBits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH), memKHz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    return {{"name", name},
            {"compute_capability",
             fmt::format("{}.{}", attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))},
            {"sm_count", attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)},
            {"sm_clock_khz", attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)},
            {"memory_clock_khz", memKHz},
            {"memory_bus_bits", busBits},
            // DDR: two transfers per clock.
            {"theoretical_bandwidth_gbs", 2.0 * memKHz * 1e3 * (busBits / 8.0) / 1e9},
            {"l2_bytes", attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)},
            {"memory_bytes", memory},
            {"max_shared_per_block_optin", attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)},
            {"driver_version", d.version()},
            {"measured_bandwidth_gbs", measureBandwidthGBs()}};
  }

  // Device-to-device copy bandwidth (read + write bytes per second), the best of several 1 GiB copies
  // (a 64th of the memory on a device with less than 64 GiB): the speed-of-light check uses it rather
  // than the datasheet.
  double measureBandwidthGBs() const {
    const CudaDriver& d = cuda_.driver();
    std::size_t memory = 0;
    cuda_(d.cuDeviceTotalMem(&memory, device_), "cuDeviceTotalMem");
    const std::size_t kBytes = std::min(std::size_t{1} << 30, std::max<std::size_t>(memory / 64, std::size_t{64} << 20));
    DeviceMemory a(cuda_, kBytes), b(cuda_, kBytes);
    Event begin(cuda_), end(cuda_);
    cuda_(d.cuMemsetD8(a.get(), 1, kBytes), "bandwidth probe");
    double best = 0.0;
    for (int i = 0; i < 6; ++i) {
      cuda_(d.cuEventRecord(begin.get(), stream_), "cuEventRecord");
      cuda_(d.cuMemcpyDtoDAsync(b.get(), a.get(), kBytes, stream_), "bandwidth probe");
      cuda_(d.cuEventRecord(end.get(), stream_), "cuEventRecord");
      cuda_(d.cuEventSynchronize(end.get()), "bandwidth probe");
      float ms = 0.0f;
      cuda_(d.cuEventElapsedTime(&ms, begin.get(), end.get()), "cuEventElapsedTime");
      if (i > 0 && ms > 0) best = std::max(best, 2.0 * kBytes / (ms * 1e-3) / 1e9);  // the first copy is a warm-up
    }
    return best;
  }

  // The image's module, kept under the image's hash for the trials that follow. A nightly run loads
  // thousands of candidates into one worker, so only the most recently used modules stay loaded.
  nlohmann::json load(const nlohmann::json& header, std::span<const std::byte> image) {
    const std::string key = hashBytes(image.data(), image.size()).hex();
    auto found = modules_.find(key);
    if (found == modules_.end()) {
      if (modules_.size() >= moduleLimit_) {
        const auto oldest =
            std::min_element(modules_.begin(), modules_.end(), [](const auto& a, const auto& b) { return a.second.lastUse < b.second.lastUse; });
        modules_.erase(oldest);
      }
      auto module = std::make_unique<Module>(cuda_, image, header.value("is_cubin", true));
      found = modules_.emplace(key, CachedModule{std::move(module), 0}).first;
    }
    found->second.lastUse = ++useClock_;
    return {{"status", trialStatusName(TrialRun::Status::ok)}, {"module", key}};
  }

  // Runs the launches on the region and leaves the kernels' results in it. A timing job's payload is
  // the region with the timing inputs, then (with `fresh_region`) the same region with another input
  // draw, then room for one sample's snapshot; the reply carries all three back for the supervisor to
  // check, so that what was timed is judged too (docs/exploits.md: launch counting, warm-up detection,
  // pointer-keyed caching).
  nlohmann::json run(const nlohmann::json& header, std::span<std::byte> payload) {
    const Module& module = loaded(header);
    const nlohmann::json timing = header.value("timing", nlohmann::json::object());
    const bool timed = timing.value("enabled", false);
    const std::size_t regionBytes = header.value("region_bytes", payload.size());
    const bool fresh = timed && timing.value("fresh_region", false);
    if (payload.size() < regionBytes * (timed ? (fresh ? 3 : 2) : 1)) throw Error("run request: the payload is smaller than its regions");
    const std::span<std::byte> region = payload.first(regionBytes);
    // The reference is timed first, on the timing inputs as they were sent.
    std::optional<nlohmann::json> referenceTiming;
    if (timed && header.contains("reference")) referenceTiming = measureReference(header["reference"], region, timing);

    DeviceMemory device(cuda_, regionBytes);
    cuda_(cuda_.driver().cuMemcpyHtoD(device.get(), region.data(), regionBytes), "copying the region to the GPU");
    std::vector<PreparedLaunch> launches = prepare(header.at("launches"), header.at("symbols"), module, device.get());
    region_ = {device.get(), regionBytes};

    const auto start = std::chrono::steady_clock::now();
    runLaunches(launches);
    cuda_(cuda_.driver().cuStreamSynchronize(stream_), "running the kernels");
    const double kernelMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    cuda_(cuda_.driver().cuMemcpyDtoH(region.data(), device.get(), regionBytes), "copying the region back");

    nlohmann::json reply = {{"status", trialStatusName(TrialRun::Status::ok)}, {"kernel_ms", kernelMs}};
    if (!timed) return reply;

    // Timed samples: the outputs are poisoned before each one, so a sample that skips its work leaves
    // poison behind; one sample's outputs, chosen by the supervisor, are kept, and the last sample's
    // come back in the region.
    struct Fill {
      std::size_t offset, bytes;
      unsigned char value;
    };
    std::vector<Fill> outputs;
    for (const auto& o : timing.value("outputs", nlohmann::json::array())) {
      outputs.push_back(
          {o.at(0).get<std::size_t>(), o.at(1).get<std::size_t>(), static_cast<unsigned char>(o.size() > 2 ? o.at(2).get<int>() : 0xFF)});
    }
    const std::size_t checkSample = timing.value("check_sample", std::size_t{0});
    const std::span<std::byte> snapshot = payload.subspan((fresh ? 2 : 1) * regionBytes, regionBytes);
    std::optional<std::size_t> snapshotTaken;
    GpuMeasurement::SampleHooks hooks;
    hooks.before = [&] {
      for (const auto& f : outputs) cuda_(cuda_.driver().cuMemsetD8(device.get() + f.offset, f.value, f.bytes), "poisoning the outputs");
    };
    hooks.after = [&](std::size_t index) {
      if (snapshotTaken || index < checkSample) return;
      cuda_(cuda_.driver().cuMemcpyDtoH(snapshot.data(), device.get(), regionBytes), "keeping a timed sample's outputs");
      snapshotTaken = index;
    };
    GpuMeasurement m(measurementTools(timing), stream_, timing);
    while (m.step([&] { runLaunches(launches); }, hooks)) {
    }
    reply["timing"] = m.finish(launches.size());
    cuda_(cuda_.driver().cuMemcpyDtoH(region.data(), device.get(), regionBytes), "copying the last timed sample's region back");
    reply["timing"]["last_sample"] = m.samples() ? m.samples() - 1 : 0;
    reply["timing"]["checked_sample"] = snapshotTaken ? nlohmann::json(*snapshotTaken) : nlohmann::json(nullptr);
    if (fresh) {
      // One more timed sample, on inputs the kernel has never seen at the same addresses.
      const std::span<std::byte> second = payload.subspan(regionBytes, regionBytes);
      cuda_(cuda_.driver().cuMemcpyHtoD(device.get(), second.data(), regionBytes), "copying the fresh inputs to the GPU");
      const CudaDriver& d = cuda_.driver();
      Event begin(cuda_), end(cuda_);
      cuda_(d.cuEventRecord(begin.get(), stream_), "cuEventRecord");
      runLaunches(launches);
      cuda_(d.cuEventRecord(end.get(), stream_), "cuEventRecord");
      cuda_(d.cuEventSynchronize(end.get()), "running the fresh sample");
      float ms = 0.0f;
      cuda_(d.cuEventElapsedTime(&ms, begin.get(), end.get()), "cuEventElapsedTime");
      reply["timing"]["fresh_sample_ms"] = ms;
      cuda_(cuda_.driver().cuMemcpyDtoH(second.data(), device.get(), regionBytes), "copying the fresh sample's region back");
    }
    if (referenceTiming) reply["timing"]["reference"] = *referenceTiming;
    return reply;
  }

  // Triton's autotuning, before the trials (triton.runtime.autotuner.Autotuner.run): the plan's steps run
  // in order on the region; at an autotuned launch whose key has no choice yet, each configuration is
  // timed as Triton times it (triton_benchmark.hpp) and the fastest is kept for the key and run; one the
  // driver refuses (too many resources, too much shared memory) is infinitely slow, as Triton's
  // OutOfResources is. Nothing after the last autotuned launch runs. The reply lists each choice:
  // {key, chosen, ms: per configuration [median, p20, p80] or null}.
  nlohmann::json autotune(const nlohmann::json& header, std::span<const std::byte> region) {
    const Module& module = loaded(header);
    const nlohmann::json& steps = header.at("launches");
    DeviceMemory device(cuda_, region.size());
    cuda_(cuda_.driver().cuMemcpyHtoD(device.get(), region.data(), region.size()), "copying the region to the GPU");
    std::vector<PreparedLaunch> launches = prepare(steps, header.at("symbols"), module, device.get());
    region_ = {device.get(), region.size()};
    std::size_t last = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].contains("autotune")) last = i + 1;
    }
    if (!benchCache_) benchCache_ = std::make_unique<DeviceMemory>(cuda_, detail::kTritonBenchCacheBytes);
    nlohmann::json choices = nlohmann::json::array();
    std::map<std::string, PreparedLaunch> chosen;
    for (std::size_t i = 0; i < last; ++i) {
      if (!steps[i].contains("autotune")) {
        runStep(launches[i]);
        continue;
      }
      const nlohmann::json& tuning = steps[i]["autotune"];
      const std::string key = tuning.at("key");
      auto found = chosen.find(key);
      if (found == chosen.end()) {
        nlohmann::json times = nlohmann::json::array();
        std::optional<std::pair<std::size_t, std::array<double, 3>>> fastest;
        std::vector<std::optional<PreparedLaunch>> configurations;
        for (const auto& alternative : tuning.at("alternatives")) {
          configurations.push_back(launchable(alternative, header.at("symbols"), module, device.get()));
          std::optional<detail::TritonTiming> t;
          if (configurations.back()) t = timeConfiguration(*configurations.back());
          times.push_back(t ? nlohmann::json(t->ms) : nlohmann::json(nullptr));
          if (t && (!fastest || t->ms < fastest->second)) fastest = {{configurations.size() - 1, t->ms}};
        }
        if (!fastest) {
          throw CudaFailure{fmt::format("autotuning {}: the GPU refuses every configuration (out of resources), as Triton's launch would", key),
                            false};
        }
        choices.push_back({{"key", key}, {"chosen", fastest->first}, {"ms", times}});
        found = chosen.emplace(key, std::move(*configurations[fastest->first])).first;
      }
      runStep(found->second);  // the chosen configuration's own call, as Autotuner.run makes it
    }
    cuda_(cuda_.driver().cuStreamSynchronize(stream_), "running the kernels");
    return {{"status", trialStatusName(TrialRun::Status::ok)}, {"autotune", choices}};
  }

 private:
  const Module& loaded(const nlohmann::json& header) const {
    const auto found = modules_.find(header.at("module").get<std::string>());
    if (found == modules_.end()) throw Error("run request: its module was not loaded by this worker");
    return *found->second.module;
  }

  // A configuration's launch, or nullopt where the driver refuses what it asks for (a resource error,
  // not the candidate's fault at this point: Triton skips such a configuration).
  std::optional<PreparedLaunch> launchable(const nlohmann::json& launch, const nlohmann::json& symbols, const Module& module, CUdeviceptr base) {
    try {
      return std::move(prepare(nlohmann::json::array({launch}), symbols, module, base).front());
    } catch (const CudaFailure& f) {
      if (f.sticky) throw;
      return std::nullopt;
    }
  }

  std::optional<detail::TritonTiming> timeConfiguration(PreparedLaunch& p) {
    const CUresult first = launch(p);  // do_bench's settling run
    if (first == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || first == CUDA_ERROR_INVALID_VALUE) return std::nullopt;
    cuda_(first, "cuLaunchKernel");
    return detail::tritonDoBench(cuda_, stream_, *benchCache_, [&] { cuda_(launch(p), "cuLaunchKernel"); });
  }

  CUresult launch(PreparedLaunch& p) {
    return cuda_.driver().cuLaunchKernel(p.function, p.grid[0], p.grid[1], p.grid[2], p.block[0], p.block[1], p.block[2], p.shared, stream_,
                                         p.params.data(), nullptr);
  }

  std::vector<PreparedLaunch> prepare(const nlohmann::json& launches, const nlohmann::json& symbols, const Module& module, CUdeviceptr base) {
    std::vector<PreparedLaunch> out;
    for (const auto& l : launches) {
      PreparedLaunch p;
      if (l.contains("library")) {
        auto step = libraryStepFromJson(l["library"]);  // the supervisor's own, read back
        if (!step) throw Error("the supervisor sent a malformed library step: " + step.error());
        p.library = std::move(*step);
        out.push_back(std::move(p));
        continue;
      }
      const std::string kernel = l.at("kernel");
      p.function = module.function(symbols.value(kernel, kernel));
      for (int i = 0; i < 3; ++i) {
        p.grid[i] = l.at("grid")[i];
        p.block[i] = l.at("block")[i];
      }
      p.shared = l.at("shared");
      if (p.shared > 48 * 1024) {  // above 48 KiB a kernel must opt in to more dynamic shared memory
        cuda_(cuda_.driver().cuFuncSetAttribute(p.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(p.shared)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
      }
      p.storage.resize(l.at("args").size());
      for (std::size_t i = 0; i < p.storage.size(); ++i) {
        const auto& a = l["args"][i];
        if (a.contains("buffer")) {
          const CUdeviceptr pointer = base + a["buffer"].get<std::uint64_t>();
          std::memcpy(&p.storage[i], &pointer, sizeof(pointer));
        } else if (a.contains("null")) {
          const CUdeviceptr pointer = 0;
          std::memcpy(&p.storage[i], &pointer, sizeof(pointer));
        } else {
          const auto bytes = hexBytes(a.at("scalar").get<std::string>());
          if (bytes.size() > sizeof(p.storage[i])) throw Error("a scalar argument over 64 bytes");
          std::memcpy(&p.storage[i], bytes.data(), bytes.size());  // the driver reads the parameter's size from this slot
        }
      }
      for (auto& s : p.storage) p.params.push_back(&s);
      out.push_back(std::move(p));
    }
    return out;
  }

  void runLaunches(std::vector<PreparedLaunch>& launches) {
    for (auto& p : launches) runStep(p);
  }

  void runStep(PreparedLaunch& p) {
    if (p.library)
      runLibraryStep(*p.library);
    else
      cuda_(launch(p), "cuLaunchKernel");
  }

  // A library step between the kernels: LibTorch on this GPU (the primary context, which the worker
  // shares) once the kernels before it are done; where LibTorch has no CUDA, on a host copy of the
  // region (the supervisor then does not time the candidate).
  void runLibraryStep(const LibraryStep& call) {
    const CudaDriver& d = cuda_.driver();
    cuda_(d.cuStreamSynchronize(stream_), "the kernels before a library step");
    std::string why;
    if (CudaDriver::sharedWithLibTorch()) {
      why = runLibraryCall(call, LibraryMemory{reinterpret_cast<std::byte*>(region_.base), true, 0});
      cuda_(d.cuCtxSynchronize(), "a library step");
    } else {
      std::vector<std::byte> host(region_.bytes);
      cuda_(d.cuMemcpyDtoH(host.data(), region_.base, region_.bytes), "copying the region for a library step");
      why = runLibraryCall(call, LibraryMemory{host.data()});
      cuda_(d.cuMemcpyHtoD(region_.base, host.data(), region_.bytes), "copying the region back after a library step");
    }
    if (!why.empty()) throw CudaFailure{fmt::format("library step {} failed: {}", call.op(), why), false};
  }

  detail::MeasurementTools measurementTools(const nlohmann::json& options) {
    CuptiKernelTimer* cupti = options.value("timer", "cupti") == "cupti" ? cuptiTimer() : nullptr;
    return {cuda_, cupti, cuptiError_, clocks_.get(), iterationIds_};
  }

  CuptiKernelTimer* cuptiTimer() {
    if (!timer_ && !cuptiError_) {
      auto created = CuptiKernelTimer::create();
      if (created)
        timer_ = std::move(*created);
      else
        cuptiError_ = created.error();
    }
    return timer_.get();
  }

  nlohmann::json measure(std::vector<PreparedLaunch>& launches, const nlohmann::json& options) {
    GpuMeasurement m(measurementTools(options), stream_, options);
    while (m.step([&] { runLaunches(launches); })) {
    }
    return m.finish(launches.size());
  }

  // The reference's forward with LibTorch on the GPU, inputs in their declared dtypes, timed like the
  // candidate; nullopt when this LibTorch has no CUDA (then no speedup is reported).
  std::optional<nlohmann::json> measureReference(const nlohmann::json& request, std::span<const std::byte> region, const nlohmann::json& options) {
    if (!CudaDriver::sharedWithLibTorch()) return std::nullopt;
    const std::string file = request.at("problem_file");
    auto& entry = references_[file];
    if (!entry.reference) {
      entry.problem = std::make_unique<Problem>(parseProblem(readFile(file), file, std::filesystem::path(file).parent_path()));
      entry.reference = std::make_unique<TorchReference>(TorchReference::compile(*entry.problem));
    }
    const Problem& problem = *entry.problem;
    const SizeBindings& sizes = problem.sizes(request.at("size_set").get<std::string>());
    std::vector<HostTensor> inputs;
    for (const auto& in : request.at("inputs")) {
      const auto dtype = parseDType(in.at("dtype").get<std::string>());
      HostTensor t(*dtype, in.at("shape").get<std::vector<std::int64_t>>());
      std::memcpy(t.data(), region.data() + in.at("offset").get<std::size_t>(), t.byteSize());
      inputs.push_back(std::move(t));
    }
    // LibTorch enqueues on its current stream, the legacy default stream unless told otherwise.
    GpuMeasurement m(measurementTools(options), CU_STREAM_LEGACY, options);
    entry.reference->runOnGpu(inputs, sizes, [&](const std::function<void()>& run) { return m.step(run); });
    return m.finish(0);
  }

  struct ReferenceEntry {
    std::unique_ptr<Problem> problem;
    std::unique_ptr<TorchReference> reference;
  };

  Cuda cuda_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  struct {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
  } region_;  // of the run in progress, for library steps
  struct CachedModule {
    std::unique_ptr<Module> module;
    std::uint64_t lastUse = 0;
  };
  std::map<std::string, CachedModule> modules_;
  std::uint64_t useClock_ = 0;
  std::size_t moduleLimit_ = moduleCacheLimit();
  std::unique_ptr<CuptiKernelTimer> timer_;
  std::unique_ptr<DeviceMemory> benchCache_;  // Triton's L2-clearing buffer, made at the first autotuning
  std::optional<std::string> cuptiError_;
  std::unique_ptr<NvmlClockMonitor> clocks_;  // null when NVML is unavailable: throttling not detected
  std::uint64_t iterationIds_ = 0;            // unique across measurements: CUPTI's external correlation ids
  std::map<std::string, ReferenceEntry> references_;
};

// The protocol's channel: the original stdout, moved aside so that anything a library prints (LibTorch,
// CUPTI) goes to stderr instead of corrupting the frames.
int protocolFd = STDOUT_FILENO;
sandbox::SharedPayload* channel = nullptr;  // regions in place when the supervisor shares a payload file

void reply(const sandbox::Message& message) { sandbox::writeMessage(protocolFd, message, channel); }

}  // namespace

// One GPU per worker: the device is chosen before the driver loads by narrowing CUDA_VISIBLE_DEVICES
// to it (the ordinal-th entry of the supervisor's own list, if it has one), so the driver, CUPTI and
// LibTorch in this process all see exactly that device, as ordinal 0.
void selectDevice(int ordinal) {
  std::string chosen = std::to_string(ordinal);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::vector<std::string> ids;
    std::string id;
    for (const char* c = visible;; ++c) {
      if (*c == ',' || *c == '\0') {
        ids.push_back(id);
        id.clear();
        if (*c == '\0') break;
      } else {
        id += *c;
      }
    }
    if (ordinal >= 0 && static_cast<std::size_t>(ordinal) < ids.size()) chosen = ids[static_cast<std::size_t>(ordinal)];
  }
  ::setenv("CUDA_VISIBLE_DEVICES", chosen.c_str(), 1);
}

int runCudaWorker(std::optional<int> payloadFd, std::optional<int> device) {
  if (device) selectDevice(*device);
  protocolFd = ::dup(STDOUT_FILENO);
  if (protocolFd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
  std::optional<sandbox::SharedPayload> shared;
  try {
    if (payloadFd) shared = sandbox::SharedPayload::adopt(*payloadFd);
  } catch (const std::exception&) {
    return 2;
  }
  channel = shared ? &*shared : nullptr;
  auto driver = CudaDriver::get();
  std::unique_ptr<GpuSession> session;
  std::optional<std::string> unavailable;
  if (!driver) unavailable = driver.error();
  while (true) {
    std::optional<sandbox::Message> request;
    try {
      request = sandbox::readMessage(STDIN_FILENO, std::nullopt, channel);
    } catch (const std::exception& e) {
      return 2;
    }
    if (!request) return 0;  // the supervisor closed the pipe
    if (unavailable) {
      reply({{{"status", "unavailable"}, {"message", *unavailable}}});
      continue;
    }
    try {
      if (!session) session = std::make_unique<GpuSession>(**driver);
      const std::string op = request->header.value("op", "");
      if (op == "hello") {
        int count = 0;
        (**driver).cuDeviceGetCount(&count);
        reply({{{"status", trialStatusName(TrialRun::Status::ok)}, {"device", session->describeDevice()}, {"device_count", count}}});
      } else if (op == "load") {
        reply({session->load(request->header, request->bytes())});
      } else if (op == "autotune") {
        reply({session->autotune(request->header, request->bytes())});
      } else {
        nlohmann::json header = session->run(request->header, request->bytes());
        reply({std::move(header), std::move(request->payload), request->shared});
      }
    } catch (const CudaFailure& f) {
      reply({{{"status", trialStatusName(TrialRun::Status::runtimeError)}, {"message", f.message}, {"worker_exits", f.sticky}}});
      if (f.sticky) return 3;  // the context is unusable: the supervisor starts a new worker
    } catch (const std::exception& e) {
      reply({{{"status", trialStatusName(TrialRun::Status::harnessError)}, {"message", e.what()}}});
    }
  }
}

}  // namespace cuset
