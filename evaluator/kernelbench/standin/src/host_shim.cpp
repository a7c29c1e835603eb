// The recorder's host-side library (cuset_kb/torch.hpp): linked into every solution's host build, it
// turns tensor operations and launches into JSON requests to the recorder (kb_recorder.py),
// which loads the build with ctypes and answers through the callback it registers.
#include <dlfcn.h>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "ATen/cuda/CUDAContext.h"
#include "c10/cuda/CUDAGuard.h"
#include "cublas_v2.h"
#include "cuset_kb/launch.hpp"
#include "cuset_kb/torch.hpp"

using nlohmann::json;

namespace {

using Callback = const char* (*)(const char* request);
Callback g_callback = nullptr;
std::thread::id g_caller;
std::map<std::string, cuset_kb::Function>& registry() {
  static std::map<std::string, cuset_kb::Function> r;
  return r;
}

// Buffer b's tensors live at kFakeBase + (b << 40) + offset: addresses no page can back (they are not
// canonical on x86-64), so pointer arithmetic works and a dereference faults.
constexpr std::uint64_t kFakeBase = 0x4000000000000000ull;
constexpr int kBufferShift = 40;

constexpr const char* kDtypeNames[] = {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16", "undefined"};

c10::ScalarType dtypeFromName(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kDtypeNames)); ++i) {
    if (name == kDtypeNames[i]) return static_cast<c10::ScalarType>(i);
  }
  throw c10::Error("the recorder answered with an unknown dtype " + name);
}

json encode(const cuset_kb::Value& v) {
  using K = cuset_kb::Value::Kind;
  switch (v.kind) {
    case K::none:
      return nullptr;
    case K::integer:
      return v.i;
    case K::real:
      if (!std::isfinite(v.d)) return {{"float", std::isnan(v.d) ? "nan" : v.d > 0 ? "inf" : "-inf"}};  // JSON has no infinity
      return v.d;
    case K::boolean:
      return v.i != 0;
    case K::string:
      return v.s;
    case K::list: {
      json a = json::array();
      for (const auto& x : v.list) a.push_back(encode(x));
      return a;
    }
    case K::tensor:
      return {{"tensor", v.tensor->handle}};
    case K::dtype:
      return {{"dtype", kDtypeNames[v.i]}};
    case K::device:
      return {{"device", v.i ? "cuda" : "cpu"}};
    case K::memoryFormat:
      return {{"memory_format", v.i == 2 ? "channels_last" : v.i == 3 ? "channels_last_3d" : "contiguous"}};
    case K::options: {
      json o = json::object();
      if (v.options.dtype_) o["dtype"] = kDtypeNames[static_cast<int>(*v.options.dtype_)];
      if (v.options.device_) o["device"] = v.options.device_->is_cuda() ? "cuda" : "cpu";
      return {{"options", o}};
    }
  }
  return nullptr;
}

cuset_kb::Value decode(const json& j) {
  cuset_kb::Value v;
  using K = cuset_kb::Value::Kind;
  if (j.is_null()) return v;
  if (j.is_boolean()) return cuset_kb::toValue(j.get<bool>());
  if (j.is_number_integer()) return cuset_kb::toValue(j.get<std::int64_t>());
  if (j.is_number()) return cuset_kb::toValue(j.get<double>());
  if (j.is_string()) return cuset_kb::toValue(j.get<std::string>());
  if (j.is_array()) {
    v.kind = K::list;
    for (const auto& x : j) v.list.push_back(decode(x));
    return v;
  }
  if (j.contains("float")) return cuset_kb::toValue(std::stod(j.at("float").get<std::string>()));  // inf, -inf, nan (not JSON numbers)
  if (j.contains("tensor")) {
    auto meta = std::make_shared<at::TensorMeta>();
    meta->handle = j.at("tensor").get<std::int64_t>();
    meta->buffer = j.at("buffer").get<std::int64_t>();
    meta->offset = j.at("offset").get<std::int64_t>();
    meta->sizes = j.at("sizes").get<std::vector<std::int64_t>>();
    meta->strides = j.at("strides").get<std::vector<std::int64_t>>();
    meta->dtype = dtypeFromName(j.at("dtype").get<std::string>());
    v.kind = K::tensor;
    v.tensor = std::move(meta);
    return v;
  }
  if (j.contains("dtype")) return cuset_kb::toValue(dtypeFromName(j.at("dtype").get<std::string>()));
  throw c10::Error("the recorder answered with a value this library cannot read: " + j.dump());
}

// One request to the recorder; its answer, or the exception it asks for.
json ask(const json& request) {
  if (!g_callback) throw c10::Error("the host build is used outside the recorder");
  if (std::this_thread::get_id() != g_caller) cuset_kb::unsupported("host code works on tensors or launches kernels from a thread of its own");
  const json answer = json::parse(g_callback(request.dump().c_str()));
  if (answer.contains("unsupported")) throw cuset_kb::Unsupported(answer.at("unsupported").get<std::string>());
  if (answer.contains("error")) throw c10::Error(answer.at("error").get<std::string>());
  return answer.at("ok");
}

// "static const char* cuset_kb::Launch<Kernel>::name() [with auto Kernel = k<float>]" -> "k<float>"
std::string kernelName(const std::string& pretty) {
  const std::string marker = "Kernel = ";
  std::size_t at = pretty.find(marker);
  if (at == std::string::npos) return pretty;
  std::string name = pretty.substr(at + marker.size());
  if (!name.empty() && name.back() == ']') name.pop_back();
  for (std::size_t p; (p = name.find("{anonymous}::")) != std::string::npos;) name.erase(p, 13);
  if (!name.empty() && name.front() == '&') name.erase(0, 1);
  return name;
}

}  // namespace

namespace c10 {

const char* toString(ScalarType t) {
  static constexpr const char* kNames[] = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16", "Undefined"};
  return kNames[static_cast<int>(t)];
}

std::size_t elementSize(ScalarType t) {
  static constexpr std::size_t kSizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2, 0};
  return kSizes[static_cast<int>(t)];
}

Half::Half(float f) {
  const __half h = __float2half(f);
  std::memcpy(&x, &h, 2);
}
Half::operator float() const {
  __half h;
  std::memcpy(&h, &x, 2);
  return __half2float(h);
}
BFloat16::BFloat16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  x = static_cast<std::uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}
BFloat16::operator float() const {
  const std::uint32_t bits = static_cast<std::uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Device::Device(const std::string& spec) : type_(spec.rfind("cpu", 0) == 0 ? DeviceType::CPU : DeviceType::CUDA) {}

}  // namespace c10

namespace cuset_kb {

void unsupported(const std::string& what) { throw Unsupported(what); }

Value toValue(const at::Tensor& t) {
  Value v;
  if (!t.defined()) return v;
  v.kind = Value::Kind::tensor;
  v.tensor = std::make_shared<at::TensorMeta>(t.meta());
  return v;
}

at::Tensor tensorOf(const Value& v) {
  if (v.kind != Value::Kind::tensor) throw c10::Error("the operation did not return a tensor");
  return at::Tensor(v.tensor);
}

Value call(bool method, const char* name, const Values& args, const Kwargs& kwargs) {
  json request = {{"call", method ? "method" : "function"}, {"name", name}, {"args", json::array()}, {"kwargs", json::object()}};
  for (const auto& a : args) request["args"].push_back(encode(a));
  for (const auto& [k, a] : kwargs) request["kwargs"][k] = encode(a);
  return decode(ask(request));
}

void* fakeAddress(const at::TensorMeta& meta) {
  const std::uint64_t address =
      kFakeBase + (static_cast<std::uint64_t>(meta.buffer) << kBufferShift) + static_cast<std::uint64_t>(meta.offset) * c10::elementSize(meta.dtype);
  return reinterpret_cast<void*>(address);
}

// A device pointer as the recorder names it: a buffer and a byte offset in it, or null.
json devicePointer(const void* pointer, bool readOnly, const std::string& what) {
  const auto address = reinterpret_cast<std::uint64_t>(pointer);
  if (address == 0) return {{"null", true}};
  if (address < kFakeBase || address >= kFakeBase + (1ull << 61)) unsupported(what + " points to host memory, not to a tensor");
  const std::uint64_t rel = address - kFakeBase;
  return {{"buffer", rel >> kBufferShift}, {"byte_offset", rel & ((1ull << kBufferShift) - 1)}, {"const", readOnly}};
}

void recordLaunch(const char* prettyName, const void* kernel, dim3 grid, dim3 block, std::size_t sharedBytes, cudaStream_t stream,
                  std::vector<LaunchArg> args) {
  if (stream != nullptr) unsupported("a launch on a stream of the solution's own");
  json a = json::array();
  for (const auto& arg : args) {
    if (arg.kind == LaunchArg::Kind::pointer) {
      a.push_back(devicePointer(arg.address, arg.readOnly, "a kernel argument"));
      continue;
    }
    static constexpr const char* kKinds[] = {"pointer", "int", "uint", "float", "bytes"};
    std::string hex;
    for (unsigned char b : arg.bytes) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
    a.push_back({{"kind", kKinds[static_cast<int>(arg.kind)]}, {"bytes", hex}, {"size", arg.bytes.size()}});
  }
  Dl_info where{};
  const std::string library = kernel != nullptr && dladdr(kernel, &where) != 0 && where.dli_fname != nullptr ? where.dli_fname : "";
  ask({{"launch",
        {{"kernel", kernelName(prettyName)},
         {"library", library},
         {"grid", {grid.x, grid.y, grid.z}},
         {"block", {block.x, block.y, block.z}},
         {"shared", sharedBytes},
         {"args", a}}}});
}

void registerFunction(const std::string& name, Function f) { registry()[name] = std::move(f); }

}  // namespace cuset_kb

namespace c10::cuda {
CUDAStream getStreamFromPool(bool, int) { cuset_kb::unsupported("streams from the pool (getStreamFromPool)"); }
}  // namespace c10::cuda

// The CUDA runtime calls a recording can express (declared by the toolkit's cuda_runtime_api.h).
// Those that create what a plan has no place for (streams, events, raw allocations, copies) fail
// the recording with their name; the ones not defined at all leave the build unloadable, which the
// recorder reports as the undefined symbol.
extern "C" {
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "error"; }
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaError"; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "%s", "NVIDIA H100 (the plan's recording target)");
  p->totalGlobalMem = std::size_t{80} << 30;
  p->sharedMemPerBlock = 48 << 10;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->multiProcessorCount = 132;
  p->maxThreadsPerMultiProcessor = 2048;
  p->sharedMemPerMultiprocessor = 228 << 10;
  p->sharedMemPerBlockOptin = 227 << 10;
  p->major = 9;
  p->minor = 0;
  p->l2CacheSize = 50 << 20;
  p->regsPerMultiprocessor = 65536;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, device);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(p.sharedMemPerBlock);
      break;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = p.maxThreadsPerMultiProcessor;
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t*) { cuset_kb::unsupported("streams (cudaStreamCreate)"); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t*, unsigned) { cuset_kb::unsupported("streams (cudaStreamCreateWithFlags)"); }
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t*) { cuset_kb::unsupported("events (cudaEventCreate)"); }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { cuset_kb::unsupported("events (cudaEventRecord)"); }
cudaError_t cudaMalloc(void**, std::size_t) { cuset_kb::unsupported("memory from cudaMalloc (allocate with torch::empty instead)"); }
cudaError_t cudaFree(void*) { return cudaSuccess; }
cudaError_t cudaMemcpy(void*, const void*, std::size_t, cudaMemcpyKind) { cuset_kb::unsupported("copies with cudaMemcpy"); }
cudaError_t cudaMemcpyAsync(void*, const void*, std::size_t, cudaMemcpyKind, cudaStream_t) { cuset_kb::unsupported("copies with cudaMemcpyAsync"); }
// A fill of tensor memory: a library step on the elements it covers (kb_recording.py record_memset).
cudaError_t cudaMemset(void* pointer, int value, std::size_t bytes) {
  ask({{"memset", {{"pointer", cuset_kb::devicePointer(pointer, false, "cudaMemset")}, {"value", value & 0xFF}, {"bytes", bytes}}}});
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* pointer, int value, std::size_t bytes, cudaStream_t stream) {
  if (stream != nullptr) cuset_kb::unsupported("cudaMemsetAsync on a stream of the solution's own");
  return cudaMemset(pointer, value, bytes);
}
cudaError_t cudaMemcpyToSymbol(const void*, const void*, std::size_t, std::size_t, cudaMemcpyKind) {
  cuset_kb::unsupported("copies to __constant__ memory (cudaMemcpyToSymbol)");
}
cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }
cudaError_t cudaFuncSetCacheConfig(const void*, cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void*, int blockSize, std::size_t) {
  *blocks = blockSize > 0 ? std::max(1, 2048 / blockSize) : 1;
  return cudaSuccess;
}
}  // extern "C"

// What the recorder calls (ctypes).
extern "C" {

void cuset_kb_set_callback(Callback callback) {
  g_callback = callback;
  g_caller = std::this_thread::get_id();
}

const char* cuset_kb_functions() {
  static std::string names;
  json a = json::array();
  for (const auto& [name, f] : registry()) a.push_back(name);
  names = a.dump();
  return names.c_str();
}

// Calls a registered function with JSON arguments; {"ok": result}, {"error": ...} or {"unsupported": ...}.
const char* cuset_kb_invoke(const char* name, const char* arguments) {
  static std::string answer;
  try {
    const auto it = registry().find(name);
    if (it == registry().end()) throw c10::Error(std::string("the extension has no function '") + name + "'");
    cuset_kb::Values args;
    for (const auto& a : json::parse(arguments)) args.push_back(decode(a));
    answer = json{{"ok", encode(it->second(args))}}.dump();
  } catch (const cuset_kb::Unsupported& e) {
    answer = json{{"unsupported", e.what()}}.dump();
  } catch (const std::exception& e) {
    answer = json{{"error", e.what()}}.dump();
  }
  return answer.c_str();
}

}  // extern "C"

// cuBLAS (shim/include/cublas_v2.h): GEMMs become library steps on views of the tensors (kb_recording.py
// record_gemm); handles and settings hold nothing.
namespace {

float hostScalar(const float* scalar, const char* name) {
  if (reinterpret_cast<std::uint64_t>(scalar) >= kFakeBase) {
    cuset_kb::unsupported(std::string("cuBLAS reads ") + name + " from device memory (CUBLAS_POINTER_MODE_DEVICE)");
  }
  return *scalar;
}

cublasStatus_t recordGemm(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha, const void* a, int lda,
                          long long strideA, const void* b, int ldb, long long strideB, const float* beta, void* c, int ldc, long long strideC,
                          int batch) {
  // Real matrices: the conjugate transpose is the transpose.
  ask({{"gemm",
        {{"transa", transa != CUBLAS_OP_N},
         {"transb", transb != CUBLAS_OP_N},
         {"m", m},
         {"n", n},
         {"k", k},
         {"alpha", hostScalar(alpha, "alpha")},
         {"beta", hostScalar(beta, "beta")},
         {"a", cuset_kb::devicePointer(a, true, "cuBLAS's A")},
         {"lda", lda},
         {"stride_a", strideA},
         {"b", cuset_kb::devicePointer(b, true, "cuBLAS's B")},
         {"ldb", ldb},
         {"stride_b", strideB},
         {"c", cuset_kb::devicePointer(c, false, "cuBLAS's C")},
         {"ldc", ldc},
         {"stride_c", strideC},
         {"batch", batch}}}});
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {
cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  static int context;
  *handle = reinterpret_cast<cublasHandle_t>(&context);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t stream) {
  if (stream != nullptr) cuset_kb::unsupported("cuBLAS on a stream of the solution's own");
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetPointerMode(cublasHandle_t, cublasPointerMode_t mode) {
  if (mode != CUBLAS_POINTER_MODE_HOST) cuset_kb::unsupported("cuBLAS scalars in device memory (CUBLAS_POINTER_MODE_DEVICE)");
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusString(cublasStatus_t status) { return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_ERROR"; }
cublasStatus_t cublasSgemm(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  return recordGemm(transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                         const float* A, int lda, long long strideA, const float* B, int ldb, long long strideB, const float* beta,
                                         float* C, int ldc, long long strideC, int batchCount) {
  return recordGemm(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}
}  // extern "C"
