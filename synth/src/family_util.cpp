#include "family_util.hpp"

#include <fmt/format.h>
#include <cstdint>

namespace cuset::synth::detail {

SynthInstance startInstance(std::string family, std::string key, std::string problemName, std::vector<std::string> tags) {
  SynthInstance inst{.family = std::move(family), .key = std::move(key)};
  inst.problem.name = std::move(problemName);
  tags.emplace_back("synth");
  inst.problem.tags = std::move(tags);
  return inst;
}

void setTolerance(SynthProblem& p, Dtype out, int reduceLength) {
  switch (out) {
    case Dtype::f16:
      p.atol = 1e-3;
      p.rtol = 1e-2;
      p.toleranceWhy = "float16 output: one rounding step of the result (2^-11 relative) plus float math.";
      break;
    case Dtype::bf16:
      p.atol = 1e-2;
      p.rtol = 2e-2;
      p.toleranceWhy = "bfloat16 output: one rounding step of the result (2^-8 relative) plus float math.";
      break;
    default:
      if (reduceLength > 1) {
        p.atol = 1e-4;
        p.rtol = 1e-4;
        p.toleranceWhy = fmt::format("float32 with reductions over up to {} terms in another order than the reference.", reduceLength);
      } else {
        p.atol = 1e-5;
        p.rtol = 1e-5;
        p.toleranceWhy = "float32 elementwise: a few ulp of device math functions.";
      }
  }
}

IoNames pickUnaryNames(SynthRng& rng) {
  static const std::vector<IoNames> names = {{"x", "y"}, {"x", "out"}, {"input", "output"}, {"a", "b"}, {"src", "dst"}, {"inp", "res"}};
  return rng.pick(names);
}

std::int64_t smallRows(SynthRng& rng) { return rng.between(3, 40); }
std::int64_t smallCols(SynthRng& rng) { return rng.between(33, 600) | 1; }

FlatStyle pickFlatStyle(SynthRng& rng) { return rng.chance(0.5) ? FlatStyle::guarded : FlatStyle::gridStride; }
std::string flatStyleName(FlatStyle s) { return s == FlatStyle::guarded ? "guarded" : "grid-stride"; }

int pickBlock(SynthRng& rng) {
  static const std::vector<int> blocks = {128, 256, 256, 512};
  return rng.pick(blocks);
}

std::string flatGrid(FlatStyle s, const std::string& n, int block) {
  if (s == FlatStyle::guarded) return fmt::format("ceil_div({}, {})", n, block);
  return fmt::format("min(ceil_div({}, {}), 4096)", n, block);
}

std::string flatKernel(const std::string& kernel, const std::string& params, const std::string& body, FlatStyle s) {
  if (s == FlatStyle::guarded) {
    return fmt::format(
        "extern \"C\" __global__ void {}({}, long long n) {{\n"
        "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {{\n{}  }}\n}}\n",
        kernel, params, body);
  }
  return fmt::format(
      "extern \"C\" __global__ void {}({}, long long n) {{\n"
      "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{\n{}  }}\n}}\n",
      kernel, params, body);
}

std::string combineExpr(const std::string& combine, const std::string& a, const std::string& b) {
  if (combine == "max") return fmt::format("fmaxf({}, {})", a, b);
  if (combine == "min") return fmt::format("fminf({}, {})", a, b);
  return fmt::format("{} + {}", a, b);
}

std::string combineIdentity(const std::string& combine) {
  if (combine == "max") return "-INFINITY";
  if (combine == "min") return "INFINITY";
  return "0.0f";
}

std::string blockReduceHelper(const std::string& combine, int maxThreads) {
  return fmt::format(
      "// Tree reduction in shared memory; every thread gets the result.\n"
      "__device__ float block_{0}(float v) {{\n"
      "  __shared__ float buf[{1}];\n"
      "  buf[threadIdx.x] = v;\n"
      "  __syncthreads();\n"
      "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {{\n"
      "    if (threadIdx.x < s) buf[threadIdx.x] = {2};\n"
      "    __syncthreads();\n"
      "  }}\n"
      "  const float r = buf[0];\n"
      "  __syncthreads();\n"
      "  return r;\n"
      "}}\n\n",
      combine, maxThreads, combineExpr(combine, "buf[threadIdx.x]", "buf[threadIdx.x + s]"));
}

std::string warpReduceHelper(const std::string& combine) {
  return fmt::format(
      "// Butterfly shuffles: every lane of the warp gets the result.\n"
      "__device__ float warp_{0}(float v) {{\n"
      "  for (int o = 16; o > 0; o >>= 1) v = {1};\n"
      "  return v;\n"
      "}}\n\n",
      combine, combineExpr(combine, "v", "__shfl_xor_sync(0xffffffffu, v, o)"));
}

}  // namespace cuset::synth::detail
