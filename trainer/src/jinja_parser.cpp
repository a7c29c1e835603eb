// Lexer and parser of the chat-template Jinja subset. The lexing rules are Jinja 3.1's (lexer.py) with
// transformers' settings; the grammar is Jinja's (parser.py), precedence included: or < and < not <
// comparisons < + - < ~ < * / // % < ** < unary minus < postfix (. [] ()) and filters/tests.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>

#include "cuset/common/error.hpp"
#include "jinja_ast.hpp"

namespace cuset::jinja {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

struct Token {
  enum class Type { data, variableBegin, variableEnd, blockBegin, blockEnd, name, string, integer, floating, op, end };
  Type type = Type::end;
  std::string text;
  int line = 1;
};

std::string appendUtf8(std::uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view source, const std::string& origin) : origin_(origin) {
    // Jinja reads \r\n and \r as \n and, keep_trailing_newline being off, drops one final newline.
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> run() {
    std::vector<Token> out;
    std::size_t pos = 0;
    bool lineStarting = true;
    while (pos < src_.size()) {
      const std::size_t start = nextTagStart(pos);
      if (start == std::string::npos) {
        emitData(out, src_.substr(pos));
        break;
      }
      std::string text = src_.substr(pos, start - pos);
      const char kind = src_[start + 1];
      const char sign = start + 2 < src_.size() && (src_[start + 2] == '-' || src_[start + 2] == '+') ? src_[start + 2] : '\0';
      if (sign == '-') {
        while (!text.empty() && isSpace(text.back())) text.pop_back();
      } else if (sign != '+' && kind != '{') {  // lstrip_blocks: blocks and comments, not {{ }}
        const std::size_t lineStart = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        const bool blank = lineStart < text.size() && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(lineStart), text.end(), isSpace);
        if ((lineStart > 0 || lineStarting) && blank) text.resize(lineStart);
      }
      line_ += static_cast<int>(std::count(src_.begin() + static_cast<std::ptrdiff_t>(pos), src_.begin() + static_cast<std::ptrdiff_t>(start), '\n'));
      emitData(out, std::move(text));
      pos = start + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        pos = skipComment(pos, lineStarting);
      } else {
        pos = lexTag(out, pos, kind == '{', lineStarting);
      }
    }
    out.push_back(Token{Token::Type::end, "", line_});
    return out;
  }

 private:
  std::size_t nextTagStart(std::size_t pos) const {
    for (std::size_t i = src_.find('{', pos); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  void emitData(std::vector<Token>& out, std::string text) const {
    if (!text.empty()) out.push_back(Token{Token::Type::data, std::move(text), line_});
  }

  [[noreturn]] void fail(const std::string& what) const { throw makeError("{}: line {}: {}", origin_, line_, what); }

  // Past the tag's end: "+E" keeps what follows, "-E" strips the whitespace after it, "E" (blocks and
  // comments, trim_blocks) drops one newline.
  std::size_t closeTag(std::size_t at, std::size_t endLength, bool trimNewline, bool& lineStarting) {
    std::size_t pos = at + endLength;
    const std::size_t begin = at;
    if (at > 0 && src_[at - 1] == '-') {
      while (pos < src_.size() && isSpace(src_[pos])) ++pos;
    } else if (!(at > 0 && src_[at - 1] == '+') && trimNewline && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    lineStarting = pos > begin && src_[pos - 1] == '\n';
    line_ += static_cast<int>(std::count(src_.begin() + static_cast<std::ptrdiff_t>(begin), src_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    return pos;
  }

  std::size_t skipComment(std::size_t pos, bool& lineStarting) {
    const std::size_t end = src_.find("#}", pos);
    if (end == std::string::npos) fail("missing end of comment tag");
    line_ += static_cast<int>(std::count(src_.begin() + static_cast<std::ptrdiff_t>(pos), src_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    return closeTag(end, 2, true, lineStarting);
  }

  std::size_t lexTag(std::vector<Token>& out, std::size_t pos, bool variable, bool& lineStarting) {
    out.push_back(Token{variable ? Token::Type::variableBegin : Token::Type::blockBegin, "", line_});
    const std::string_view close = variable ? "}}" : "%}";
    std::vector<char> balance;
    for (;;) {
      while (pos < src_.size() && isSpace(src_[pos])) {
        if (src_[pos] == '\n') ++line_;
        ++pos;
      }
      if (pos >= src_.size()) fail(variable ? "missing end of print tag '}}'" : "missing end of block tag '%}'");
      if (balance.empty()) {
        for (const bool prefix : {true, false}) {  // "-}}" / "+%}" before "}}"
          if (prefix && (src_[pos] == '-' || (src_[pos] == '+' && !variable)) && src_.compare(pos + 1, 2, close) == 0) {
            out.push_back(Token{variable ? Token::Type::variableEnd : Token::Type::blockEnd, "", line_});
            return closeTag(pos + 1, 2, !variable, lineStarting);
          }
          if (!prefix && src_.compare(pos, 2, close) == 0) {
            out.push_back(Token{variable ? Token::Type::variableEnd : Token::Type::blockEnd, "", line_});
            return closeTag(pos, 2, !variable, lineStarting);
          }
        }
      }
      pos = lexOne(out, pos, balance);
    }
  }

  std::size_t lexOne(std::vector<Token>& out, std::size_t pos, std::vector<char>& balance) {
    const char c = src_[pos];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t e = pos;
      while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
      out.push_back(Token{Token::Type::name, src_.substr(pos, e - pos), line_});
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t e = pos;
      while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
      bool floating = false;
      if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
        floating = true;
        ++e;
        while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
      }
      if (e + 1 < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {  // 1e-05
        std::size_t x = e + 1;
        if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
        if (x < src_.size() && std::isdigit(static_cast<unsigned char>(src_[x]))) {
          floating = true;
          e = x;
          while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
        }
      }
      if (e < src_.size() && src_[e] == '_') fail("number literals with '_' are not supported by this renderer");
      out.push_back(Token{floating ? Token::Type::floating : Token::Type::integer, src_.substr(pos, e - pos), line_});
      return e;
    }
    if (c == '\'' || c == '"') return lexString(out, pos);
    static const std::vector<std::string> ops = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                                 "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};
    for (const auto& op : ops) {
      if (src_.compare(pos, op.size(), op) != 0) continue;
      if (op == "(" || op == "[" || op == "{") balance.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
      if (op == ")" || op == "]" || op == "}") {
        if (balance.empty() || balance.back() != op[0]) fail(fmt::format("unexpected '{}'", op));
        balance.pop_back();
      }
      out.push_back(Token{Token::Type::op, op, line_});
      return pos + op.size();
    }
    fail(fmt::format("unexpected character '{}'", c));
  }

  // Python's unicode-escape on the literal's text, as Jinja decodes string literals.
  std::size_t lexString(std::vector<Token>& out, std::size_t pos) {
    const char quote = src_[pos];
    std::string value;
    const int startLine = line_;
    std::size_t i = pos + 1;
    for (;; ++i) {
      if (i >= src_.size()) fail("unterminated string literal");
      const char c = src_[i];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (++i >= src_.size()) fail("unterminated string literal");
      const char e = src_[i];
      auto hex = [&](int digits) {
        if (i + static_cast<std::size_t>(digits) >= src_.size()) fail("truncated \\x, \\u or \\U escape");
        const auto cp = static_cast<std::uint32_t>(std::stoul(src_.substr(i + 1, static_cast<std::size_t>(digits)), nullptr, 16));
        i += static_cast<std::size_t>(digits);
        value += appendUtf8(cp);
      };
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case '\n':
          ++line_;
          break;  // a continued line
        case 'x':
          hex(2);
          break;
        case 'u':
          hex(4);
          break;
        case 'U':
          hex(8);
          break;
        default:
          if (e >= '0' && e <= '7') fail("octal escapes in string literals are not supported");
          value += '\\';
          value += e;
      }
    }
    out.push_back(Token{Token::Type::string, std::move(value), startLine});
    return i + 1;
  }

  std::string src_;
  const std::string& origin_;
  int line_ = 1;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& origin) : tokens_(std::move(tokens)), origin_(origin) {}

  Body parseAll() {
    std::string endTag;
    Body body = parseBody({}, endTag);
    if (!endTag.empty()) fail(fmt::format("unexpected '{}'", endTag));
    return body;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  Token next() { return tokens_[std::min(pos_++, tokens_.size() - 1)]; }
  bool isOp(std::string_view op, std::size_t ahead = 0) const { return peek(ahead).type == Token::Type::op && peek(ahead).text == op; }
  bool isName(std::string_view name, std::size_t ahead = 0) const { return peek(ahead).type == Token::Type::name && peek(ahead).text == name; }
  [[noreturn]] void fail(const std::string& what) const { throw makeError("{}: line {}: {}", origin_, peek().line, what); }
  void expectOp(std::string_view op) {
    if (!isOp(op)) fail(fmt::format("expected '{}'", op));
    ++pos_;
  }
  void expect(Token::Type type, std::string_view what) {
    if (peek().type != type) fail(fmt::format("expected {}", what));
    ++pos_;
  }
  std::string expectName() {
    if (peek().type != Token::Type::name) fail("expected a name");
    return next().text;
  }

  // Statements until a block whose name is in `ends` (returned in `endTag`, its `{%` and name consumed).
  // `closing`: the tag that ends this body, for the message when the template ends first.
  Body parseBody(const std::set<std::string>& ends, std::string& endTag, const std::string& closing = {}) {
    Body body;
    for (;;) {
      const Token& t = peek();
      if (t.type == Token::Type::end) {
        if (!ends.empty()) fail(fmt::format("missing '{}': the template ends inside a block", closing));
        endTag.clear();
        return body;
      }
      if (t.type == Token::Type::data) {
        Node n;
        n.kind = Node::Kind::text;
        n.line = t.line;
        n.text = next().text;
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::variableBegin) {
        Node n;
        n.kind = Node::Kind::output;
        n.line = next().line;
        n.expr = parseTuple();
        expect(Token::Type::variableEnd, "'}}'");
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::blockBegin) {
        ++pos_;
        const std::string name = expectName();
        if (ends.count(name)) {
          endTag = name;
          return body;
        }
        body.push_back(parseStatement(name));
      } else {
        fail("unexpected token");
      }
    }
  }

  static Node node(Node::Kind kind, int line) {
    Node n;
    n.kind = kind;
    n.line = line;
    return n;
  }

  Node parseStatement(const std::string& name) {
    const int line = peek().line;
    if (name == "if") return parseIf(line);
    if (name == "for") return parseFor(line);
    if (name == "set") return parseSet(line);
    if (name == "break" || name == "continue") {
      if (loopDepth_ == 0) fail(fmt::format("'{}' outside a loop", name));
      expect(Token::Type::blockEnd, "'%}'");
      Node n = node(Node::Kind::loopControl, line);
      n.text = name;
      return n;
    }
    if (name == "macro") return parseMacro(line);
    if (name == "generation") {  // transformers' assistant-span marker: its body renders in place
      expect(Token::Type::blockEnd, "'%}'");
      Node n = node(Node::Kind::block, line);
      std::string endTag;
      n.body = parseBody({"endgeneration"}, endTag, "endgeneration");
      expect(Token::Type::blockEnd, "'%}'");
      return n;
    }
    static const std::set<std::string> known = {"call", "filter", "block", "extends", "include", "import", "from", "with", "raw", "autoescape"};
    if (known.count(name)) fail(fmt::format("the '{}' statement is not supported by this renderer", name));
    fail(fmt::format("unknown statement '{}'", name));
  }

  Node parseIf(int line) {
    Node n = node(Node::Kind::branch, line);
    ExprPtr condition = parseExpression();
    for (;;) {
      expect(Token::Type::blockEnd, "'%}'");
      std::string endTag;
      Body body = parseBody({"elif", "else", "endif"}, endTag, "endif");
      n.branches.emplace_back(std::move(condition), std::move(body));
      if (endTag == "endif") break;
      if (endTag == "else") {
        expect(Token::Type::blockEnd, "'%}'");
        Body elseBody = parseBody({"endif"}, endTag, "endif");
        n.branches.emplace_back(nullptr, std::move(elseBody));
        break;
      }
      condition = parseExpression();  // elif
    }
    expect(Token::Type::blockEnd, "'%}'");
    return n;
  }

  Node parseFor(int line) {
    Node n = node(Node::Kind::loop, line);
    n.targets.push_back(expectName());
    while (isOp(",")) {
      ++pos_;
      n.targets.push_back(expectName());
    }
    if (!isName("in")) fail("expected 'in'");
    ++pos_;
    n.expr = parseExpression(false);
    if (isName("if")) {
      ++pos_;
      n.filter = parseExpression(false);
    }
    if (isName("recursive")) fail("recursive loops are not supported by this renderer");
    expect(Token::Type::blockEnd, "'%}'");
    ++loopDepth_;
    std::string endTag;
    n.body = parseBody({"else", "endfor"}, endTag, "endfor");
    if (endTag == "else") {
      expect(Token::Type::blockEnd, "'%}'");
      --loopDepth_;  // break/continue in a loop's else belong to the loop around it
      n.elseBody = parseBody({"endfor"}, endTag, "endfor");
      ++loopDepth_;
    }
    --loopDepth_;
    expect(Token::Type::blockEnd, "'%}'");
    return n;
  }

  Node parseMacro(int line) {
    Node n = node(Node::Kind::macro, line);
    n.text = expectName();
    expectOp("(");
    while (!isOp(")")) {
      n.targets.push_back(expectName());
      ExprPtr dflt;
      if (isOp("=")) {
        ++pos_;
        dflt = parseExpression();
      }
      n.defaults.push_back(std::move(dflt));
      if (!isOp(")")) expectOp(",");
    }
    ++pos_;
    expect(Token::Type::blockEnd, "'%}'");
    const int outerLoops = loopDepth_;
    loopDepth_ = 0;  // a loop around the definition is not the macro's
    std::string endTag;
    n.body = parseBody({"endmacro"}, endTag, "endmacro");
    loopDepth_ = outerLoops;
    expect(Token::Type::blockEnd, "'%}'");
    return n;
  }

  Node parseSet(int line) {
    Node n = node(Node::Kind::assign, line);
    n.text = expectName();
    if (isOp(".")) {
      ++pos_;
      n.attribute = expectName();
    }
    if (isOp(",")) fail("'set' with several targets is not supported by this renderer");
    if (peek().type == Token::Type::blockEnd) fail("the block form of 'set' ({% set x %}...{% endset %}) is not supported by this renderer");
    expectOp("=");
    n.expr = parseTuple();
    expect(Token::Type::blockEnd, "'%}'");
    return n;
  }

  ExprPtr make(Expr::Kind kind, int line, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    e->name = std::move(name);
    return e;
  }
  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    auto e = make(Expr::Kind::binary, a->line, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  // An expression, or several separated by commas (a tuple: not supported outside parentheses).
  ExprPtr parseTuple() {
    ExprPtr e = parseExpression();
    if (isOp(",")) fail("tuples are not supported by this renderer");
    return e;
  }

  ExprPtr parseExpression(bool withConditional = true) { return withConditional ? parseConditional() : parseOr(); }

  ExprPtr parseConditional() {
    ExprPtr e = parseOr();
    while (isName("if")) {
      ++pos_;
      auto c = make(Expr::Kind::conditional, e->line);
      ExprPtr condition = parseOr();
      ExprPtr otherwise;
      if (isName("else")) {
        ++pos_;
        otherwise = parseConditional();
      }
      c->args.push_back(std::move(condition));
      c->args.push_back(std::move(e));
      c->args.push_back(std::move(otherwise));
      e = std::move(c);
    }
    return e;
  }

  // One precedence level: operands joined left to right by the level's operators (names such as 'or',
  // or symbols).
  ExprPtr parseLevel(std::initializer_list<std::string_view> ops, bool named, ExprPtr (Parser::*operand)()) {
    ExprPtr e = (this->*operand)();
    for (;;) {
      const auto op = std::find_if(ops.begin(), ops.end(), [&](std::string_view o) { return named ? isName(o) : isOp(o); });
      if (op == ops.end()) return e;
      ++pos_;
      e = binary(std::string(*op), std::move(e), (this->*operand)());
    }
  }

  ExprPtr parseOr() { return parseLevel({"or"}, true, &Parser::parseAnd); }
  ExprPtr parseAnd() { return parseLevel({"and"}, true, &Parser::parseNot); }

  ExprPtr parseNot() {
    if (isName("not")) {
      auto e = make(Expr::Kind::logicalNot, next().line);
      e->args.push_back(parseNot());
      return e;
    }
    return parseCompare();
  }

  // a < b < c is (a < b) and (b < c) in Jinja; chains are rare in templates and refused.
  ExprPtr parseCompare() {
    ExprPtr e = parseMath1();
    static const std::set<std::string> ops = {"==", "!=", "<", "<=", ">", ">="};
    bool compared = false;
    for (;;) {
      std::string op;
      if (peek().type == Token::Type::op && ops.count(peek().text)) {
        op = next().text;
      } else if (isName("in")) {
        ++pos_;
        op = "in";
      } else if (isName("not") && isName("in", 1)) {
        pos_ += 2;
        op = "not in";
      } else {
        return e;
      }
      if (compared) fail("chained comparisons are not supported by this renderer");
      compared = true;
      e = binary(op, std::move(e), parseMath1());
    }
  }

  ExprPtr parseMath1() { return parseLevel({"+", "-"}, false, &Parser::parseConcat); }
  ExprPtr parseConcat() { return parseLevel({"~"}, false, &Parser::parseMath2); }
  ExprPtr parseMath2() { return parseLevel({"*", "/", "//", "%"}, false, &Parser::parsePow); }
  ExprPtr parsePow() { return parseLevel({"**"}, false, &Parser::parseUnaryWithFilters); }
  ExprPtr parseUnaryWithFilters() { return parseUnary(true); }

  ExprPtr parseUnary(bool withFilter) {
    ExprPtr e;
    if (isOp("-")) {
      e = make(Expr::Kind::minus, next().line);
      e->args.push_back(parseUnary(false));
    } else if (isOp("+")) {
      ++pos_;
      e = parseUnary(false);
    } else {
      e = parsePrimary();
    }
    e = parsePostfix(std::move(e));
    if (withFilter) return parseFilters(std::move(e));
    return e;
  }

  ExprPtr parsePrimary() {
    const Token t = next();
    auto literal = [&](Json v) {
      auto e = make(Expr::Kind::literal, t.line);
      e->value = std::move(v);
      return e;
    };
    switch (t.type) {
      case Token::Type::name:
        if (t.text == "true" || t.text == "True") return literal(true);
        if (t.text == "false" || t.text == "False") return literal(false);
        if (t.text == "none" || t.text == "None") return literal(nullptr);
        return make(Expr::Kind::name, t.line, t.text);
      case Token::Type::string: {
        std::string s = t.text;
        while (peek().type == Token::Type::string) s += next().text;  // adjacent literals join, as in Python
        return literal(s);
      }
      case Token::Type::integer:
        return literal(std::stoll(t.text));
      case Token::Type::floating:
        return literal(std::stod(t.text));
      case Token::Type::op:
        if (t.text == "(") {
          ExprPtr e = parseExpression();
          if (isOp(",")) fail("tuples are not supported by this renderer");
          expectOp(")");
          return e;
        }
        if (t.text == "[") {
          auto e = make(Expr::Kind::list, t.line);
          while (!isOp("]")) {
            e->args.push_back(parseExpression());
            if (!isOp("]")) expectOp(",");
          }
          ++pos_;
          return e;
        }
        if (t.text == "{") {
          auto e = make(Expr::Kind::dict, t.line);
          while (!isOp("}")) {
            e->args.push_back(parseExpression());
            expectOp(":");
            e->args.push_back(parseExpression());
            if (!isOp("}")) expectOp(",");
          }
          ++pos_;
          return e;
        }
        break;
      default:
        break;
    }
    --pos_;
    fail(t.type == Token::Type::end ? "unexpected end of template" : fmt::format("unexpected '{}'", t.text));
  }

  void parseCallArguments(Expr& e) {
    expectOp("(");
    while (!isOp(")")) {
      if (peek().type == Token::Type::name && isOp("=", 1)) {
        std::string key = next().text;
        ++pos_;
        e.kwargs.emplace_back(std::move(key), parseExpression());
      } else {
        if (!e.kwargs.empty()) fail("a positional argument after a keyword argument");
        if (isOp("*") || isOp("**")) fail("*args and **kwargs are not supported by this renderer");
        e.args.push_back(parseExpression());
      }
      if (!isOp(")")) expectOp(",");
    }
    ++pos_;
  }

  ExprPtr parseCall(ExprPtr callee) {
    auto c = make(Expr::Kind::call, callee->line);
    c->args.push_back(std::move(callee));
    parseCallArguments(*c);
    return c;
  }

  ExprPtr parsePostfix(ExprPtr e) {
    for (;;) {
      if (isOp(".")) {
        ++pos_;
        const Token t = next();
        if (t.type == Token::Type::name) {
          auto a = make(Expr::Kind::attribute, t.line, t.text);
          a->args.push_back(std::move(e));
          e = std::move(a);
        } else if (t.type == Token::Type::integer) {  // x.0 is x[0]
          auto a = make(Expr::Kind::item, t.line);
          a->args.push_back(std::move(e));
          auto index = make(Expr::Kind::literal, t.line);
          index->value = std::stoll(t.text);
          a->args.push_back(std::move(index));
          e = std::move(a);
        } else {
          fail("expected a name after '.'");
        }
      } else if (isOp("[")) {
        e = parseSubscript(std::move(e));
      } else if (isOp("(")) {
        e = parseCall(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parseSubscript(ExprPtr object) {
    const int line = next().line;  // [
    ExprPtr parts[3];
    int colons = 0;
    while (!isOp("]")) {
      if (isOp(":")) {
        if (++colons > 2) fail("too many ':' in a slice");
        ++pos_;
        continue;
      }
      if (parts[colons]) fail("expected ':' or ']'");
      parts[colons] = parseExpression();
      if (isOp(",")) fail("tuples are not supported by this renderer");
    }
    ++pos_;
    if (colons == 0) {
      if (!parts[0]) fail("empty subscript");
      auto e = make(Expr::Kind::item, line);
      e->args.push_back(std::move(object));
      e->args.push_back(std::move(parts[0]));
      return e;
    }
    auto e = make(Expr::Kind::slice, line);
    e->args.push_back(std::move(object));
    for (auto& p : parts) e->args.push_back(std::move(p));
    return e;
  }

  ExprPtr parseFilters(ExprPtr e) {
    for (;;) {
      if (isOp("|")) {
        ++pos_;
        auto f = make(Expr::Kind::filter, peek().line, expectName());
        f->args.push_back(std::move(e));
        if (isOp("(")) parseCallArguments(*f);
        e = std::move(f);
      } else if (isName("is")) {
        ++pos_;
        bool negated = false;
        if (isName("not")) {
          ++pos_;
          negated = true;
        }
        auto t = make(Expr::Kind::test, peek().line, expectName());
        t->negated = negated;
        t->args.push_back(std::move(e));
        if (isOp("(")) {
          parseCallArguments(*t);
        } else if ((peek().type == Token::Type::name && !isName("else") && !isName("or") && !isName("and") && !isName("if") && !isName("not") &&
                    !isName("in")) ||
                   peek().type == Token::Type::string || peek().type == Token::Type::integer || peek().type == Token::Type::floating || isOp("[") ||
                   isOp("{")) {
          t->args.push_back(parsePostfix(parsePrimary()));  // `x is divisibleby 3`
        }
        e = std::move(t);
      } else if (isOp("(")) {
        e = parseCall(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const std::string& origin_;
  int loopDepth_ = 0;
};

}  // namespace

Body parseTemplate(std::string_view source, const std::string& origin) { return Parser(Lexer(source, origin).run(), origin).parseAll(); }

}  // namespace cuset::jinja
