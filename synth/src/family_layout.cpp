// Families with 2-D thread grids: transposes (naive or through a padded shared-memory tile) and small
// matrix multiplications with epilogues (naive or 16x16 shared-memory tiles).
#include <fmt/format.h>

#include "cuset/synth/op_family.hpp"
#include "family_util.hpp"

namespace cuset::synth {
namespace {

using namespace detail;

struct TransposeOp {
  std::string id, phrase, cuda, torch;  // cuda of v, torch of T (the transposed tensor)
};

const std::vector<TransposeOp> kTransposeOps = {
    {"copy", "the transpose", "v", "T"},
    {"scale_2", "the transpose scaled by 2", "2.0f * v", "T * 2.0"},
    {"scale_0.5", "the transpose scaled by 0.5", "0.5f * v", "T * 0.5"},
    {"relu", "ReLU of the transpose", "fmaxf(v, 0.0f)", "torch.relu(T)"},
};
const std::vector<Dtype> kTransposeDtypes = {Dtype::f32, Dtype::f16};

class TransposeFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "transpose"; }
  std::string_view summary() const override { return "2-D transposes with an elementwise epilogue (naive or shared-memory tiled)"; }
  std::size_t variantCount() const override { return kTransposeOps.size() * kTransposeDtypes.size(); }
  std::string variantKey(std::size_t v) const override {
    return fmt::format("transpose/{}/{}", kTransposeOps[v / kTransposeDtypes.size()].id, dtypeShort(kTransposeDtypes[v % kTransposeDtypes.size()]));
  }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const TransposeOp& op = kTransposeOps[v / kTransposeDtypes.size()];
    const Dtype dt = kTransposeDtypes[v % kTransposeDtypes.size()];
    SynthInstance inst = startInstance("transpose", variantKey(v), problemName, {"layout", "transpose"});
    SynthProblem& p = inst.problem;
    const IoNames io = pickUnaryNames(rng);
    p.small = {{"M", rng.between(17, 120) | 1}, {"N", rng.between(17, 200) | 1}};
    p.full = {{"M", 16384}, {"N", 16385}};
    p.description = fmt::format("{} of a {} matrix {}[M, N]: {}[N, M] with {}[j, i] = f({}[i, j]), f being {}.", op.phrase, dtypeName(dt), io.in,
                                io.out, io.out, io.in, op.id == "copy" ? "the identity" : op.phrase.substr(0, op.phrase.find(" of")));
    p.inputs = {{io.in, dt, {"M", "N"}, ""}};
    p.outputs = {{io.out, dt, {"N", "M"}, ""}};
    std::string expr = op.torch;
    expr.replace(expr.find('T'), 1, fmt::format("torch.transpose({}, 0, 1)", io.in));
    p.reference = fmt::format("def forward({}: Tensor) -> Tensor:\n    return ({}).contiguous()", io.in, expr);
    setTolerance(p, dt, 1);
    p.flops = "M*N";
    p.bytes = fmt::format("{}*M*N", dt == Dtype::f32 ? 8 : 4);

    const std::string ct(dtypeCType(dt));
    const std::string kernel = op.id == "copy" ? "transpose_kernel" : "transpose_map";
    const std::string params = fmt::format("const {0}* __restrict__ {1}, {0}* __restrict__ {2}, int M, int N", ct, io.in, io.out);
    const std::string helper = fmt::format("__device__ __forceinline__ float map_op(float v) {{ return {}; }}\n\n", op.cuda);
    std::string source;
    SynthLaunch launch{kernel, {}, {}, "", {io.in, io.out, "M", "N"}};
    if (rng.chance(0.5)) {
      const bool square = rng.chance(0.5);
      const int bx = square ? 16 : 32, by = square ? 16 : 8;
      launch.grid = {fmt::format("ceil_div(N, {})", bx), fmt::format("ceil_div(M, {})", by)};
      launch.block = {std::to_string(bx), std::to_string(by)};
      inst.implementation = fmt::format("naive {}x{}", bx, by);
      source = helper + fmt::format(
                            "extern \"C\" __global__ void {0}({1}) {{\n"
                            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  const int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
                            "  if (i < M && j < N) {3}[(long long)j * M + i] = {4};\n"
                            "}}\n",
                            kernel, params, io.in, io.out,
                            storeFromFloat(dt, fmt::format("map_op({})", loadAsFloat(dt, fmt::format("{}[(long long)i * N + j]", io.in)))));
    } else {
      launch.grid = {"ceil_div(N, 32)", "ceil_div(M, 32)"};
      launch.block = {"32", "8"};
      inst.implementation = "tiled 32x32";
      source = helper + fmt::format(
                            "// Read rows into a padded tile and write it out by columns, so both global accesses coalesce\n"
                            "// and the column reads of the tile avoid bank conflicts.\n"
                            "extern \"C\" __global__ void {0}({1}) {{\n"
                            "  __shared__ float tile[32][33];\n"
                            "  const int bx = blockIdx.x * 32;\n"
                            "  const int by = blockIdx.y * 32;\n"
                            "  for (int k = threadIdx.y; k < 32; k += 8) {{\n"
                            "    const int i = by + k;\n"
                            "    const int j = bx + threadIdx.x;\n"
                            "    if (i < M && j < N) tile[k][threadIdx.x] = {4};\n"
                            "  }}\n"
                            "  __syncthreads();\n"
                            "  for (int k = threadIdx.y; k < 32; k += 8) {{\n"
                            "    const int j = bx + k;\n"
                            "    const int i = by + threadIdx.x;\n"
                            "    if (j < N && i < M) {3}[(long long)j * M + i] = {5};\n"
                            "  }}\n"
                            "}}\n",
                            kernel, params, io.in, io.out, loadAsFloat(dt, fmt::format("{}[(long long)i * N + j]", io.in)),
                            storeFromFloat(dt, "map_op(tile[threadIdx.x][k])"));
    }
    inst.response = renderResponse({launch}, source);
    return inst;
  }
};

struct Epilogue {
  std::string id, phrase, cuda, torch;  // torch of R
  bool bias;
};

const std::vector<Epilogue> kEpilogues = {
    {"plain", "", "", "R", false},
    {"bias", " plus a bias vector bias[N] added to every row", "acc += bias[col];\n", "R + bias", true},
    {"relu", " followed by ReLU", "acc = fmaxf(acc, 0.0f);\n", "torch.relu(R)", false},
    {"bias_relu", " plus a bias vector bias[N], followed by ReLU", "acc = fmaxf(acc + bias[col], 0.0f);\n", "torch.relu(R + bias)", true},
};

class MatmulFamily final : public OpFamily {
 public:
  std::string_view name() const override { return "matmul"; }
  std::string_view summary() const override { return "small float32 matrix products A @ B or A @ B^T with bias / ReLU epilogues"; }
  std::size_t variantCount() const override { return 2 * kEpilogues.size(); }
  std::string variantKey(std::size_t v) const override { return fmt::format("matmul/{}/{}/f32", v % 2 == 0 ? "nn" : "nt", kEpilogues[v / 2].id); }
  SynthInstance realize(std::size_t v, const std::string& problemName, SynthRng& rng) const override {
    const bool transposed = v % 2 == 1;
    const Epilogue& ep = kEpilogues[v / 2];
    SynthInstance inst = startInstance("matmul", variantKey(v), problemName, {"matmul"});
    SynthProblem& p = inst.problem;
    static const std::vector<std::vector<std::string>> names = {{"a", "b", "c"}, {"x", "w", "y"}, {"lhs", "rhs", "out"}};
    const auto& nm = rng.pick(names);
    p.small = {{"M", rng.between(9, 70)}, {"N", rng.between(9, 70)}, {"K", rng.between(8, 100)}};
    p.full = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
    const std::string bShape = transposed ? "[N, K]" : "[K, N]";
    p.description = fmt::format("Matrix product of float32 matrices {0}[M, K] and {1}{2}: {3}[M, N] = {0} @ {1}{4}{5} (epilogue: {6}).", nm[0], nm[1],
                                bShape, nm[2], transposed ? "^T" : "", ep.phrase, ep.id);
    p.inputs = {{nm[0], Dtype::f32, {"M", "K"}, ""},
                {nm[1], Dtype::f32, transposed ? std::vector<std::string>{"N", "K"} : std::vector<std::string>{"K", "N"}, ""}};
    std::string params = fmt::format("{}: Tensor, {}: Tensor", nm[0], nm[1]);
    if (ep.bias) {
      p.inputs.push_back({"bias", Dtype::f32, {"N"}, ""});
      params += ", bias: Tensor";
    }
    p.outputs = {{nm[2], Dtype::f32, {"M", "N"}, ""}};
    const std::string product =
        transposed ? fmt::format("torch.matmul({}, torch.transpose({}, 0, 1))", nm[0], nm[1]) : fmt::format("torch.matmul({}, {})", nm[0], nm[1]);
    std::string expr = ep.torch;
    expr.replace(expr.find('R'), 1, product);
    p.reference = fmt::format("def forward({}) -> Tensor:\n    return {}", params, expr);
    setTolerance(p, Dtype::f32, 100);
    p.flops = "2*M*N*K";
    p.bytes = "4*(M*K + K*N + M*N)";

    std::string kparams = fmt::format("const float* __restrict__ {}, const float* __restrict__ {}", nm[0], nm[1]);
    std::vector<std::string> args = {nm[0], nm[1]};
    if (ep.bias) kparams += ", const float* __restrict__ bias", args.push_back("bias");
    kparams += fmt::format(", float* __restrict__ {}, int M, int N, int K", nm[2]);
    args.insert(args.end(), {nm[2], "M", "N", "K"});
    const auto bAt = [&](const std::string& k, const std::string& col) {
      return transposed ? fmt::format("{}[(long long){} * K + {}]", nm[1], col, k) : fmt::format("{}[(long long){} * N + {}]", nm[1], k, col);
    };
    const std::string kernel = ep.id == "plain" ? "matmul_kernel" : fmt::format("matmul_{}", ep.id);
    std::string source;
    if (rng.chance(0.5)) {
      inst.implementation = "naive 16x16";
      source = fmt::format(
          "extern \"C\" __global__ void {0}({1}) {{\n"
          "  const int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "  const int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
          "  if (row >= M || col >= N) return;\n"
          "  float acc = 0.0f;\n"
          "  for (int k = 0; k < K; ++k) acc += {2}[(long long)row * K + k] * {3};\n"
          "  {4}"
          "  {5}[(long long)row * N + col] = acc;\n"
          "}}\n",
          kernel, kparams, nm[0], bAt("k", "col"), ep.cuda, nm[2]);
    } else {
      inst.implementation = "tiled 16x16";
      source = fmt::format(
          "// 16x16 tiles of both operands staged in shared memory: each global element is read once per tile.\n"
          "extern \"C\" __global__ void {0}({1}) {{\n"
          "  __shared__ float As[16][16];\n"
          "  __shared__ float Bs[16][16];\n"
          "  const int col = blockIdx.x * 16 + threadIdx.x;\n"
          "  const int row = blockIdx.y * 16 + threadIdx.y;\n"
          "  float acc = 0.0f;\n"
          "  for (int k0 = 0; k0 < K; k0 += 16) {{\n"
          "    const int ka = k0 + threadIdx.x;\n"
          "    const int kb = k0 + threadIdx.y;\n"
          "    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? {2}[(long long)row * K + ka] : 0.0f;\n"
          "    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? {3} : 0.0f;\n"
          "    __syncthreads();\n"
          "    for (int k = 0; k < 16; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n"
          "    __syncthreads();\n"
          "  }}\n"
          "  if (row < M && col < N) {{\n"
          "    {4}"
          "    {5}[(long long)row * N + col] = acc;\n"
          "  }}\n"
          "}}\n",
          kernel, kparams, nm[0], bAt("kb", "col"), ep.cuda, nm[2]);
    }
    inst.response = renderResponse({{kernel, {"ceil_div(N, 16)", "ceil_div(M, 16)"}, {"16", "16"}, "", args}}, source);
    return inst;
  }
};

}  // namespace

std::unique_ptr<OpFamily> makeTransposeFamily() { return std::make_unique<TransposeFamily>(); }
std::unique_ptr<OpFamily> makeMatmulFamily() { return std::make_unique<MatmulFamily>(); }

}  // namespace cuset::synth
