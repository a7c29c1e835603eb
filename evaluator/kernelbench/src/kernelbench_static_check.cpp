#include "cuset/evaluator/kernelbench/kernelbench_static_check.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>

namespace cuset {
namespace {

// libstdc++'s regex matcher recurses per character a pattern consumes: a hostile multi-megabyte line
// could exhaust the stack. Patterns are matched line by line, on at most this much of each line.
constexpr std::size_t kMaxLineBytes = 4096;

// Every line up to its first '#' and its first "//", wherever they are (inside a string too: KernelBench
// does the same, and its verdicts are what this reproduces), each at most kMaxLineBytes.
std::vector<std::string> codeLines(std::string_view source) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= source.size()) {
    std::size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    std::string_view line = source.substr(start, end - start);
    line = line.substr(0, std::min(line.find('#'), line.size()));
    line = line.substr(0, std::min(line.find("//"), line.size()));
    out.emplace_back(line.substr(0, std::min(line.size(), kMaxLineBytes)));
    start = end + 1;
  }
  return out;
}

const std::regex& compiled(const std::string& pattern) {
  static std::mutex mutex;
  static std::map<std::string, std::regex> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern)).first;
  return it->second;
}

using Code = std::vector<std::string>;

// The first match of `pattern` in any line, or empty.
std::string firstMatch(const Code& code, const std::string& pattern) {
  const std::regex& re = compiled(pattern);
  std::smatch m;
  for (const auto& line : code) {
    if (std::regex_search(line, m, re)) return m.str(0).empty() ? std::string(" ") : m.str(0);
  }
  return {};
}

bool matches(const Code& code, const char* pattern) { return !firstMatch(code, pattern).empty(); }

bool contains(const Code& code, std::string_view text) {
  return std::any_of(code.begin(), code.end(), [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

bool anyMatch(const Code& code, std::initializer_list<const char*> patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const char* p) { return matches(code, p); });
}

// KernelBench's list of torch ops that do the computation a kernel should (matrix products,
// convolutions, pooling, activations, normalisations, losses).
const char* const kTorchComputationOps[] = {"mm",
                                            "bmm",
                                            "matmul",
                                            "einsum",
                                            "conv1d",
                                            "conv2d",
                                            "conv3d",
                                            "conv",
                                            "conv_transpose1d",
                                            "conv_transpose2d",
                                            "conv_transpose3d",
                                            "avg_pool1d",
                                            "avg_pool2d",
                                            "avg_pool3d",
                                            "max_pool1d",
                                            "max_pool2d",
                                            "max_pool3d",
                                            "adaptive_avg_pool1d",
                                            "adaptive_avg_pool2d",
                                            "adaptive_avg_pool3d",
                                            "adaptive_max_pool1d",
                                            "adaptive_max_pool2d",
                                            "adaptive_max_pool3d",
                                            "relu",
                                            "hardtanh",
                                            "elu",
                                            "selu",
                                            "leaky_relu",
                                            "gelu",
                                            "softsign",
                                            "softplus",
                                            "softmax",
                                            "log_softmax",
                                            "tanh",
                                            "sigmoid",
                                            "hardsigmoid",
                                            "silu",
                                            "mish",
                                            "batch_norm",
                                            "group_norm",
                                            "layer_norm",
                                            "instance_norm",
                                            "rms_norm",
                                            "normalize",
                                            "linear",
                                            "cross_entropy",
                                            "kl_div",
                                            "mse_loss",
                                            "huber_loss",
                                            "triplet_margin_loss",
                                            "cosine_similarity",
                                            "logsumexp",
                                            "clamp",
                                            "dropout"};

std::string torchComputationOp(const Code& code) {
  std::string alternatives;
  for (const char* op : kTorchComputationOps) alternatives += (alternatives.empty() ? "" : "|") + std::string(op);
  if (auto m = firstMatch(code, "\\btorch\\.(" + alternatives + ")(?=\\s*\\(|\\s|$)"); !m.empty()) return "Uses torch computation op: " + m;
  for (const char* p : {R"(torch\.nn\.functional\.\w+)", R"(\bnn\.functional\.\w+)",
                        R"(\bF\.(conv|linear|relu|gelu|softmax|batch_norm|layer_norm|dropout|max_pool|avg_pool))"}) {
    if (auto m = firstMatch(code, p); !m.empty()) return "Uses torch.nn.functional op: " + m;
  }
  return {};
}

std::string cudaImplementationMissing(const Code& code) {
  if (!contains(code, "__global__")) return "Missing __global__ kernel definition";
  if (!contains(code, "load_inline") && !contains(code, "cpp_extension")) return "Missing load_inline or cpp_extension for compilation";
  if (!anyMatch(code, {R"(\bthreadIdx\.)", R"(\bblockIdx\.)", R"(\bblockDim\.)", R"(\bgridDim\.)", R"(__syncthreads\s*\()", R"(__shared__\s+)",
                       R"(__device__\s+)", R"(atomicAdd\s*\()", R"(atomicMax\s*\()", R"(atomicMin\s*\()"})) {
    return "Missing CUDA thread indexing or kernel features (threadIdx, blockIdx, __syncthreads, __shared__, etc.)";
  }
  return {};
}

constexpr const char* kTritonKernel = R"(@triton\.(jit|autotune))";

// KernelBench's check_triton_impl: a @triton.jit or @triton.autotune kernel that uses tl.* operations.
std::string tritonImplementationMissing(const Code& code) {
  if (!matches(code, kTritonKernel)) return "Missing @triton.jit or @triton.autotune";
  if (!matches(code, R"(\btl\.\w+)")) return "No tl.* operations found in Triton kernel";
  return {};
}

}  // namespace

bool hasTritonKernel(std::string_view source) { return matches(codeLines(source), kTritonKernel); }

std::vector<KernelBenchStaticFinding> kernelBenchStaticFindings(std::string_view source, std::string_view precision, std::string_view backend) {
  const Code code = codeLines(source);
  std::vector<KernelBenchStaticFinding> out;
  auto add = [&](const char* check, std::string message, bool strict) {
    if (!message.empty()) out.push_back({check, std::move(message), strict});
  };
  // Strict (KernelBench's STRICT_CHECKS and the backend's implementation check).
  if (anyMatch(code, {R"(\btry\s*:)", R"(\bexcept\s*:)", R"(\bexcept\s+\w+)"})) {
    add("code_bypass", "Contains try-except block (potential fallback bypass)", true);
  } else if (matches(code, R"(\bpass\b)")) {
    add("code_bypass", "Contains 'pass' statement (inheritance bypass)", true);
  }
  if (anyMatch(code, {R"(torch\.cuda\.Event\.record\s*=)", R"(torch\.cuda\.Event\.elapsed_time\s*=)", R"(torch\.cuda\.synchronize\s*=)",
                      R"(torch\.cuda\.Event\s*=)", R"(time\.perf_counter\s*=)", R"(time\.time\s*=)"})) {
    add("timing_event_patch", "Reassigns timing function (monkey patch detected)", true);
  }
  if (anyMatch(code, {R"(multiprocessing\.(Process|Pool|Manager|Queue|Pipe))", R"(import\s+multiprocessing)"})) {
    add("thread_injection", "Uses multiprocessing (potential timing manipulation)", true);
  } else if (anyMatch(code, {R"(concurrent\.futures)", "ThreadPoolExecutor", "ProcessPoolExecutor"})) {
    add("thread_injection", "Uses concurrent futures (potential timing manipulation)", true);
  } else if (anyMatch(code, {R"(threading\.Thread\s*\()", R"(import\s+threading)", R"(from\s+threading\s+import)"})) {
    add("thread_injection", "Uses threading (potential timing manipulation)", true);
  }
  if (matches(code, "_make_subclass")) {
    add("lazy_eval", "Uses _make_subclass (potential lazy tensor hack)", true);
  } else if (anyMatch(code, {R"(class\s+\w+.*\(torch\.Tensor\))", R"(class\s+\w+.*\(Tensor\))"})) {
    add("lazy_eval", "Defines custom tensor subclass (potential lazy tensor hack)", true);
  } else if (matches(code, R"(torch\.Tensor\.__new__)")) {
    add("lazy_eval", "Uses direct tensor construction (potential lazy tensor hack)", true);
  }
  // The backend's implementation check (KernelBench's BACKEND_IMPL_CHECK).
  if (backend == "triton") {
    add("triton_impl", tritonImplementationMissing(code), true);
  } else {
    add("cuda_impl", cudaImplementationMissing(code), true);
  }
  // Warnings (KernelBench's WARNING_CHECKS).
  if (matches(code, R"(torch\.nn\.(?!(Module|parameter|Parameter|ParameterList|ParameterDict|ModuleList|ModuleDict|init)\b))")) {
    add("pytorch_wrap", "Uses torch.nn compute layer (only containers, Parameter, init allowed)", false);
  }
  add("torch_computation_ops", torchComputationOp(code), false);
  if (anyMatch(code, {R"(torch\.cuda\.Stream\s*\()", R"(cuda\.Stream\s*\()"})) {
    add("stream_injection", "Uses CUDA streams (potential timing manipulation)", false);
  } else if (matches(code, R"(with\s+torch\.cuda\.stream)")) {
    add("stream_injection", "Uses stream context manager (potential timing manipulation)", false);
  } else if (anyMatch(code, {R"(\.wait_stream\s*\()", R"(\.record_stream\s*\()"})) {
    add("stream_injection", "Uses stream synchronization (potential timing manipulation)", false);
  }
  if (precision == "fp32" &&
      anyMatch(code, {R"(__float2half(_rn)?\s*\()", R"(\(\s*__half\s*\)\s*[\w\->\.]+)", R"(static_cast\s*<\s*(__half|half)\s*>\s*\()",
                      R"(tl\.astype\s*\(\s*[^,]+,\s*tl\.float16\s*\))", R"(NumericConverter\s*<\s*half_t\s*,\s*float\s*>)",
                      R"(LinearCombination\s*<\s*half_t)", R"(type_convert\s*<\s*half_t\s*>\s*\()", R"(tk::half\s*\()", R"(\.half\s*\()",
                      R"(\.float16\s*\()", R"(\.to\s*\(\s*torch\.(float16|half)\b)", R"(\.to\s*\(\s*dtype\s*=\s*torch\.(float16|half)\b)"})) {
    add("precision_downgrade", "Precision downgrade detected: required FP32 but code uses FP16", false);
  }
  return out;
}

}  // namespace cuset
