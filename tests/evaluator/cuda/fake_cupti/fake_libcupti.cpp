// A CUPTI double for machines without a GPU: exports the Activity API entry points CuptiKernelTimer
// resolves (loaded through $CUSET_LIBCUPTI), and delivers records in CUPTI's own layouts through the
// client's buffer callbacks, so the timer's attribution (kernel records joined to the external ids
// pushed around each iteration) is tested here, not first on a lent GPU (issue #62).
//
// It behaves as CUPTI does where the timer depends on it: an external-correlation record is written
// only ahead of an API activity record, so without DRIVER (or RUNTIME) activity enabled no kernel can be
// attributed (the first H200 run's symptom); records arrive only at a flush, in buffers the client
// allocates; kernels on any stream are recorded.
//
// Tests script the "GPU" with cuset_fake_cupti_launch (one kernel launched through the driver API) and
// cuset_fake_cupti_drop (records CUPTI could not deliver).
#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

struct Pending {
  bool external = false;
  std::uint64_t externalId = 0;
  std::uint32_t correlationId = 0;
  std::uint32_t streamId = 0;
  std::uint64_t start = 0, end = 0;
  const char* name = nullptr;
};

struct FakeCupti {
  std::mutex mutex;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  bool kernels = false, externals = false, driverApi = false;
  std::vector<std::uint64_t> externalStack;
  std::vector<Pending> pending;
  std::uint32_t nextCorrelation = 1;
  std::size_t dropped = 0;
};

FakeCupti& fake() {
  static FakeCupti f;
  return f;
}

bool enabledKind(CUpti_ActivityKind kind, bool on) {
  FakeCupti& f = fake();
  std::lock_guard lock(f.mutex);
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      f.kernels = on;
      return true;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      f.externals = on;
      return true;
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      f.driverApi = on;
      return true;
    default:
      return false;
  }
}

// Appends one record of type T at the next 8-byte boundary; false when the buffer is full.
template <class T>
bool put(std::uint8_t* buffer, std::size_t size, std::size_t& used, const T& record) {
  const std::size_t at = (used + 7) / 8 * 8;
  if (at + sizeof(T) > size) return false;
  std::memcpy(buffer + at, &record, sizeof(T));
  used = at + sizeof(T);
  return true;
}

std::size_t recordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    default:
      return 0;
  }
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  if (requested == nullptr || completed == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(fake().mutex);
  fake().requested = requested;
  fake().completed = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { return enabledKind(kind, true) ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED; }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { return enabledKind(kind, false) ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED; }

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return CUPTI_ERROR_INVALID_KIND;
  std::lock_guard lock(fake().mutex);
  fake().externalStack.push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* id) {
  std::lock_guard lock(fake().mutex);
  if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || fake().externalStack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (id) *id = fake().externalStack.back();
  fake().externalStack.pop_back();
  return CUPTI_SUCCESS;
}

// Delivers everything recorded since the last flush: per launch, the external-correlation record (only
// ahead of an API record, as CUPTI writes it), the driver API record, then the kernel record.
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  FakeCupti& f = fake();
  std::vector<Pending> launches;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  bool kernels = false, externals = false, driverApi = false;
  {
    std::lock_guard lock(f.mutex);
    launches.swap(f.pending);
    requested = f.requested;
    completed = f.completed;
    kernels = f.kernels;
    externals = f.externals;
    driverApi = f.driverApi;
  }
  if (requested == nullptr || launches.empty()) return CUPTI_SUCCESS;
  std::size_t i = 0;
  while (i < launches.size()) {
    std::uint8_t* buffer = nullptr;
    std::size_t size = 0, maxRecords = 0, used = 0;
    requested(&buffer, &size, &maxRecords);
    if (buffer == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
    for (; i < launches.size(); ++i) {
      const Pending& p = launches[i];
      const std::size_t before = used;
      bool fits = true;
      if (driverApi && externals && p.external) {
        CUpti_ActivityExternalCorrelation e{};
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        e.externalId = p.externalId;
        e.correlationId = p.correlationId;
        fits = put(buffer, size, used, e);
      }
      if (fits && driverApi) {
        CUpti_ActivityAPI a{};
        a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
        a.correlationId = p.correlationId;
        a.start = p.start;
        a.end = p.start;
        fits = put(buffer, size, used, a);
      }
      if (fits && kernels) {
        CUpti_ActivityKernel10 k{};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = p.start;
        k.end = p.end;
        k.correlationId = p.correlationId;
        k.streamId = p.streamId;
        k.name = p.name;
        fits = put(buffer, size, used, k);
      }
      if (!fits) {
        used = before;
        if (before == 0) return CUPTI_ERROR_INVALID_PARAMETER;  // one launch's records do not fit an empty buffer
        break;
      }
    }
    completed(nullptr, 0, buffer, size, used);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t at = 0;
  if (*record != nullptr) {
    const auto* current = reinterpret_cast<std::uint8_t*>(*record);
    at = static_cast<std::size_t>(current - buffer) + recordSize((*record)->kind);
    at = (at + 7) / 8 * 8;
  }
  if (at + sizeof(CUpti_Activity) > validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + at);
  return recordSize((*record)->kind) == 0 ? CUPTI_ERROR_INVALID_KIND : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard lock(fake().mutex);
  *dropped = fake().dropped;
  fake().dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake CUPTI)";
  return CUPTI_SUCCESS;
}

// --- the test's side ---

// One kernel launched through the driver API while `externalStack` holds the current iteration's id:
// it ran from `start` to `end` (ns) on `stream`.
void cuset_fake_cupti_launch(const char* name, std::uint32_t stream, std::uint64_t start, std::uint64_t end) {
  FakeCupti& f = fake();
  std::lock_guard lock(f.mutex);
  Pending p;
  p.correlationId = f.nextCorrelation++;
  p.external = !f.externalStack.empty();
  p.externalId = p.external ? f.externalStack.back() : 0;
  p.streamId = stream;
  p.start = start;
  p.end = end;
  p.name = name;
  f.pending.push_back(p);
}

// Records CUPTI could not deliver, reported at the next buffer's completion.
void cuset_fake_cupti_drop(std::size_t records) {
  std::lock_guard lock(fake().mutex);
  fake().dropped += records;
}

}  // extern "C"
