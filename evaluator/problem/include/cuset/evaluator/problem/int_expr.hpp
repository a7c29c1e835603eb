#pragma once
// Integer expressions over named sizes, as used in problem shapes, cost formulas and launch
// manifests (DESIGN §2-§3): + - * / % (C semantics, truncating), unary minus, parentheses,
// ceil_div(a, b), min(a, b, ...), max(a, b, ...). Evaluation is in int64 and reports overflow and
// division by zero instead of producing garbage launch geometry.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset {

using SizeBindings = std::map<std::string, std::int64_t, std::less<>>;

class IntExpr {
 public:
  // Parses `text`; the error message points at the offending character.
  static Expected<IntExpr> parse(std::string_view text);
  // Convenience for trusted literals in code and tests: throws cuset::Error on a syntax error.
  static IntExpr parseOrThrow(std::string_view text);
  static IntExpr constant(std::int64_t value);

  Expected<std::int64_t> evaluate(const SizeBindings& sizes) const;
  const std::string& text() const { return text_; }
  // Every size name the expression refers to (sorted, unique).
  std::vector<std::string> names() const;

  struct Node {
    enum class Kind { literal, name, negate, binary, call } kind = Kind::literal;
    std::int64_t value = 0;
    std::string name;           // size name, or function name for calls
    char op = 0;                // for binary: + - * / %
    std::vector<int> children;  // indices into nodes_
  };

 private:
  Expected<std::int64_t> evaluateNode(int index, const SizeBindings& sizes) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
  friend class IntExprParser;
};

}  // namespace cuset
