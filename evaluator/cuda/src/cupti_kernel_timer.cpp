#include "cuset/evaluator/cuda/cupti_kernel_timer.hpp"

#include <cupti.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cuset/common/error.hpp"

namespace cuset {

struct CuptiKernelTimer::Api {
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
  decltype(&cuptiActivityFlushAll) flushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) droppedRecords = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) pushExternal = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) popExternal = nullptr;
  decltype(&cuptiGetResultString) resultString = nullptr;

  std::string describe(CUptiResult r) const {
    const char* text = nullptr;
    if (resultString && resultString(r, &text) == CUPTI_SUCCESS && text) return text;
    return fmt::format("CUptiResult {}", static_cast<int>(r));
  }
};

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlignment = 8;

// CUPTI delivers records through C callbacks on its own threads; they land here.
struct RecordStore {
  std::mutex mutex;
  std::vector<KernelRecord> kernels;  // externalId filled at collect()
  std::map<std::uint32_t, std::uint64_t> externalByCorrelation;
  std::size_t dropped = 0;
  const CuptiKernelTimer::Api* api = nullptr;
};
RecordStore& store() {
  static RecordStore s;
  return s;
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
  // CUPTI's contract: the client allocates, CUPTI hands the buffer back in bufferCompleted.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t /*size*/, size_t validSize) {
  RecordStore& s = store();
  {
    std::lock_guard lock(s.mutex);
    CUpti_Activity* record = nullptr;
    while (s.api && s.api->nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        // externalId holds the CUPTI correlation id until collect() joins it with its external id.
        s.kernels.push_back({k->start, k->end, k->correlationId, k->streamId, k->name ? k->name : ""});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        s.externalByCorrelation[e->correlationId] = e->externalId;
      }
    }
    std::size_t dropped = 0;
    if (s.api && s.api->droppedRecords(context, streamId, &dropped) == CUPTI_SUCCESS) s.dropped += dropped;
  }
  std::free(buffer);
}

template <class F>
void resolve(void* handle, const char* name, F& out, const std::string& library) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out) throw makeError("{} has no {}", library, name);
}

}  // namespace

CuptiKernelTimer::CuptiKernelTimer(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Expected<std::unique_ptr<CuptiKernelTimer>> CuptiKernelTimer::create() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CUSET_LIBCUPTI"); env && *env) candidates.emplace_back(env);
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) candidates.emplace_back(name);
  void* handle = nullptr;
  std::string library;
  for (const auto& c : candidates) {
    if ((handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))) {
      library = c;
      break;
    }
  }
  if (!handle)
    return Unexpected(
        std::string("cannot load libcupti (set CUSET_LIBCUPTI or add the toolkit's lib64 to LD_LIBRARY_PATH); timing falls back to CUDA events"));
  auto api = std::make_unique<Api>();
  try {
    resolve(handle, "cuptiActivityEnable", api->enable, library);
    resolve(handle, "cuptiActivityDisable", api->disable, library);
    resolve(handle, "cuptiActivityRegisterCallbacks", api->registerCallbacks, library);
    resolve(handle, "cuptiActivityFlushAll", api->flushAll, library);
    resolve(handle, "cuptiActivityGetNextRecord", api->nextRecord, library);
    resolve(handle, "cuptiActivityGetNumDroppedRecords", api->droppedRecords, library);
    resolve(handle, "cuptiActivityPushExternalCorrelationId", api->pushExternal, library);
    resolve(handle, "cuptiActivityPopExternalCorrelationId", api->popExternal, library);
    resolve(handle, "cuptiGetResultString", api->resultString, library);
  } catch (const Error& e) {
    return Unexpected(std::string(e.what()));
  }
  store().api = api.get();
  for (auto [call, what] : {std::pair{api->registerCallbacks(bufferRequested, bufferCompleted), "cuptiActivityRegisterCallbacks"},
                            std::pair{api->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling CONCURRENT_KERNEL activity"},
                            std::pair{api->enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "enabling EXTERNAL_CORRELATION activity"},
                            // CUPTI writes an external-correlation record only ahead of an API activity record
                            // (cupti_activity.h, cuptiActivityPushExternalCorrelationId): without these kinds
                            // no kernel is attributed to its iteration. Candidates launch through the driver
                            // API, LibTorch's references through the runtime.
                            std::pair{api->enable(CUPTI_ACTIVITY_KIND_DRIVER), "enabling DRIVER activity"},
                            std::pair{api->enable(CUPTI_ACTIVITY_KIND_RUNTIME), "enabling RUNTIME activity"}}) {
    if (call != CUPTI_SUCCESS) {
      store().api = nullptr;
      return Unexpected(fmt::format("{} ({}): {}", what, library, api->describe(call)));
    }
  }
  return std::make_unique<CuptiKernelTimer>(std::move(api));
}

CuptiKernelTimer::~CuptiKernelTimer() {
  api_->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  api_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  api_->disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  api_->disable(CUPTI_ACTIVITY_KIND_DRIVER);
  api_->disable(CUPTI_ACTIVITY_KIND_RUNTIME);
  std::lock_guard lock(store().mutex);
  store().api = nullptr;
}

void CuptiKernelTimer::beginIteration(std::uint64_t id) { api_->pushExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }

void CuptiKernelTimer::endIteration() {
  std::uint64_t last = 0;
  api_->popExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

ActivitySummary CuptiKernelTimer::collect(std::size_t launchesPerIteration, const std::vector<std::uint64_t>& iterations) {
  api_->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  RecordStore& s = store();
  std::lock_guard lock(s.mutex);
  std::vector<KernelRecord> records;
  for (auto k : s.kernels) {
    // Before the join, externalId holds the record's CUPTI correlation id (see bufferCompleted).
    const auto it = s.externalByCorrelation.find(static_cast<std::uint32_t>(k.externalId));
    k.externalId = it == s.externalByCorrelation.end() ? 0 : it->second;
    records.push_back(std::move(k));
  }
  ActivitySummary summary = summariseActivity(records, launchesPerIteration, iterations, s.dropped);
  s.kernels.clear();
  s.externalByCorrelation.clear();
  s.dropped = 0;
  return summary;
}

}  // namespace cuset
