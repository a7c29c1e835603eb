// Elementwise families: unary functions (with constants) and binary ops with broadcasting.
#include <fmt/format.h>

#include "cuset/synth/op_family.hpp"
#include "family_util.hpp"
#include <cstdint>

namespace cuset::synth {
namespace {

using namespace detail;

const std::vector<Dtype> kAllDtypes = {Dtype::f32, Dtype::f16, Dtype::bf16};

struct UnaryOp {
  std::string id;          // key part, e.g. "leaky_relu_0.1"
  std::string kernelName;  // C identifier part
  std::string phrase;      // description
  std::string cuda;        // float expression of v
  std::string torch;       // TorchScript expression of X (replaced by the input name)
  bool transcendental = false;
};

std::vector<UnaryOp> unaryOps() {
  std::vector<UnaryOp> ops = {
      {"relu", "relu", "ReLU, max(x, 0)", "fmaxf(v, 0.0f)", "torch.relu(X)"},
      {"sigmoid", "sigmoid", "the logistic sigmoid 1 / (1 + exp(-x))", "1.0f / (1.0f + expf(-v))", "torch.sigmoid(X)", true},
      {"tanh", "tanh", "the hyperbolic tangent tanh(x)", "tanhf(v)", "torch.tanh(X)", true},
      {"silu", "silu", "SiLU, x * sigmoid(x)", "v / (1.0f + expf(-v))", "X * torch.sigmoid(X)", true},
      {"gelu_tanh", "gelu", "the tanh approximation of GELU, 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3)))",
       "0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))",
       "0.5 * X * (1.0 + torch.tanh(0.7978845608 * (X + 0.044715 * X * X * X)))", true},
      {"softplus", "softplus", "softplus, log(1 + exp(x))", "log1pf(expf(v))", "torch.log1p(torch.exp(X))", true},
      {"exp", "exp", "the exponential exp(x)", "expf(v)", "torch.exp(X)", true},
      {"abs", "abs", "the absolute value |x|", "fabsf(v)", "torch.abs(X)"},
      {"square", "square", "the square x * x", "v * v", "X * X"},
      {"hardsigmoid", "hardsigmoid", "the hard sigmoid clamp(x / 6 + 0.5, 0, 1)", "fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f)",
       "torch.clamp(X / 6.0 + 0.5, 0.0, 1.0)"},
  };
  for (double a : {0.01, 0.1, 0.2}) {
    ops.push_back({fmt::format("leaky_relu_{}", a), "leaky_relu", fmt::format("LeakyReLU with negative slope {}", a),
                   fmt::format("v > 0.0f ? v : {} * v", cudaFloat(a)), fmt::format("torch.where(X > 0.0, X, X * {})", torchFloat(a))});
  }
  for (double a : {0.5, 1.0}) {
    ops.push_back({fmt::format("elu_{}", a), "elu", fmt::format("ELU with alpha {}, x if x > 0 else alpha * (exp(x) - 1)", a),
                   fmt::format("v > 0.0f ? v : {} * (expf(v) - 1.0f)", cudaFloat(a)),
                   fmt::format("torch.where(X > 0.0, X, (torch.exp(X) - 1.0) * {})", torchFloat(a)), true});
  }
  for (double c : {0.5, 2.0, 3.0}) {
    ops.push_back({fmt::format("scale_{}", c), "scale", fmt::format("scaling by {}, y = {} * x", c, c), fmt::format("{} * v", cudaFloat(c)),
                   fmt::format("X * {}", torchFloat(c))});
  }
  for (auto [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{0.0, 6.0}}) {
    ops.push_back({fmt::format("clamp_{}_{}", lo, hi), "clamp", fmt::format("clamping to [{}, {}]", lo, hi),
                   fmt::format("fminf(fmaxf(v, {}), {})", cudaFloat(lo), cudaFloat(hi)),
                   fmt::format("torch.clamp(X, {}, {})", torchFloat(lo), torchFloat(hi))});
  }
  return ops;
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// Shape [N] or [M, N]: returns (shape, flat count expression) and fills the size lists.
std::pair<std::vector<std::string>, std::string> flatShape(SynthProblem& p, SynthRng& rng) {
  if (rng.chance(0.4)) {
    p.small = {{"N", rng.between(1000, 9000) | 1}};
    p.full = {{"N", (std::int64_t{1} << 28) + 3}};
    return {{"N"}, "N"};
  }
  p.small = {{"M", smallRows(rng)}, {"N", smallCols(rng)}};
  p.full = {{"M", 16384}, {"N", 16385}};
  return {{"M", "N"}, "M*N"};
}

class UnaryFamily final : public OpFamily {
 public:
  UnaryFamily() : ops_(unaryOps()) {}
  std::string_view name() const override { return "unary"; }
  std::string_view summary() const override { return "elementwise unary functions and constants (ReLU, GELU, ELU(alpha), clamp, ...)"; }
  std::size_t variantCount() const override { return ops_.size() * kAllDtypes.size(); }
  std::string variantKey(std::size_t v) const override {
    return fmt::format("unary/{}/{}", ops_[v / kAllDtypes.size()].id, dtypeShort(kAllDtypes[v % kAllDtypes.size()]));
  }

  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const UnaryOp& op = ops_[v / kAllDtypes.size()];
    const Dtype dt = kAllDtypes[v % kAllDtypes.size()];
    SynthInstance inst = startInstance("unary", variantKey(v), problemName, {"elementwise"});
    SynthProblem& p = inst.problem;
    const IoNames io = pickUnaryNames(rng);
    const auto [shape, n] = flatShape(p, rng);
    // The op's identifier appears in the text, as in a real task statement, so a model can carry it into the kernel name.
    p.description = fmt::format("Elementwise {} ({}) of a {} tensor {}: {} = f({}).", op.kernelName, op.phrase, dtypeName(dt), io.in, io.out, io.in);
    p.inputs = {{io.in, dt, shape, ""}};
    p.outputs = {{io.out, dt, shape, ""}};
    p.reference = fmt::format("def forward({}: Tensor) -> Tensor:\n    return {}", io.in, replaceAll(op.torch, "X", io.in));
    setTolerance(p, dt, 1);
    const int bytesPer = dt == Dtype::f32 ? 4 : 2;
    p.flops = n;
    p.bytes = fmt::format("{}*{}", 2 * bytesPer, n);

    const std::string kernel = op.kernelName + "_kernel";
    const std::string ct(dtypeCType(dt));
    const std::string helper = fmt::format("__device__ __forceinline__ float {}_op(float v) {{ return {}; }}\n\n", op.kernelName, op.cuda);
    const std::string params = fmt::format("const {0}* __restrict__ {1}, {0}* __restrict__ {2}", ct, io.in, io.out);
    const int block = pickBlock(rng);
    if (dt == Dtype::f32 && rng.chance(0.3)) {
      // Four elements per thread through 16-byte loads, and a scalar tail.
      const std::string source =
          helper + fmt::format(
                       "extern \"C\" __global__ void {0}({1}, long long n) {{\n"
                       "  const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
                       "  if (i + 3 < n) {{\n"
                       "    const float4 q = *reinterpret_cast<const float4*>({2} + i);\n"
                       "    *reinterpret_cast<float4*>({3} + i) = make_float4({4}_op(q.x), {4}_op(q.y), {4}_op(q.z), {4}_op(q.w));\n"
                       "  }} else {{\n"
                       "    for (long long j = i; j < n; ++j) {3}[j] = {4}_op({2}[j]);\n"
                       "  }}\n"
                       "}}\n",
                       kernel, params, io.in, io.out, op.kernelName);
      inst.implementation = fmt::format("float4 b{}", block);
      inst.response = renderResponse({{kernel,
                                       {fmt::format("ceil_div(ceil_div({}, 4), {})", n, block)},
                                       {std::to_string(block)},
                                       "",
                                       {io.in, io.out, fmt::format("{{size: {}, type: int64}}", n)}}},
                                     source);
      return inst;
    }
    const FlatStyle style = pickFlatStyle(rng);
    const std::string body =
        fmt::format("    {}[i] = {};\n", io.out, storeFromFloat(dt, fmt::format("{}_op({})", op.kernelName, loadAsFloat(dt, io.in + "[i]"))));
    inst.implementation = fmt::format("{} b{}", flatStyleName(style), block);
    inst.response = renderResponse(
        {{kernel, {flatGrid(style, n, block)}, {std::to_string(block)}, "", {io.in, io.out, fmt::format("{{size: {}, type: int64}}", n)}}},
        helper + flatKernel(kernel, params, body, style));
    return inst;
  }

 private:
  std::vector<UnaryOp> ops_;
};

struct BinaryOp {
  std::string id;
  std::string phrase;
  std::string cuda;     // of va, vb
  std::string torch;    // of A, B
  std::string formula;  // for the description, of A, B
};

const std::vector<BinaryOp> kBinaryOps = {
    {"add", "sum", "va + vb", "A + B", "A + B"},
    {"sub", "difference", "va - vb", "A - B", "A - B"},
    {"mul", "product", "va * vb", "A * B", "A * B"},
    {"max", "maximum", "fmaxf(va, vb)", "torch.maximum(A, B)", "max(A, B)"},
    {"min", "minimum", "fminf(va, vb)", "torch.minimum(A, B)", "min(A, B)"},
};

enum class Broadcast { same, row, column };
const std::vector<Broadcast> kBroadcasts = {Broadcast::same, Broadcast::row, Broadcast::column};
std::string_view broadcastName(Broadcast b) { return b == Broadcast::same ? "same" : b == Broadcast::row ? "row" : "col"; }

class BinaryFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "binary"; }
  std::string_view summary() const override { return "elementwise binary ops, same shape or broadcasting a row / column vector"; }
  std::size_t variantCount() const override { return kBinaryOps.size() * kBroadcasts.size() * kAllDtypes.size(); }
  std::string variantKey(std::size_t v) const override {
    const auto [op, bc, dt] = split(v);
    return fmt::format("binary/{}/{}/{}", op.id, broadcastName(bc), dtypeShort(dt));
  }

  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const auto [op, bc, dt] = split(v);
    SynthInstance inst = startInstance("binary", variantKey(v), problemName, {"elementwise", "broadcast"});
    SynthProblem& p = inst.problem;
    static const std::vector<std::vector<std::string>> names = {{"a", "b", "c"}, {"x", "y", "out"}, {"lhs", "rhs", "out"}, {"p", "q", "r"}};
    const auto& nm = rng.pick(names);
    p.small = {{"M", smallRows(rng)}, {"N", smallCols(rng)}};
    p.full = {{"M", 16384}, {"N", 16385}};
    std::vector<std::string> bShape = {"M", "N"};
    std::string bIndex = "i";
    std::string bRef = nm[1];
    std::string how = fmt::format("{}[M, N] and {}[M, N]", nm[0], nm[1]);
    if (bc == Broadcast::row) {
      bShape = {"N"};
      bIndex = "i % N";
      how = fmt::format("{}[M, N] and a row vector {}[N] broadcast over the rows", nm[0], nm[1]);
    } else if (bc == Broadcast::column) {
      bShape = {"M"};
      bIndex = "i / N";
      bRef = nm[1] + ".unsqueeze(1)";
      how = fmt::format("{}[M, N] and a column vector {}[M] broadcast over the columns", nm[0], nm[1]);
    }
    p.description = fmt::format("Elementwise {} ({}) of {} tensors {}: {} = {}.", op.id, op.phrase, dtypeName(dt), how, nm[2],
                                replaceAll(replaceAll(op.formula, "A", nm[0]), "B", nm[1]));
    p.inputs = {{nm[0], dt, {"M", "N"}, ""}, {nm[1], dt, bShape, ""}};
    p.outputs = {{nm[2], dt, {"M", "N"}, ""}};
    p.reference = fmt::format("def forward({}: Tensor, {}: Tensor) -> Tensor:\n    return {}", nm[0], nm[1],
                              replaceAll(replaceAll(op.torch, "A", nm[0]), "B", bRef));
    setTolerance(p, dt, 1);
    p.flops = "M*N";
    p.bytes = fmt::format("{}*M*N", dt == Dtype::f32 ? 12 : 6);

    const std::string kernel = fmt::format("{}_{}", op.id, bc == Broadcast::same ? "kernel" : "broadcast");
    const std::string ct(dtypeCType(dt));
    const bool needsN = bc != Broadcast::same;
    const std::string params = fmt::format("const {0}* __restrict__ {1}, const {0}* __restrict__ {2}, {0}* __restrict__ {3}{4}", ct, nm[0], nm[1],
                                           nm[2], needsN ? ", int N" : "");
    const std::string body = fmt::format("    const float va = {};\n    const float vb = {};\n    {}[i] = {};\n", loadAsFloat(dt, nm[0] + "[i]"),
                                         loadAsFloat(dt, fmt::format("{}[{}]", nm[1], bIndex)), nm[2], storeFromFloat(dt, op.cuda));
    const FlatStyle style = pickFlatStyle(rng);
    const int block = pickBlock(rng);
    std::vector<std::string> args = {nm[0], nm[1], nm[2]};
    if (needsN) args.push_back("N");
    args.push_back("{size: M*N, type: int64}");
    inst.implementation = fmt::format("{} b{}", flatStyleName(style), block);
    inst.response =
        renderResponse({{kernel, {flatGrid(style, "M*N", block)}, {std::to_string(block)}, "", args}}, flatKernel(kernel, params, body, style));
    return inst;
  }

 private:
  static std::tuple<const BinaryOp&, Broadcast, Dtype> split(std::size_t v) {
    const std::size_t d = v % kAllDtypes.size();
    const std::size_t b = (v / kAllDtypes.size()) % kBroadcasts.size();
    const std::size_t o = v / (kAllDtypes.size() * kBroadcasts.size());
    return {kBinaryOps[o], kBroadcasts[b], kAllDtypes[d]};
  }
};

}  // namespace

std::unique_ptr<OpFamily> makeUnaryFamily() { return std::make_unique<UnaryFamily>(); }
std::unique_ptr<OpFamily> makeBinaryFamily() { return std::make_unique<BinaryFamily>(); }

}  // namespace cuset::synth
