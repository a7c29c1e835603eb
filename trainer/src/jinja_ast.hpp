#pragma once
// The syntax tree of the Jinja subset chat templates use, and the parser that builds it
// (jinja_parser.cpp) with Jinja's own lexing rules as transformers configures them: trim_blocks,
// lstrip_blocks, `-`/`+` whitespace control, \r\n and \r read as \n, one trailing newline dropped.
// Private to cuset_trainer; the public face is cuset/trainer/chat_template.hpp.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset::jinja {

using Json = nlohmann::ordered_json;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal,      // value
    name,         // name
    attribute,    // args[0].name
    item,         // args[0][args[1]]
    slice,        // args[0][args[1]:args[2]:args[3]], null where omitted
    call,         // args[0](args[1..], kwargs)
    filter,       // args[0] | name(args[1..], kwargs)
    test,         // args[0] is [not] name(args[1..])
    logicalNot,   // not args[0]
    minus,        // -args[0]
    binary,       // args[0] name args[1]: + - * / // % ** ~ and or == != < <= > >= in "not in"
    conditional,  // args[1] if args[0] else args[2] (args[2] null: undefined)
    list,         // [args...]
    dict,         // {args[0]: args[1], args[2]: args[3], ...}
  };
  Kind kind = Kind::literal;
  int line = 0;
  Json value;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Node;
using Body = std::vector<Node>;

struct Node {
  enum class Kind {
    text,         // text
    output,       // {{ expr }}
    branch,       // if / elif / else: branches (condition null: else)
    loop,         // for targets in expr [if filter]: body, elseBody
    assign,       // set text[.attribute] = expr
    loopControl,  // break / continue: text
    macro,        // macro text(targets with defaults): body
    block,        // generation ... endgeneration: body, rendered in place
  };
  Kind kind = Kind::text;
  int line = 0;
  std::string text;
  std::string attribute;
  ExprPtr expr;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::string> targets;
  ExprPtr filter;
  std::vector<ExprPtr> defaults;  // macro: each parameter's default (null: none)
  Body body;
  Body elseBody;
};

// Throws cuset::Error "ORIGIN: line N: ..." for a malformed template or a construct outside the subset.
Body parseTemplate(std::string_view source, const std::string& origin);

}  // namespace cuset::jinja
