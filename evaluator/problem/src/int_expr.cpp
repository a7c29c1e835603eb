#include "cuset/evaluator/problem/int_expr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <set>

#include "cuset/common/error.hpp"

namespace cuset {

// Recursive-descent parser. Grammar:
//   expr  := term (('+' | '-') term)*
//   term  := unary (('*' | '/' | '%') unary)*
//   unary := '-' unary | '+' unary | primary
//   primary := INT | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
class IntExprParser {
 public:
  explicit IntExprParser(std::string_view text) : text_(text) {}

  Expected<IntExpr> run() {
    IntExpr e;
    e.text_ = std::string(text_);
    out_ = &e;
    const int root = parseExpr();
    skipSpace();
    if (error_.empty() && pos_ != text_.size()) setError("unexpected character");
    if (!error_.empty()) return Unexpected{error_};
    e.root_ = root;
    return e;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void setError(std::string_view what) {
    if (!error_.empty()) return;
    const std::string near = pos_ < text_.size() ? fmt::format(" '{}'", text_[pos_]) : std::string(" end of input");
    error_ = fmt::format("in expression '{}': {} at column {} (near{})", text_, what, pos_ + 1, near);
  }
  int add(IntExpr::Node node) {
    out_->nodes_.push_back(std::move(node));
    return static_cast<int>(out_->nodes_.size() - 1);
  }
  int binary(char op, int lhs, int rhs) {
    IntExpr::Node n;
    n.kind = IntExpr::Node::Kind::binary;
    n.op = op;
    n.children = {lhs, rhs};
    return add(std::move(n));
  }

  int parseExpr() {
    if (++depth_ > 64) {
      setError("expression nested too deeply");
      return -1;
    }
    int lhs = parseTerm();
    while (error_.empty()) {
      if (accept('+'))
        lhs = binary('+', lhs, parseTerm());
      else if (accept('-'))
        lhs = binary('-', lhs, parseTerm());
      else
        break;
    }
    --depth_;
    return lhs;
  }
  int parseTerm() {
    int lhs = parseUnary();
    while (error_.empty()) {
      if (accept('*'))
        lhs = binary('*', lhs, parseUnary());
      else if (accept('/'))
        lhs = binary('/', lhs, parseUnary());
      else if (accept('%'))
        lhs = binary('%', lhs, parseUnary());
      else
        break;
    }
    return lhs;
  }
  int parseUnary() {
    if (++depth_ > 64) {
      setError("expression nested too deeply");
      return -1;
    }
    int result = -1;
    if (accept('-')) {
      IntExpr::Node n;
      n.kind = IntExpr::Node::Kind::negate;
      n.children = {parseUnary()};
      result = add(std::move(n));
    } else if (accept('+')) {
      result = parseUnary();
    } else {
      result = parsePrimary();
    }
    --depth_;
    return result;
  }
  int parsePrimary() {
    skipSpace();
    if (pos_ >= text_.size()) {
      setError("expected a number, a size name or '('");
      return -1;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t value = 0;
      auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value);
      if (ec == std::errc::result_out_of_range) {
        setError("integer literal out of int64 range");
        return -1;
      }
      pos_ = static_cast<std::size_t>(end - text_.data());
      if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
        setError("only integer literals are allowed");
        return -1;
      }
      IntExpr::Node n;
      n.value = value;
      return add(std::move(n));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (accept('(')) return parseCall(std::move(name));
      IntExpr::Node n;
      n.kind = IntExpr::Node::Kind::name;
      n.name = std::move(name);
      return add(std::move(n));
    }
    if (accept('(')) {
      const int inner = parseExpr();
      if (!accept(')')) setError("expected ')'");
      return inner;
    }
    setError("expected a number, a size name or '('");
    return -1;
  }
  int parseCall(std::string name) {
    IntExpr::Node n;
    n.kind = IntExpr::Node::Kind::call;
    n.name = name;
    if (name != "ceil_div" && name != "min" && name != "max") {
      setError(fmt::format("unknown function '{}' (known: ceil_div, min, max)", name));
      return -1;
    }
    do {
      n.children.push_back(parseExpr());
    } while (error_.empty() && accept(','));
    if (!accept(')')) setError("expected ')' or ','");
    if (error_.empty() && name == "ceil_div" && n.children.size() != 2) setError("ceil_div takes exactly 2 arguments");
    if (error_.empty() && n.children.size() < 2) setError(fmt::format("{} takes at least 2 arguments", name));
    return add(std::move(n));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
  IntExpr* out_ = nullptr;
};

Expected<IntExpr> IntExpr::parse(std::string_view text) { return IntExprParser(text).run(); }

IntExpr IntExpr::parseOrThrow(std::string_view text) {
  auto e = parse(text);
  if (!e) throw Error(e.error());
  return std::move(e).value();
}

IntExpr IntExpr::constant(std::int64_t value) { return parseOrThrow(std::to_string(value)); }

std::vector<std::string> IntExpr::names() const {
  std::set<std::string> found;
  for (const auto& n : nodes_) {
    if (n.kind == Node::Kind::name) found.insert(n.name);
  }
  return {found.begin(), found.end()};
}

Expected<std::int64_t> IntExpr::evaluate(const SizeBindings& sizes) const {
  auto result = evaluateNode(root_, sizes);
  if (!result) return Unexpected{fmt::format("in expression '{}': {}", text_, result.error())};
  return result;
}

Expected<std::int64_t> IntExpr::evaluateNode(int index, const SizeBindings& sizes) const {
  const Node& n = nodes_.at(static_cast<std::size_t>(index));
  switch (n.kind) {
    case Node::Kind::literal:
      return n.value;
    case Node::Kind::name: {
      auto it = sizes.find(n.name);
      if (it == sizes.end()) {
        std::string known;
        for (const auto& [k, v] : sizes) known += fmt::format("{}{}", known.empty() ? "" : ", ", k);
        return Unexpected{fmt::format("unknown size name '{}' (known: {})", n.name, known.empty() ? "none" : known)};
      }
      return it->second;
    }
    case Node::Kind::negate: {
      auto v = evaluateNode(n.children[0], sizes);
      if (!v) return v;
      if (*v == INT64_MIN) return Unexpected{"integer overflow in negation"};
      return -*v;
    }
    case Node::Kind::binary: {
      auto a = evaluateNode(n.children[0], sizes);
      if (!a) return a;
      auto b = evaluateNode(n.children[1], sizes);
      if (!b) return b;
      std::int64_t r = 0;
      switch (n.op) {
        case '+':
          if (__builtin_add_overflow(*a, *b, &r)) return Unexpected{fmt::format("integer overflow in {} + {}", *a, *b)};
          return r;
        case '-':
          if (__builtin_sub_overflow(*a, *b, &r)) return Unexpected{fmt::format("integer overflow in {} - {}", *a, *b)};
          return r;
        case '*':
          if (__builtin_mul_overflow(*a, *b, &r)) return Unexpected{fmt::format("integer overflow in {} * {}", *a, *b)};
          return r;
        case '/':
        case '%':
          if (*b == 0) return Unexpected{fmt::format("division by zero in {} {} 0", *a, n.op)};
          if (*a == INT64_MIN && *b == -1) return Unexpected{"integer overflow in division"};
          return n.op == '/' ? *a / *b : *a % *b;
      }
      return Unexpected{"internal error: unknown operator"};
    }
    case Node::Kind::call: {
      std::vector<std::int64_t> args;
      for (int child : n.children) {
        auto v = evaluateNode(child, sizes);
        if (!v) return v;
        args.push_back(*v);
      }
      if (n.name == "min") return *std::min_element(args.begin(), args.end());
      if (n.name == "max") return *std::max_element(args.begin(), args.end());
      // ceil_div
      if (args[1] == 0) return Unexpected{fmt::format("division by zero in ceil_div({}, 0)", args[0])};
      if (args[0] < 0 || args[1] < 0) return Unexpected{fmt::format("ceil_div({}, {}) needs non-negative operands", args[0], args[1])};
      return args[0] / args[1] + (args[0] % args[1] != 0 ? 1 : 0);
    }
  }
  return Unexpected{"internal error: unknown node"};
}

}  // namespace cuset
