#pragma once
// CUDA sensitivity (DESIGN §5, step 1): which character spans of a response are execution-constraint
// code. The lexer is a small hand-written scanner (comments and string/char literals are skipped and
// never sensitive) plus a light dataflow over assignments that follows values derived from the
// thread/block built-ins into the guards and grid-stride loops that use them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset {

enum class SensitivityCategory {
  builtin,       // threadIdx, blockIdx, blockDim, gridDim, warpSize
  qualifier,     // __global__, __device__, __shared__, __constant__, __restrict__, ...
  launchBounds,  // __launch_bounds__(...)
  sync,          // __syncthreads*, __syncwarp, __threadfence*, cooperative-groups sync
  warp,          // shuffles, votes, match, warp reductions, __activemask
  atomic,        // atomicAdd, atomicCAS, ... (and _block/_system variants)
  memory,        // __ldg and cache-hinted loads/stores, vector types, async copies
  fastmath,      // __expf, __fdividef, rsqrtf, half/bfloat16 arithmetic and conversion intrinsics
  launch,        // <<<...>>> and dim3
  index,         // index and bounds expressions derived from the built-ins
};
inline constexpr SensitivityCategory kAllSensitivityCategories[] = {
    SensitivityCategory::builtin, SensitivityCategory::qualifier, SensitivityCategory::launchBounds, SensitivityCategory::sync,
    SensitivityCategory::warp,    SensitivityCategory::atomic,    SensitivityCategory::memory,       SensitivityCategory::fastmath,
    SensitivityCategory::launch,  SensitivityCategory::index};

std::string_view sensitivityCategoryName(SensitivityCategory category);  // "builtin", "launch_bounds", ...
std::optional<SensitivityCategory> parseSensitivityCategory(std::string_view name);

struct SensitiveSpan {
  std::size_t start = 0, end = 0;  // byte offsets [start, end) into the text
  SensitivityCategory category = SensitivityCategory::builtin;
  bool operator==(const SensitiveSpan&) const = default;
};

class SensitivityLexer {
 public:
  // Every sensitive span, sorted by start then category. Spans of different categories may overlap
  // (a built-in inside an index expression is both).
  std::vector<SensitiveSpan> analyze(std::string_view code) const;
  // For chat text: only the fenced code blocks (```...```) are lexed when there are any, so prose
  // ("y = x * 0.5 ...") is never mistaken for code; text without fences is lexed whole.
  std::vector<SensitiveSpan> analyzeMarkdown(std::string_view text) const;
};

// Per token: whether its byte span [begin, end) overlaps any sensitive span (DESIGN §5: σ_t = 1).
std::vector<bool> sensitiveTokenFlags(const std::vector<std::pair<std::size_t, std::size_t>>& tokenSpans, const std::vector<SensitiveSpan>& spans);

}  // namespace cuset
