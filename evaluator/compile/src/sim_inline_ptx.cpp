#include "cuset/evaluator/compile/sim_inline_ptx.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "cuset_sim/ptx.hpp"
#include "source_scan.hpp"

namespace cuset {
namespace {

using detail::lineAt;

std::size_t skipSpace(std::string_view s, std::size_t i) {
  for (;;) {
    while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) || (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n'))) ++i;
    if (i < s.size() && (s.compare(i, 2, "//") == 0 || s.compare(i, 2, "/*") == 0)) {
      i = skipCommentOrLiteral(s, i);
      continue;
    }
    return i;
  }
}

// Decodes the string literal at `i` (which is a '"'), advancing i past it.
std::optional<std::string> stringLiteral(std::string_view s, std::size_t& i) {
  if (i >= s.size() || s[i] != '"') return std::nullopt;
  std::string out;
  for (++i; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] == '\n') return std::nullopt;
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i >= s.size()) return std::nullopt;
    const char c = s[i];
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '\n':
        break;  // a line continuation inside the literal
      case 'x': {
        int v = 0, digits = 0;
        while (i + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) && digits < 2) {
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(s[i + 1])) ? s[i + 1] - '0' : std::tolower(s[i + 1]) - 'a' + 10);
          ++i, ++digits;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0', digits = 1;
          while (i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' && digits < 3) v = v * 8 + (s[++i] - '0'), ++digits;
          out += static_cast<char>(v);
        } else {
          out += c;  // \" \\ \' \?
        }
    }
  }
  if (i >= s.size()) return std::nullopt;
  ++i;
  return out;
}

// Concatenated literals ("a" "b"), or nullopt when something else (a macro) is in between.
std::optional<std::string> literals(std::string_view s, std::size_t& i) {
  std::string all;
  bool any = false;
  for (i = skipSpace(s, i); i < s.size() && s[i] == '"'; i = skipSpace(s, i)) {
    auto part = stringLiteral(s, i);
    if (!part) return std::nullopt;
    all += *part;
    any = true;
  }
  if (!any) return std::nullopt;
  return all;
}

struct Constraint {
  bool output = false, readWrite = false;
  int tiedTo = -1;
  char kind = 0;
};

std::optional<Constraint> constraint(std::string_view c) {
  Constraint k;
  for (char ch : c) {
    if (ch == '=')
      k.output = true;
    else if (ch == '+')
      k.output = k.readWrite = true;
    else if (ch == '&')
      continue;
    else if (std::isdigit(static_cast<unsigned char>(ch))) {
      k.tiedTo = k.tiedTo < 0 ? ch - '0' : k.tiedTo * 10 + (ch - '0');
      if (k.tiedTo > 99) return std::nullopt;  // asm statements have at most 30 operands
    } else if (std::string_view("rlhfdnic").find(ch) != std::string_view::npos)
      k.kind = ch;
    else
      return std::nullopt;
  }
  if (k.kind == 0 && k.tiedTo < 0) return std::nullopt;
  return k;
}

struct AsmOperand {
  std::optional<Constraint> constraint;  // nullopt: one the simulator cannot bind
  std::string expression;
};

struct AsmStatement {
  std::size_t begin = 0, end = 0;  // [begin, end): from the keyword to the closing parenthesis
  std::string text;
  bool extended = false;
  std::vector<AsmOperand> outputs, inputs;
};

// The balanced-parenthesis expression at `i` (a '('), without its parentheses.
std::optional<std::string> parenthesised(std::string_view s, std::size_t& i) {
  if (i >= s.size() || s[i] != '(') return std::nullopt;
  const std::size_t start = i + 1;
  int depth = 0;
  while (i < s.size()) {
    const std::size_t next = skipCommentOrLiteral(s, i);
    if (next != i) {
      i = next;
      continue;
    }
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) {
      ++i;
      return std::string(s.substr(start, i - 1 - start));
    }
    ++i;
  }
  return std::nullopt;
}

std::optional<std::vector<AsmOperand>> operandList(std::string_view s, std::size_t& i) {
  std::vector<AsmOperand> list;
  i = skipSpace(s, i);
  while (i < s.size() && s[i] != ':' && s[i] != ')') {
    if (s[i] == '[') {
      const std::size_t close = s.find(']', i);
      if (close == std::string_view::npos) return std::nullopt;
      i = skipSpace(s, close + 1);
    }
    AsmOperand op;
    auto c = literals(s, i);
    if (!c) return std::nullopt;
    op.constraint = constraint(*c);
    i = skipSpace(s, i);
    auto e = parenthesised(s, i);
    if (!e) return std::nullopt;
    op.expression = *e;
    list.push_back(std::move(op));
    i = skipSpace(s, i);
    if (i < s.size() && s[i] == ',') i = skipSpace(s, i + 1);
  }
  return list;
}

// The asm statement whose keyword ends at `i`; nullopt if it is not one this rewriter can read (the
// host compiler then sees it as written).
std::optional<AsmStatement> asmStatement(std::string_view s, std::size_t begin, std::size_t i) {
  AsmStatement st;
  st.begin = begin;
  for (i = skipSpace(s, i); i < s.size() && isCppIdentifierChar(s[i]); i = skipSpace(s, i)) {
    std::size_t j = i;
    while (j < s.size() && isCppIdentifierChar(s[j])) ++j;
    const std::string_view q = s.substr(i, j - i);
    if (q != "volatile" && q != "__volatile__" && q != "__volatile" && q != "inline") return std::nullopt;  // asm goto: labels
    i = j;
  }
  if (i >= s.size() || s[i] != '(') return std::nullopt;
  ++i;
  auto text = literals(s, i);
  if (!text) return std::nullopt;
  st.text = *text;
  for (int section = 0; i < s.size() && s[i] == ':'; ++section) {
    st.extended = true;
    ++i;
    if (section == 2) {  // clobbers: strings only
      i = skipSpace(s, i);
      while (i < s.size() && s[i] == '"') {
        if (!stringLiteral(s, i)) return std::nullopt;
        i = skipSpace(s, i);
        if (i < s.size() && s[i] == ',') i = skipSpace(s, i + 1);
      }
      continue;
    }
    if (section > 2) return std::nullopt;
    auto list = operandList(s, i);
    if (!list) return std::nullopt;
    (section == 0 ? st.outputs : st.inputs) = std::move(*list);
  }
  i = skipSpace(s, i);
  if (i >= s.size() || s[i] != ')') return std::nullopt;
  st.end = i + 1;
  return st;
}

std::string cString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?' || c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\{:03o}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// One line of C++ for the statement (plus the statement's own line breaks, so that line numbers after
// it do not move).
std::string replacement(const AsmStatement& st, int registers, std::string_view original) {
  const int operands = static_cast<int>(st.outputs.size() + st.inputs.size());
  std::string code = fmt::format("do {{ ::std::uint64_t __cuset_r[{}] = {{}}; ", std::max(1, registers));
  for (std::size_t k = 0; k < st.outputs.size(); ++k) {
    if (st.outputs[k].constraint->readWrite) code += fmt::format("__cuset_r[{}] = ::cuset_sim::ptx_in({}); ", k, st.outputs[k].expression);
  }
  for (std::size_t k = 0; k < st.inputs.size(); ++k) {
    const std::size_t slot = st.outputs.size() + k;
    code += fmt::format("__cuset_r[{}] = ::cuset_sim::ptx_in({}); ", slot, st.inputs[k].expression);
    if (const int tied = st.inputs[k].constraint->tiedTo; tied >= 0) code += fmt::format("__cuset_r[{}] = __cuset_r[{}]; ", tied, slot);
  }
  code += fmt::format("::cuset_sim::ptx_run({}, {}, {}, __LINE__, __cuset_r); ", cString(st.text), operands, st.extended ? 1 : 0);
  for (std::size_t k = 0; k < st.outputs.size(); ++k) code += fmt::format("::cuset_sim::ptx_out({}, __cuset_r[{}]); ", st.outputs[k].expression, k);
  code += "} while (0)";
  // The expressions were copied onto one line: drop their own line breaks (and continuations), then
  // restore as many.
  for (std::size_t at; (at = code.find("\\\n")) != std::string::npos;) code.replace(at, 2, " ");
  std::replace(code.begin(), code.end(), '\n', ' ');
  for (std::size_t i = 0; i < original.size(); ++i) {
    if (original[i] == '\n') code += (i > 0 && original[i - 1] == '\\') ? "\\\n" : "\n";
  }
  return code;
}

}  // namespace

InlinePtxRewrite rewriteInlinePtx(std::string_view source) {
  InlinePtxRewrite out;
  std::size_t last = 0;
  int depth = 0;
  bool inDefine = false;  // within a #define: its asm statements run wherever the macro is used
  bool lineStart = true;
  for (std::size_t i = 0; i < source.size();) {
    if (const std::size_t next = skipCommentOrLiteral(source, i); next != i) {
      i = next;
      continue;
    }
    const char c = source[i];
    if (c == '\n') {
      if (i == 0 || source[i - 1] != '\\') inDefine = false;
      lineStart = true;
      ++i;
      continue;
    }
    if (lineStart && c == '#') {
      const std::size_t word = skipSpace(source.substr(0, source.find('\n', i)), i + 1);
      inDefine = source.compare(word, 6, "define") == 0;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) lineStart = false;
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (!isCppIdentifierChar(c) || (i > 0 && isCppIdentifierChar(source[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < source.size() && isCppIdentifierChar(source[j])) ++j;
    const std::string_view word = source.substr(i, j - i);
    // Only statements in function bodies: asm at namespace scope is assembler text for the library.
    if ((depth > 0 || inDefine) && (word == "asm" || word == "__asm" || word == "__asm__")) {
      if (auto st = asmStatement(source, i, j)) {
        const int operands = static_cast<int>(st->outputs.size() + st->inputs.size());
        bool readable = true;
        for (const auto& o : st->outputs) readable = readable && o.constraint.has_value();
        for (const auto& o : st->inputs) {  // a tied input ("0") names an output
          readable = readable && o.constraint.has_value() && o.constraint->tiedTo < static_cast<int>(st->outputs.size());
        }
        const cuset_sim::PtxCheck check = cuset_sim::ptx_check(st->text, operands, st->extended);
        if (check.kind == cuset_sim::PtxCheck::Kind::unsupported || (check.kind == cuset_sim::PtxCheck::Kind::simulated && !readable)) {
          if (out.unsupported.empty()) {
            out.unsupported =
                fmt::format("line {}: {}", lineAt(source, i), readable ? check.message : "an asm operand constraint other than r, l, h, f, d, n");
          }
        } else if (check.kind == cuset_sim::PtxCheck::Kind::simulated) {
          out.source.append(source, last, i - last);
          out.source += replacement(*st, check.registers, source.substr(st->begin, st->end - st->begin));
          last = st->end;
          out.collectives = out.collectives || check.collectives;
          ++out.rewritten;
          i = st->end;
          continue;
        }
      }
    }
    i = j;
  }
  out.source.append(source, last, std::string_view::npos);
  return out;
}

}  // namespace cuset
