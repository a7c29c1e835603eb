#include "cuset/trainer/sensitivity_lexer.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "cuset/common/cpp_lexer.hpp"

namespace cuset {
namespace {

using Category = SensitivityCategory;

struct Token {
  enum class Kind { identifier, number, punct };
  Kind kind = Kind::punct;
  std::size_t start = 0, end = 0;
  std::string_view text;
};

// Code tokens only: comments, string and character literals and preprocessor lines are skipped, so
// nothing inside them can ever be marked.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  for (const CppToken& t : lexCpp(s)) {
    if (!t.code()) continue;
    const Token::Kind kind = t.kind == CppToken::Kind::identifier ? Token::Kind::identifier
                             : t.kind == CppToken::Kind::number   ? Token::Kind::number
                                                                  : Token::Kind::punct;
    out.push_back({kind, t.begin, t.end, t.text(s)});
  }
  return out;
}

// The CUDA names the lexer knows, by category (a later category wins for a name listed twice).
constexpr std::pair<Category, std::string_view> kKeywordTable[] = {
    {Category::builtin, "threadIdx blockIdx blockDim gridDim warpSize"},
    {Category::qualifier,
     "__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __noinline__ __managed__ __grid_constant__"},
    {Category::sync,
     "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp __threadfence __threadfence_block __threadfence_system "
     "__barrier_sync"},
    {Category::warp,
     "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __shfl __shfl_up __shfl_down __shfl_xor __ballot_sync __any_sync __all_sync "
     "__activemask __match_any_sync __match_all_sync __reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync "
     "__reduce_xor_sync tiled_partition thread_block_tile coalesced_threads __lanemask_lt __popc __ffs"},
    {Category::atomic, "atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd atomicOr atomicXor"},
    {Category::memory,
     "__ldg __ldcg __ldca __ldcs __ldlu __ldcv __stcg __stcs __stwb __stwt __prefetch_global_l2 memcpy_async __pipeline_memcpy_async "
     "__pipeline_commit __pipeline_wait_prior cp_async float2 float4 int2 int4 uint2 uint4 double2 half2 __half2 __nv_bfloat162 make_float2 "
     "make_float4 make_int2 make_int4 make_half2"},
    {Category::fastmath,
     "rsqrtf rsqrt __saturatef __fmaf_rn __fmul_rn __fadd_rn __frcp_rn __fsqrt_rn __fdiv_rn __fdividef __expf __exp10f __logf __log2f __log10f "
     "__sinf __cosf __tanf __sincosf __powf __float2half __float2half_rn __half2float __float2bfloat16 __float2bfloat16_rn __bfloat162float "
     "__float22half2_rn __half22float2 __float2int_rn __float2int_rz __float2uint_rn __int2float_rn __int_as_float __float_as_int __uint_as_float "
     "__float_as_uint __double_as_longlong __longlong_as_double __hadd __hsub __hmul __hdiv __hfma __hadd2 __hmul2 __hfma2 __hmax __hmin __habs "
     "__hneg hexp hlog hsqrt hrsqrt h2exp h2rsqrt __low2float __high2float __mul24 __umul24 __mulhi __clz __brev"},
    {Category::launch, "dim3"},
    {Category::launchBounds, "__launch_bounds__"},
};

const std::unordered_map<std::string_view, Category>& keywordCategories() {
  static const std::unordered_map<std::string_view, Category> kMap = [] {
    std::unordered_map<std::string_view, Category> m;
    for (const auto& [category, names] : kKeywordTable) {
      for (std::size_t from = 0; from < names.size();) {
        const std::size_t to = std::min(names.find(' ', from), names.size());
        m[names.substr(from, to - from)] = category;
        from = to + 1;
      }
    }
    return m;
  }();
  return kMap;
}

std::optional<Category> categoryOf(const std::vector<Token>& toks, std::size_t i) {
  const Token& t = toks[i];
  if (t.kind != Token::Kind::identifier) return std::nullopt;
  if (t.text.starts_with("atomic") && t.text.size() > 6) {
    for (std::string_view suffix : {"_block", "_system"}) {
      if (t.text.ends_with(suffix))
        return keywordCategories().count(t.text.substr(0, t.text.size() - suffix.size())) ? std::optional(Category::atomic) : std::nullopt;
    }
  }
  const auto it = keywordCategories().find(t.text);
  if (it != keywordCategories().end()) return it->second;
  // Cooperative groups: g.sync(), cg::sync(g), grid.sync(); cg::reduce is a warp-level collective.
  if (t.text == "sync" && i > 0 && (toks[i - 1].text == "." || toks[i - 1].text == "::") && i + 1 < toks.size() && toks[i + 1].text == "(") {
    return Category::sync;
  }
  if ((t.text == "reduce" || t.text == "shfl_down" || t.text == "shfl_xor" || t.text == "shfl" || t.text == "ballot" || t.text == "any" ||
       t.text == "all") &&
      i > 0 && (toks[i - 1].text == "::" || toks[i - 1].text == ".") && i + 1 < toks.size() && toks[i + 1].text == "(") {
    return Category::warp;
  }
  return std::nullopt;
}

// Index of the token closing the bracket opened at `open` ("(" or "[" or "{"), or toks.size().
std::size_t matching(const std::vector<Token>& toks, std::size_t open) {
  const std::string_view o = toks[open].text;
  const std::string_view c = o == "(" ? ")" : o == "[" ? "]" : "}";
  int depth = 0;
  for (std::size_t i = open; i < toks.size(); ++i) {
    if (toks[i].text == o)
      ++depth;
    else if (toks[i].text == c && --depth == 0)
      return i;
  }
  return toks.size();
}

bool isAssignment(std::string_view op) {
  return op == "=" || op == "+=" || op == "-=" || op == "*=" || op == "/=" || op == "%=" || op == "<<=" || op == ">>=";
}

class Analyzer {
 public:
  explicit Analyzer(std::string_view code) : toks_(tokenize(code)) {
    for (std::size_t i = 0; i < code.size(); ++i) {
      if (code[i] == '\n') lineStarts_.push_back(i + 1);
    }
  }

  std::vector<SensitiveSpan> run() {
    keywords();
    launches();
    dataflow();
    std::sort(spans_.begin(), spans_.end(),
              [](const SensitiveSpan& a, const SensitiveSpan& b) { return a.start != b.start ? a.start < b.start : a.category < b.category; });
    spans_.erase(std::unique(spans_.begin(), spans_.end()), spans_.end());
    return spans_;
  }

 private:
  void mark(std::size_t first, std::size_t last, Category c) {  // tokens [first, last]
    if (first > last || last >= toks_.size()) return;
    spans_.push_back({toks_[first].start, toks_[last].end, c});
  }

  void keywords() {
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      const auto c = categoryOf(toks_, i);
      if (!c) continue;
      if (*c == Category::launchBounds && i + 1 < toks_.size() && toks_[i + 1].text == "(") {
        mark(i, matching(toks_, i + 1), *c);  // the bounds are part of the constraint
        continue;
      }
      // A built-in with its component (threadIdx.x) is one span.
      if (*c == Category::builtin && i + 2 < toks_.size() && toks_[i + 1].text == "." && toks_[i + 2].kind == Token::Kind::identifier) {
        mark(i, i + 2, *c);
        continue;
      }
      mark(i, i, *c);
    }
  }

  void launches() {
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      if (toks_[i].text != "<<<") continue;
      for (std::size_t j = i + 1; j < toks_.size(); ++j) {
        if (toks_[j].text == ">>>") {
          mark(i, j, Category::launch);
          i = j;
          break;
        }
        if (toks_[j].text == ";") break;
      }
    }
  }

  // Whether tokens [first, last] use a built-in or a derived value. With `skipSubscripts`, uses inside
  // [...] do not count: `v = x[i]` loads data through an index, and data is not index arithmetic.
  bool mentionsDerived(std::size_t first, std::size_t last, bool skipSubscripts = false) const {
    int subscript = 0;
    for (std::size_t i = first; i <= last && i < toks_.size(); ++i) {
      if (toks_[i].text == "[") ++subscript;
      if (toks_[i].text == "]") --subscript;
      if (skipSubscripts && subscript > 0) continue;
      if (toks_[i].kind != Token::Kind::identifier) continue;
      if (i > 0 && (toks_[i - 1].text == "." || toks_[i - 1].text == "->")) continue;  // a member (v.y) is not the variable y
      if (derived_.count(std::string(toks_[i].text))) return true;
      if (categoryOf(toks_, i) == Category::builtin) return true;
    }
    return false;
  }

  // Variables computed from built-ins are "derived"; their definitions, and the conditions and
  // loop steps that use them, are index/bounds code. Two passes let later uses see every definition.
  void dataflow() {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 1; i + 1 < toks_.size(); ++i) {
        if (!isAssignment(toks_[i].text) || toks_[i - 1].kind != Token::Kind::identifier) continue;
        std::size_t end = i + 1;
        int depth = 0;
        while (end < toks_.size()) {
          const auto t = toks_[end].text;
          if (t == "(" || t == "[" || t == "{") ++depth;
          if (t == ")" || t == "]" || t == "}") {
            if (depth == 0) break;
            --depth;
          }
          if ((t == ";" || t == ",") && depth == 0) break;
          // A statement that reaches the next line outside brackets is prose, not code: stop there.
          if (depth == 0 && end > i + 1 && lineOf(toks_[end].start) != lineOf(toks_[end - 1].start)) break;
          ++end;
        }
        if (end == i + 1 || !mentionsDerived(i + 1, end - 1, true)) continue;
        derived_.insert(std::string(toks_[i - 1].text));
        if (pass == 1) mark(i + 1, end - 1, Category::index);
      }
    }
    for (std::size_t i = 0; i + 1 < toks_.size(); ++i) {
      const auto t = toks_[i].text;
      if ((t == "if" || t == "while") && toks_[i + 1].text == "(") {
        const std::size_t close = matching(toks_, i + 1);
        if (close < toks_.size() && mentionsDerived(i + 2, close - 1)) markConditions(i + 2, close - 1);
      } else if (t == "for" && toks_[i + 1].text == "(") {
        const std::size_t close = matching(toks_, i + 1);
        std::vector<std::size_t> semis;
        int depth = 0;
        for (std::size_t j = i + 2; j < close; ++j) {
          if (toks_[j].text == "(") ++depth;
          if (toks_[j].text == ")") --depth;
          if (toks_[j].text == ";" && depth == 0) semis.push_back(j);
        }
        if (semis.size() != 2) continue;
        // The bound (i < n) and the step (i += blockDim.x * gridDim.x) of a loop over derived indices.
        if (semis[1] > semis[0] + 1 && mentionsDerived(semis[0] + 1, semis[1] - 1)) markConditions(semis[0] + 1, semis[1] - 1);
        if (close > semis[1] + 1 && mentionsDerived(semis[1] + 1, close - 1)) mark(semis[1] + 1, close - 1, Category::index);
      }
    }
  }

  // Comparisons over derived values inside a condition: each `a OP b` joined by && / || separately,
  // so an unrelated clause (flag && i < n) stays unmarked.
  void markConditions(std::size_t first, std::size_t last) {
    std::size_t clause = first;
    int depth = 0;
    for (std::size_t j = first; j <= last + 1; ++j) {
      const bool atEnd = j == last + 1;
      if (!atEnd) {
        if (toks_[j].text == "(") ++depth;
        if (toks_[j].text == ")") --depth;
      }
      if (atEnd || (depth == 0 && (toks_[j].text == "&&" || toks_[j].text == "||"))) {
        if (j > clause && mentionsDerived(clause, j - 1)) mark(clause, j - 1, Category::index);
        clause = j + 1;
      }
    }
  }

  std::size_t lineOf(std::size_t offset) const {
    return static_cast<std::size_t>(std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset) - lineStarts_.begin());
  }

  std::vector<Token> toks_;
  std::vector<std::size_t> lineStarts_;
  std::set<std::string> derived_;
  std::vector<SensitiveSpan> spans_;
};

}  // namespace

std::string_view sensitivityCategoryName(SensitivityCategory category) {
  switch (category) {
    case Category::builtin:
      return "builtin";
    case Category::qualifier:
      return "qualifier";
    case Category::launchBounds:
      return "launch_bounds";
    case Category::sync:
      return "sync";
    case Category::warp:
      return "warp";
    case Category::atomic:
      return "atomic";
    case Category::memory:
      return "memory";
    case Category::fastmath:
      return "fastmath";
    case Category::launch:
      return "launch";
    case Category::index:
      return "index";
  }
  return "?";
}

std::optional<SensitivityCategory> parseSensitivityCategory(std::string_view name) {
  for (auto c : kAllSensitivityCategories) {
    if (sensitivityCategoryName(c) == name) return c;
  }
  return std::nullopt;
}

std::vector<SensitiveSpan> SensitivityLexer::analyze(std::string_view code) const { return Analyzer(code).run(); }

std::vector<SensitiveSpan> SensitivityLexer::analyzeMarkdown(std::string_view text) const {
  if (text.find("```") == std::string_view::npos) return analyze(text);
  std::vector<SensitiveSpan> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t fence = text.find("```", at);
    if (fence == std::string_view::npos) break;
    const std::size_t bodyStart = text.find('\n', fence);
    if (bodyStart == std::string_view::npos) break;
    std::size_t close = text.find("```", bodyStart + 1);
    if (close == std::string_view::npos) close = text.size();  // an unterminated fence (a truncated answer) runs to the end
    for (auto s : analyze(text.substr(bodyStart + 1, close - bodyStart - 1))) {
      s.start += bodyStart + 1;
      s.end += bodyStart + 1;
      out.push_back(s);
    }
    if (close >= text.size()) break;
    at = close + 3;
  }
  return out;
}

std::vector<bool> sensitiveTokenFlags(const std::vector<std::pair<std::size_t, std::size_t>>& tokenSpans, const std::vector<SensitiveSpan>& spans) {
  std::vector<bool> flags(tokenSpans.size(), false);
  for (std::size_t t = 0; t < tokenSpans.size(); ++t) {
    const auto [begin, end] = tokenSpans[t];
    for (const auto& s : spans) {
      if (s.start < end && begin < s.end) {
        flags[t] = true;
        break;
      }
    }
  }
  return flags;
}

}  // namespace cuset
