// Row-wise families over x[M, N]: reductions, softmax-like, norms and scans. Implementations: one
// thread per row, one warp per row (shuffles) or one block per row (shared-memory tree).
#include <fmt/format.h>

#include "cuset/synth/op_family.hpp"
#include "family_util.hpp"

namespace cuset::synth {
namespace {

using namespace detail;

std::string subst(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

enum class RowStyle { thread, warp, block };

struct RowLaunch {
  RowStyle style;
  int block;
  std::string grid;
  std::string name;
};

RowLaunch pickRowLaunch(SynthRng& rng, bool allowWarp) {
  const std::size_t choice = rng.below(allowWarp ? 3 : 2);
  if (choice == 0) {
    const int b = rng.chance(0.5) ? 64 : 128;
    return {RowStyle::thread, b, fmt::format("ceil_div(M, {})", b), fmt::format("thread-per-row b{}", b)};
  }
  if (choice == 1) {
    const int b = rng.chance(0.5) ? 128 : 256;
    return {RowStyle::block, b, "M", fmt::format("block-per-row b{}", b)};
  }
  const int warps = rng.chance(0.5) ? 4 : 8;
  return {RowStyle::warp, 32 * warps, fmt::format("ceil_div(M, {})", warps), fmt::format("warp-per-row w{}", warps)};
}

// The row index and the loop over a row's columns for each style; `finish` is true for the thread
// that writes a per-row result.
struct RowFrame {
  std::string prologue;  // defines `row` (and `lane`), returns for rows past M
  std::string loop;      // "for (int j = ...; j < N; j += ...)"
  std::string writer;    // condition for the single writer of per-row values
};

RowFrame rowFrame(RowStyle s) {
  switch (s) {
    case RowStyle::thread:
      return {"  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n  if (row >= M) return;\n", "for (int j = 0; j < N; ++j)", "true"};
    case RowStyle::warp:
      return {"  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n  const int lane = threadIdx.x % 32;\n  if (row >= M) return;\n",
              "for (int j = lane; j < N; j += 32)", "lane == 0"};
    default:
      return {"  const int row = blockIdx.x;\n", "for (int j = threadIdx.x; j < N; j += blockDim.x)", "threadIdx.x == 0"};
  }
}

// Reduces `var` across the threads sharing a row (nothing for thread-per-row).
std::string rowCombine(RowStyle s, const std::string& combine, const std::string& var) {
  if (s == RowStyle::thread) return "";
  return fmt::format("  {0} = {1}_{2}({0});\n", var, s == RowStyle::warp ? "warp" : "block", combine);
}

std::string rowHelpers(RowStyle s, const std::vector<std::string>& combines, int block) {
  std::string h;
  for (const auto& c : combines) {
    if (s == RowStyle::warp) h += warpReduceHelper(c);
    if (s == RowStyle::block) h += blockReduceHelper(c, block);
  }
  return h;
}

void rowSizes(SynthProblem& p, SynthRng& rng) {
  p.small = {{"M", smallRows(rng)}, {"N", smallCols(rng)}};
  p.full = {{"M", 32768}, {"N", 8192}};
}

const std::vector<std::vector<std::string>> kRowNames = {{"x", "y"}, {"x", "out"}, {"input", "output"}, {"scores", "probs"}, {"src", "dst"}};

// ---------------------------------------------------------------------------------------------- reduce

struct ReduceOp {
  std::string id, phrase, combine, elem, finish, torch;  // elem of v, finish of acc, torch of X
};

const std::vector<ReduceOp> kReduceOps = {
    {"sum", "sum", "sum", "v", "acc", "torch.sum(X, 1)"},
    {"mean", "mean", "sum", "v", "acc / (float)N", "torch.mean(X, 1)"},
    {"max", "maximum", "max", "v", "acc", "torch.amax(X, [1])"},
    {"min", "minimum", "min", "v", "acc", "torch.amin(X, [1])"},
    {"sumsq", "sum of squares", "sum", "v * v", "acc", "torch.sum(X * X, 1)"},
    {"l2norm", "Euclidean norm sqrt(sum(x^2))", "sum", "v * v", "sqrtf(acc)", "torch.sqrt(torch.sum(X * X, 1))"},
    {"meanabs", "mean absolute value", "sum", "fabsf(v)", "acc / (float)N", "torch.mean(torch.abs(X), 1)"},
};
const std::vector<Dtype> kReduceDtypes = {Dtype::f32, Dtype::f16, Dtype::bf16};

class ReduceFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "reduce"; }
  std::string_view summary() const override { return "row reductions x[M, N] -> y[M] (sum, mean, max, min, sum of squares, L2 norm, mean |x|)"; }
  std::size_t variantCount() const override { return kReduceOps.size() * kReduceDtypes.size(); }
  std::string variantKey(std::size_t v) const override {
    return fmt::format("reduce/{}/{}", kReduceOps[v / kReduceDtypes.size()].id, dtypeShort(kReduceDtypes[v % kReduceDtypes.size()]));
  }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const ReduceOp& op = kReduceOps[v / kReduceDtypes.size()];
    const Dtype dt = kReduceDtypes[v % kReduceDtypes.size()];
    SynthInstance inst = startInstance("reduce", variantKey(v), problemName, {"reduction"});
    SynthProblem& p = inst.problem;
    const auto& nm = rng.pick(kRowNames);
    rowSizes(p, rng);
    p.description =
        fmt::format("Row-wise {} of a {} matrix {}[M, N]: {}[i] is the {} of row i, in float32.", op.id, dtypeName(dt), nm[0], nm[1], op.phrase);
    p.inputs = {{nm[0], dt, {"M", "N"}, ""}};
    p.outputs = {{nm[1], Dtype::f32, {"M"}, ""}};
    p.reference = fmt::format("def forward({}: Tensor) -> Tensor:\n    return {}", nm[0], subst(op.torch, "X", nm[0]));
    setTolerance(p, Dtype::f32, 600);
    p.flops = "M*N";
    p.bytes = fmt::format("{}*M*N + 4*M", dt == Dtype::f32 ? 4 : 2);

    const RowLaunch launch = pickRowLaunch(rng, true);
    const RowFrame frame = rowFrame(launch.style);
    const std::string kernel = fmt::format("row_{}", op.id);
    const std::string source =
        rowHelpers(launch.style, {op.combine}, launch.block) +
        fmt::format(
            "extern \"C\" __global__ void {0}(const {1}* __restrict__ {2}, float* __restrict__ {3}, int M, int N) {{\n"
            "{4}"
            "  const {1}* r = {2} + (long long)row * N;\n"
            "  float acc = {5};\n"
            "  {6} {{\n"
            "    const float v = {7};\n"
            "    acc = {8};\n"
            "  }}\n"
            "{9}"
            "  if ({10}) {3}[row] = {11};\n"
            "}}\n",
            kernel, dtypeCType(dt), nm[0], nm[1], frame.prologue, combineIdentity(op.combine), frame.loop, loadAsFloat(dt, "r[j]"),
            combineExpr(op.combine, "acc", op.elem), rowCombine(launch.style, op.combine, "acc"), frame.writer, op.finish);
    inst.implementation = launch.name;
    inst.response = renderResponse({{kernel, {launch.grid}, {std::to_string(launch.block)}, "", {nm[0], nm[1], "M", "N"}}}, source);
    return inst;
  }
};

// --------------------------------------------------------------------------------------------- softmax

struct SoftmaxOp {
  std::string id, phrase;
  double scale;  // x * scale before the softmax (1 / temperature)
  bool log;
};

const std::vector<SoftmaxOp> kSoftmaxOps = {
    {"softmax", "softmax", 1.0, false},
    {"log_softmax", "log_softmax", 1.0, true},
    {"softmax_t0.5", "softmax at temperature 0.5, softmax(2 * x)", 2.0, false},
    {"softmax_t2", "softmax at temperature 2, softmax(0.5 * x)", 0.5, false},
};
const std::vector<Dtype> kSoftmaxDtypes = {Dtype::f32, Dtype::f16};

class SoftmaxFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "softmax"; }
  std::string_view summary() const override { return "row softmax, log-softmax and tempered softmax (max-subtracted)"; }
  std::size_t variantCount() const override { return kSoftmaxOps.size() * kSoftmaxDtypes.size(); }
  std::string variantKey(std::size_t v) const override {
    return fmt::format("softmax/{}/{}", kSoftmaxOps[v / kSoftmaxDtypes.size()].id, dtypeShort(kSoftmaxDtypes[v % kSoftmaxDtypes.size()]));
  }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const SoftmaxOp& op = kSoftmaxOps[v / kSoftmaxDtypes.size()];
    const Dtype dt = kSoftmaxDtypes[v % kSoftmaxDtypes.size()];
    SynthInstance inst = startInstance("softmax", variantKey(v), problemName, {"softmax", "reduction"});
    SynthProblem& p = inst.problem;
    const auto& nm = rng.pick(kRowNames);
    rowSizes(p, rng);
    p.description =
        fmt::format("Row-wise {} of a {} matrix {}[M, N] over the last dimension, giving {}[M, N].", op.phrase, dtypeName(dt), nm[0], nm[1]);
    p.inputs = {{nm[0], dt, {"M", "N"}, ""}};
    p.outputs = {{nm[1], dt, {"M", "N"}, ""}};
    const std::string scaled = op.scale == 1.0 ? nm[0] : fmt::format("{} * {}", nm[0], torchFloat(op.scale));
    p.reference = fmt::format("def forward({}: Tensor) -> Tensor:\n    return torch.{}({}, 1)", nm[0], op.log ? "log_softmax" : "softmax", scaled);
    setTolerance(p, dt, 600);
    if (dt == Dtype::f32) p.atol = 1e-5;
    p.flops = "5*M*N";
    p.bytes = fmt::format("{}*M*N", dt == Dtype::f32 ? 8 : 4);

    const RowLaunch launch = pickRowLaunch(rng, false);
    const RowFrame frame = rowFrame(launch.style);
    const std::string kernel = op.log ? "log_softmax_rows" : "softmax_rows";
    const std::string ct(dtypeCType(dt));
    const std::string value = op.scale == 1.0 ? loadAsFloat(dt, "r[j]") : fmt::format("{} * {}", loadAsFloat(dt, "r[j]"), cudaFloat(op.scale));
    const std::string result = op.log ? "v - m - logf(s)" : "expf(v - m) / s";
    const std::string source = rowHelpers(launch.style, {"max", "sum"}, launch.block) +
                               fmt::format(
                                   "extern \"C\" __global__ void {0}(const {1}* __restrict__ {2}, {1}* __restrict__ {3}, int M, int N) {{\n"
                                   "{4}"
                                   "  const {1}* r = {2} + (long long)row * N;\n"
                                   "  {1}* o = {3} + (long long)row * N;\n"
                                   "  float m = -INFINITY;\n"
                                   "  {5} m = fmaxf(m, {6});\n"
                                   "{7}"
                                   "  float s = 0.0f;\n"
                                   "  {5} s += expf({6} - m);\n"
                                   "{8}"
                                   "  {5} {{\n"
                                   "    const float v = {6};\n"
                                   "    o[j] = {9};\n"
                                   "  }}\n"
                                   "}}\n",
                                   kernel, ct, nm[0], nm[1], frame.prologue, frame.loop, value, rowCombine(launch.style, "max", "m"),
                                   rowCombine(launch.style, "sum", "s"), storeFromFloat(dt, result));
    inst.implementation = launch.name;
    inst.response = renderResponse({{kernel, {launch.grid}, {std::to_string(launch.block)}, "", {nm[0], nm[1], "M", "N"}}}, source);
    return inst;
  }
};

// ------------------------------------------------------------------------------------------------ norm

struct NormOp {
  std::string id, phrase;
  bool rms;
  bool weight, bias;
  double eps;
};

const std::vector<NormOp> kNormOps = {
    {"rmsnorm_1e-5", "RMSNorm with weight w[N] and eps 1e-5, x / sqrt(mean(x^2) + eps) * w", true, true, false, 1e-5},
    {"rmsnorm_1e-6", "RMSNorm with weight w[N] and eps 1e-6, x / sqrt(mean(x^2) + eps) * w", true, true, false, 1e-6},
    {"layernorm", "LayerNorm without affine parameters and eps 1e-5, (x - mean) / sqrt(var + eps)", false, false, false, 1e-5},
    {"layernorm_affine", "LayerNorm with weight w[N], bias b[N] and eps 1e-5, (x - mean) / sqrt(var + eps) * w + b", false, true, true, 1e-5},
};

class NormFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "norm"; }
  std::string_view summary() const override { return "row normalisations: RMSNorm and LayerNorm with and without affine parameters"; }
  std::size_t variantCount() const override { return kNormOps.size(); }
  std::string variantKey(std::size_t v) const override { return fmt::format("norm/{}/f32", kNormOps[v].id); }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const NormOp& op = kNormOps[v];
    SynthInstance inst = startInstance("norm", variantKey(v), problemName, {"normalization", "reduction"});
    SynthProblem& p = inst.problem;
    const auto& nm = rng.pick(kRowNames);
    rowSizes(p, rng);
    p.description = fmt::format("Row-wise {} of a float32 matrix {}[M, N], giving {}[M, N].", op.phrase, nm[0], nm[1]);
    p.inputs = {{nm[0], Dtype::f32, {"M", "N"}, ""}};
    std::string params = fmt::format("{}: Tensor", nm[0]);
    if (op.weight) {
      p.inputs.push_back({"w", Dtype::f32, {"N"}, "{dist: normal, mean: 1, std: 0.1}"});
      params += ", w: Tensor";
    }
    if (op.bias) {
      p.inputs.push_back({"b", Dtype::f32, {"N"}, ""});
      params += ", b: Tensor";
    }
    p.outputs = {{nm[1], Dtype::f32, {"M", "N"}, ""}};
    const std::string x = nm[0];
    if (op.rms) {
      p.reference = fmt::format("def forward({}) -> Tensor:\n    return {} * torch.rsqrt(torch.mean({} * {}, 1, True) + {}) * w", params, x, x, x,
                                torchFloat(op.eps));
    } else {
      p.reference = fmt::format(
          "def forward({}) -> Tensor:\n    d = {} - torch.mean({}, 1, True)\n    return d * torch.rsqrt(torch.mean(d * d, 1, True) + {}){}", params,
          x, x, torchFloat(op.eps), op.bias ? " * w + b" : "");
    }
    setTolerance(p, Dtype::f32, 600);
    p.flops = "6*M*N";
    p.bytes = "8*M*N";

    const RowLaunch launch = pickRowLaunch(rng, true);
    const RowFrame frame = rowFrame(launch.style);
    const std::string kernel = op.rms ? "rmsnorm_rows" : "layernorm_rows";
    std::string kparams = fmt::format("const float* __restrict__ {}", x);
    std::vector<std::string> args = {x};
    if (op.weight) kparams += ", const float* __restrict__ w", args.push_back("w");
    if (op.bias) kparams += ", const float* __restrict__ b", args.push_back("b");
    kparams += fmt::format(", float* __restrict__ {}, int M, int N", nm[1]);
    args.insert(args.end(), {nm[1], "M", "N"});
    std::string body;
    if (op.rms) {
      body = fmt::format(
          "  float ss = 0.0f;\n  {0} ss += r[j] * r[j];\n{1}"
          "  const float inv = rsqrtf(ss / (float)N + {2});\n"
          "  {0} o[j] = r[j] * inv * w[j];\n",
          frame.loop, rowCombine(launch.style, "sum", "ss"), cudaFloat(op.eps));
    } else {
      body = fmt::format(
          "  float sum = 0.0f;\n  {0} sum += r[j];\n{1}"
          "  const float mean = sum / (float)N;\n"
          "  float var = 0.0f;\n  {0} var += (r[j] - mean) * (r[j] - mean);\n{2}"
          "  const float inv = rsqrtf(var / (float)N + {3});\n"
          "  {0} o[j] = (r[j] - mean) * inv{4};\n",
          frame.loop, rowCombine(launch.style, "sum", "sum"), rowCombine(launch.style, "sum", "var"), cudaFloat(op.eps),
          op.bias ? " * w[j] + b[j]" : "");
    }
    const std::string source =
        rowHelpers(launch.style, {"sum"}, launch.block) +
        fmt::format(
            "extern \"C\" __global__ void {}({}) {{\n{}  const float* r = {} + (long long)row * N;\n  float* o = {} + (long long)row * N;\n{}}}\n",
            kernel, kparams, frame.prologue, x, nm[1], body);
    inst.implementation = launch.name;
    inst.response = renderResponse({{kernel, {launch.grid}, {std::to_string(launch.block)}, "", args}}, source);
    return inst;
  }
};

// ------------------------------------------------------------------------------------------------ scan

struct ScanOp {
  std::string id, phrase, torch;  // torch of X
  bool reverse, exclusive, max;
};

const std::vector<ScanOp> kScanOps = {
    {"cumsum", "inclusive prefix sum (cumsum)", "torch.cumsum(X, 1)", false, false, false},
    {"cumsum_exclusive", "exclusive prefix sum (sum of the elements before j)", "torch.cumsum(X, 1) - X", false, true, false},
    {"cumsum_reverse", "reverse cumulative sum (sum of the elements from j to the end)", "torch.flip(torch.cumsum(torch.flip(X, [1]), 1), [1])", true,
     false, false},
    {"cummax", "running maximum (cummax)", "torch.cummax(X, 1)[0]", false, false, true},
};

class ScanFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "scan"; }
  std::string_view summary() const override { return "row scans: inclusive, exclusive and reverse prefix sums, running maximum"; }
  std::size_t variantCount() const override { return kScanOps.size(); }
  std::string variantKey(std::size_t v) const override { return fmt::format("scan/{}/f32", kScanOps[v].id); }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const ScanOp& op = kScanOps[v];
    SynthInstance inst = startInstance("scan", variantKey(v), problemName, {"scan"});
    SynthProblem& p = inst.problem;
    const auto& nm = rng.pick(kRowNames);
    rowSizes(p, rng);
    p.full = {{"M", 65536}, {"N", 4096}};
    p.description = fmt::format("Row-wise {} of a float32 matrix {}[M, N] along the last dimension, giving {}[M, N].", op.phrase, nm[0], nm[1]);
    p.inputs = {{nm[0], Dtype::f32, {"M", "N"}, ""}};
    p.outputs = {{nm[1], Dtype::f32, {"M", "N"}, ""}};
    p.reference = fmt::format("def forward({}: Tensor) -> Tensor:\n    return {}", nm[0], subst(op.torch, "X", nm[0]));
    setTolerance(p, Dtype::f32, 600);
    p.flops = "M*N";
    p.bytes = "8*M*N";

    const int block = rng.chance(0.5) ? 64 : 128;
    const std::string kernel = fmt::format("{}_rows", op.max ? "cummax" : "cumsum");
    const std::string loop = op.reverse ? "for (int j = N - 1; j >= 0; --j)" : "for (int j = 0; j < N; ++j)";
    std::string step;
    if (op.max) {
      step = "    acc = fmaxf(acc, r[j]);\n    o[j] = acc;\n";
    } else if (op.exclusive) {
      step = "    o[j] = acc;\n    acc += r[j];\n";
    } else {
      step = "    acc += r[j];\n    o[j] = acc;\n";
    }
    const std::string source = fmt::format(
        "// One thread walks one row: rows are independent, and the scan inside a row is sequential.\n"
        "extern \"C\" __global__ void {0}(const float* __restrict__ {1}, float* __restrict__ {2}, int M, int N) {{\n"
        "  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (row >= M) return;\n"
        "  const float* r = {1} + (long long)row * N;\n"
        "  float* o = {2} + (long long)row * N;\n"
        "  float acc = {3};\n"
        "  {4} {{\n{5}  }}\n"
        "}}\n",
        kernel, nm[0], nm[1], op.max ? "-INFINITY" : "0.0f", loop, step);
    inst.implementation = fmt::format("thread-per-row b{}", block);
    inst.response =
        renderResponse({{kernel, {fmt::format("ceil_div(M, {})", block)}, {std::to_string(block)}, "", {nm[0], nm[1], "M", "N"}}}, source);
    return inst;
  }
};

}  // namespace

std::unique_ptr<OpFamily> makeReduceFamily() { return std::make_unique<ReduceFamily>(); }
std::unique_ptr<OpFamily> makeSoftmaxFamily() { return std::make_unique<SoftmaxFamily>(); }
std::unique_ptr<OpFamily> makeNormFamily() { return std::make_unique<NormFamily>(); }
std::unique_ptr<OpFamily> makeScanFamily() { return std::make_unique<ScanFamily>(); }

}  // namespace cuset::synth
