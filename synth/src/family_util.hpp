#pragma once
// Pieces the op families share: tensor names, size draws, tolerances and the kernel skeletons that
// several families reuse (flat elementwise loops, block and warp reductions).
#include <cstdint>
#include <string>
#include <vector>

#include "cuset/synth/synth_problem.hpp"
#include "cuset/synth/synth_rng.hpp"

namespace cuset::synth::detail {

// The start of every realisation: identity, problem name, and the family's tags plus "synth".
SynthInstance startInstance(std::string family, std::string key, std::string problemName, std::vector<std::string> tags);

// Tolerance for an output computed in float math and stored as `out`: float32 allows a few ulp of
// device intrinsics (and reductions over `reduceLength` terms), narrow types one rounding step.
void setTolerance(SynthProblem& p, Dtype out, int reduceLength);

// Tensor names come in families so a model learns to read them from the prompt, not to assume x/y.
struct IoNames {
  std::string in;
  std::string out;
};
IoNames pickUnaryNames(SynthRng& rng);

// Odd small sizes (tails show up on the simulator) and GPU-sized full ones.
std::int64_t smallRows(SynthRng& rng);
std::int64_t smallCols(SynthRng& rng);

enum class FlatStyle { guarded, gridStride };
FlatStyle pickFlatStyle(SynthRng& rng);
std::string flatStyleName(FlatStyle s);
int pickBlock(SynthRng& rng);  // 128, 256 or 512
// Grid for `n` elements with `block` threads per block in the given style.
std::string flatGrid(FlatStyle s, const std::string& n, int block);
// A kernel over flat index `i` < n; `body` is indented by the caller's convention (4 spaces).
std::string flatKernel(const std::string& kernel, const std::string& params, const std::string& body, FlatStyle s);

// Device helpers that reduce a float across a block (shared-memory tree, blockDim.x a power of two
// and at most `maxThreads`) or a warp (shuffles); `combine` is "sum", "max" or "min".
std::string blockReduceHelper(const std::string& combine, int maxThreads);
std::string warpReduceHelper(const std::string& combine);
std::string combineExpr(const std::string& combine, const std::string& a, const std::string& b);
std::string combineIdentity(const std::string& combine);

}  // namespace cuset::synth::detail
