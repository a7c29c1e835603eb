#include "cuset/common/cpp_lexer.hpp"

#include <array>
#include <cctype>
#include <string>

namespace cuset {
namespace {

bool identifierStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// A backslash, then blanks (GCC accepts them), then a newline: the index of that newline, or npos.
std::size_t spliceAt(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] != '\\') return std::string_view::npos;
  std::size_t j = i + 1;
  while (j < s.size() && blank(s[j])) ++j;
  return j < s.size() && s[j] == '\n' ? j : std::string_view::npos;
}

std::size_t lineCommentEnd(std::string_view s, std::size_t i) {
  while (i < s.size() && s[i] != '\n') {
    const std::size_t splice = spliceAt(s, i);
    i = splice != std::string_view::npos ? splice + 1 : i + 1;
  }
  return i;
}

std::size_t blockCommentEnd(std::string_view s, std::size_t i) {
  const std::size_t close = s.find("*/", i + 2);
  return close == std::string_view::npos ? s.size() : close + 2;
}

// A quoted literal from its opening quote at `i`: escapes honoured, ended by its quote or (unterminated)
// before the end of its line.
std::size_t quotedEnd(std::string_view s, std::size_t i) {
  const char quote = s[i++];
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += s[i] == '\\' && i + 1 < s.size() ? 2 : 1;
  return i < s.size() && s[i] == quote ? i + 1 : i;
}

// R"delim( ... )delim" from the quote at `i`; npos when what follows is no raw string's opening (a
// delimiter is at most 16 characters, none of them a space, a parenthesis or a backslash).
std::size_t rawEnd(std::string_view s, std::size_t i) {
  std::size_t open = i + 1;
  while (open < s.size() && open - i - 1 <= 16 && s[open] != '(') {
    if (blank(s[open]) || s[open] == '\n' || s[open] == ')' || s[open] == '\\' || s[open] == '"') return std::string_view::npos;
    ++open;
  }
  if (open >= s.size() || s[open] != '(') return std::string_view::npos;
  const std::string close = ")" + std::string(s.substr(i + 1, open - i - 1)) + "\"";
  const std::size_t end = s.find(close, open + 1);
  return end == std::string_view::npos ? s.size() : end + close.size();
}

// A literal starting at `i`, its prefix included; npos if none does. `i` starts a token: the caller
// knows no identifier runs into it.
std::size_t literalEnd(std::string_view s, std::size_t i) {
  static constexpr std::array<std::string_view, 9> kPrefixes = {"u8R", "uR", "UR", "LR", "R", "u8", "u", "U", "L"};
  for (std::string_view prefix : kPrefixes) {
    const std::size_t quote = i + prefix.size();
    if (s.substr(i, prefix.size()) != prefix || quote >= s.size() || (s[quote] != '"' && s[quote] != '\'')) continue;
    if (prefix.back() == 'R') {
      if (s[quote] != '"') continue;
      if (const std::size_t end = rawEnd(s, quote); end != std::string_view::npos) return end;
      continue;
    }
    return quotedEnd(s, quote);
  }
  if (s[i] == '"' || s[i] == '\'') return quotedEnd(s, i);
  return std::string_view::npos;
}

std::size_t commentEnd(std::string_view s, std::size_t i) {
  if (s.compare(i, 2, "//") == 0) return lineCommentEnd(s, i);
  if (s.compare(i, 2, "/*") == 0) return blockCommentEnd(s, i);
  return std::string_view::npos;
}

// A preprocessor line from its '#': to the first newline that is neither spliced nor inside a comment.
std::size_t directiveEnd(std::string_view s, std::size_t i) {
  while (i < s.size() && s[i] != '\n') {
    if (const std::size_t splice = spliceAt(s, i); splice != std::string_view::npos) {
      i = splice + 1;
    } else if (const std::size_t comment = commentEnd(s, i); comment != std::string_view::npos) {
      i = comment;
    } else if ((s[i] == '"' || s[i] == '\'') && !(i > 0 && isCppIdentifierChar(s[i - 1]))) {
      i = quotedEnd(s, i);
    } else {
      ++i;
    }
  }
  return i;
}

std::size_t numberEnd(std::string_view s, std::size_t i) {
  ++i;
  while (i < s.size()) {
    const char c = s[i];
    const char before = s[i - 1];
    const bool exponentSign = (c == '+' || c == '-') && (before == 'e' || before == 'E' || before == 'p' || before == 'P');
    const bool separator = c == '\'' && i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i + 1]));
    if (!(isCppIdentifierChar(c) || c == '.' || exponentSign || separator)) break;
    ++i;
  }
  return i;
}

std::size_t punctEnd(std::string_view s, std::size_t i) {
  static constexpr std::array<std::string_view, 27> kMulti = {
      "<<<", ">>>", "<<=", ">>=", "...", "->*", "->", "::", "<=", ">=", "==", "!=", "&&", "||",
      "+=",  "-=",  "*=",  "/=",  "%=",  "&=",  "|=", "^=", "++", "--", "<<", ">>", ".*"};
  for (std::string_view op : kMulti) {
    if (s.substr(i, op.size()) == op) return i + op.size();
  }
  return i + 1;
}

}  // namespace

bool isCppIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::size_t skipCommentOrLiteral(std::string_view s, std::size_t i) {
  if (i >= s.size()) return i;
  if (const std::size_t end = commentEnd(s, i); end != std::string_view::npos) return end;
  // Inside an identifier or a number nothing starts a literal: x1'000, u8 in "menu8".
  if (i > 0 && isCppIdentifierChar(s[i - 1]) && s[i] != '"') return i;
  const std::size_t end = literalEnd(s, i);
  return end == std::string_view::npos ? i : end;
}

std::vector<CppToken> lexCpp(std::string_view s, bool directiveLines) {
  std::vector<CppToken> out;
  bool lineStart = true;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      lineStart = true;
      ++i;
      continue;
    }
    if (blank(c)) {
      ++i;
      continue;
    }
    if (const std::size_t splice = spliceAt(s, i); splice != std::string_view::npos) {
      i = splice + 1;  // a line continued outside a directive: still one line
      continue;
    }
    const std::size_t start = i;
    CppToken::Kind kind = CppToken::Kind::punct;
    if (const std::size_t end = commentEnd(s, i); end != std::string_view::npos) {
      kind = CppToken::Kind::comment;
      i = end;
    } else if (c == '#' && lineStart && directiveLines) {
      kind = CppToken::Kind::directive;
      i = directiveEnd(s, i);
    } else if (const std::size_t lit = literalEnd(s, i); lit != std::string_view::npos) {
      kind = CppToken::Kind::literal;
      i = lit;
    } else if (identifierStart(c)) {
      kind = CppToken::Kind::identifier;
      while (i < s.size() && isCppIdentifierChar(s[i])) ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      kind = CppToken::Kind::number;
      i = numberEnd(s, i);
    } else {
      i = punctEnd(s, i);
    }
    if (kind != CppToken::Kind::comment) lineStart = false;
    out.push_back({kind, start, i});
  }
  return out;
}

}  // namespace cuset
