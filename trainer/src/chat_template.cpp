// Rendering of the chat-template subset with Jinja's semantics as transformers runs it: Python's
// truthiness, str/int/list/dict operators and methods, Jinja's Undefined (prints as nothing, is
// falsy, fails on attribute access), loop-local `set`, namespace(), and transformers' globals.
#include "cuset/trainer/chat_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <unordered_map>

#include "cuset/common/error.hpp"
#include "jinja_ast.hpp"
#include "python_text.hpp"

namespace cuset {

using jinja::Body;
using jinja::Expr;
using jinja::isWhitespace;
using jinja::Json;
using jinja::Node;
using jinja::pythonStr;
using jinja::splitString;
using jinja::strip;

namespace {

// ---- values ----

struct Value {
  enum class Kind { undefined, data, ns };
  Kind kind = Kind::undefined;
  Json j;
  std::shared_ptr<Json> ns;   // a namespace's attributes, shared by every copy of it
  std::string undefinedName;  // what was undefined, for the error message

  static Value of(Json v) {
    Value x;
    x.kind = Kind::data;
    x.j = std::move(v);
    return x;
  }
  static Value undefined(std::string name) {
    Value x;
    x.undefinedName = std::move(name);
    return x;
  }
  bool isUndefined() const { return kind == Kind::undefined; }
  bool isString() const { return kind == Kind::data && j.is_string(); }
  const std::string& str() const { return j.get_ref<const std::string&>(); }
};

bool truthy(const Value& v) {
  if (v.kind == Value::Kind::undefined) return false;
  if (v.kind == Value::Kind::ns) return true;
  const Json& j = v.j;
  switch (j.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return j.get<bool>();
    case Json::value_t::number_integer:
      return j.get<std::int64_t>() != 0;
    case Json::value_t::number_unsigned:
      return j.get<std::uint64_t>() != 0;
    case Json::value_t::number_float:
      return j.get<double>() != 0.0;
    case Json::value_t::string:
      return !j.get_ref<const std::string&>().empty();  // json::empty() is false for every string
    case Json::value_t::array:
    case Json::value_t::object:
      return !j.empty();
    default:
      return true;
  }
}

// str(value) as Python prints it inside {{ }}.
class Renderer {
 public:
  Renderer(const std::string& origin, const Json& context) : origin_(origin) {
    scopes_.emplace_back();
    for (const auto& [k, v] : context.items()) scopes_.back()[k] = Value::of(v);
  }

  std::string run(const Body& body) {
    renderBody(body);
    return std::move(out_);
  }

 private:
  enum class Flow { normal, breakLoop, continueLoop };

  [[noreturn]] void fail(int line, const std::string& what) const { throw makeError("{}: line {}: {}", origin_, line, what); }

  Flow renderBody(const Body& body) {
    for (const Node& n : body) {
      const Flow f = renderNode(n);
      if (f != Flow::normal) return f;
    }
    return Flow::normal;
  }

  // A template comes with a downloaded model: one that would loop or grow without end is stopped.
  static constexpr std::int64_t kMaxSteps = 10'000'000;
  static constexpr std::size_t kMaxOutput = 64u << 20;

  void append(const std::string& text, int line) {
    if (out_.size() + text.size() > kMaxOutput) fail(line, "the template's output passed 64 MiB");
    out_ += text;
  }

  // Statements run, loop iterations and items made count alike.
  void countSteps(std::int64_t steps, int line) {
    steps_ += steps;
    if (steps_ > kMaxSteps) fail(line, "the template ran more than 10 million steps");
  }

  Flow renderNode(const Node& n) {
    countSteps(1, n.line);
    switch (n.kind) {
      case Node::Kind::text:
        append(n.text, n.line);
        return Flow::normal;
      case Node::Kind::output:
        append(toText(eval(*n.expr), n.line), n.line);
        return Flow::normal;
      case Node::Kind::branch:
        for (const auto& [condition, body] : n.branches) {
          if (!condition || truthy(eval(*condition))) return renderBody(body);
        }
        return Flow::normal;
      case Node::Kind::loop:
        return renderLoop(n);
      case Node::Kind::assign:
        assign(n);
        return Flow::normal;
      case Node::Kind::loopControl:
        return n.text == "break" ? Flow::breakLoop : Flow::continueLoop;
      case Node::Kind::macro:
        macros_[n.text] = &n;
        return Flow::normal;
      case Node::Kind::block:
        return renderBody(n.body);
    }
    return Flow::normal;
  }

  std::string toText(const Value& v, int line) const {
    if (v.kind == Value::Kind::undefined) return "";
    if (v.kind == Value::Kind::ns) fail(line, "printing a namespace is not supported");
    return pythonStr(v.j);
  }

  void assign(const Node& n) {
    Value v = eval(*n.expr);
    if (n.attribute.empty()) {
      scopes_.back()[n.text] = std::move(v);
      return;
    }
    const Value target = lookup(n.text);
    if (target.kind != Value::Kind::ns)
      fail(n.line, fmt::format("'{}' is not a namespace: set {}.{} needs namespace()", n.text, n.text, n.attribute));
    if (v.kind != Value::Kind::data) fail(n.line, "storing an undefined value or a namespace in a namespace is not supported");
    (*target.ns)[n.attribute] = std::move(v.j);
  }

  Json iterable(const Value& v, int line) const {
    if (v.kind == Value::Kind::undefined) return Json::array();
    if (v.kind == Value::Kind::ns) fail(line, "a namespace is not iterable");
    if (v.j.is_array()) return v.j;
    if (v.j.is_object()) {
      Json keys = Json::array();
      for (const auto& [k, x] : v.j.items()) keys.push_back(k);
      return keys;
    }
    if (v.j.is_string()) {
      Json chars = Json::array();
      const std::string& s = v.str();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 1;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0xF0)
          len = 4;
        else if (c >= 0xE0)
          len = 3;
        else if (c >= 0xC0)
          len = 2;
        chars.push_back(s.substr(i, len));
        i += len;
      }
      return chars;
    }
    fail(line, fmt::format("'{}' is not iterable", pythonStr(v.j)));
  }

  Flow renderLoop(const Node& n) {
    Json all = iterable(eval(*n.expr), n.line);
    std::vector<const Json*> items;
    for (const auto& x : all) {
      if (n.filter) {
        scopes_.emplace_back();
        bindTargets(n, x);
        const bool keep = truthy(eval(*n.filter));
        scopes_.pop_back();
        if (!keep) continue;
      }
      items.push_back(&x);
    }
    if (items.empty()) {
      renderBody(n.elseBody);
      return Flow::normal;
    }
    const auto length = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < length; ++i) {
      countSteps(1, n.line);
      scopes_.emplace_back();  // a `set` in the body lasts one iteration, as in Jinja
      bindTargets(n, *items[static_cast<std::size_t>(i)]);
      Json loop = {{"index0", i},
                   {"index", i + 1},
                   {"first", i == 0},
                   {"last", i == length - 1},
                   {"length", length},
                   {"revindex", length - i},
                   {"revindex0", length - i - 1}};
      loop["previtem"] = i > 0 ? *items[static_cast<std::size_t>(i - 1)] : Json();
      loop["nextitem"] = i + 1 < length ? *items[static_cast<std::size_t>(i + 1)] : Json();
      scopes_.back()["loop"] = Value::of(std::move(loop));
      const Flow f = renderBody(n.body);
      scopes_.pop_back();
      if (f == Flow::breakLoop) break;
    }
    return Flow::normal;
  }

  void bindTargets(const Node& n, const Json& item) {
    if (n.targets.size() == 1) {
      scopes_.back()[n.targets[0]] = Value::of(item);
      return;
    }
    if (!item.is_array() || item.size() != n.targets.size()) {
      fail(n.line, fmt::format("cannot unpack {} into {} names", pythonStr(item), n.targets.size()));
    }
    for (std::size_t k = 0; k < n.targets.size(); ++k) scopes_.back()[n.targets[k]] = Value::of(item[k]);
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto v = it->find(name); v != it->end()) return v->second;
    }
    return Value::undefined(name);
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::literal:
        return Value::of(e.value);
      case Expr::Kind::name:
        return lookup(e.name);
      case Expr::Kind::attribute:
        return attribute(eval(*e.args[0]), e.name, e.line);
      case Expr::Kind::item:
        return item(eval(*e.args[0]), eval(*e.args[1]), e.line);
      case Expr::Kind::slice:
        return slice(e);
      case Expr::Kind::call:
        return call(e);
      case Expr::Kind::filter:
        return filter(e);
      case Expr::Kind::test:
        return Value::of(test(e) != e.negated);
      case Expr::Kind::logicalNot:
        return Value::of(!truthy(eval(*e.args[0])));
      case Expr::Kind::minus: {
        const Value v = eval(*e.args[0]);
        if (v.kind == Value::Kind::data && v.j.is_number_integer()) return Value::of(-v.j.get<std::int64_t>());
        if (v.kind == Value::Kind::data && v.j.is_number()) return Value::of(-v.j.get<double>());
        fail(e.line, "unary '-' of a value that is not a number");
      }
      case Expr::Kind::binary:
        return binary(e);
      case Expr::Kind::conditional:
        if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
        return e.args[2] ? eval(*e.args[2]) : Value::undefined("the missing else branch");
      case Expr::Kind::list: {
        Json list = Json::array();
        for (const auto& a : e.args) list.push_back(data(eval(*a), a->line));
        return Value::of(std::move(list));
      }
      case Expr::Kind::dict: {
        Json dict = Json::object();
        for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value k = eval(*e.args[i]);
          if (!k.isString()) fail(e.line, "dictionary keys other than strings are not supported");
          dict[k.str()] = data(eval(*e.args[i + 1]), e.line);
        }
        return Value::of(std::move(dict));
      }
    }
    fail(e.line, "unknown expression");
  }

  Json data(const Value& v, int line) const {
    if (v.kind == Value::Kind::undefined) fail(line, fmt::format("'{}' is undefined", v.undefinedName));
    if (v.kind == Value::Kind::ns) fail(line, "a namespace cannot be stored in a list or dictionary here");
    return v.j;
  }

  // Jinja's getattr: a namespace's attribute, a dictionary's key; anything else is undefined, except
  // that an undefined value's attribute is an error.
  Value attribute(const Value& object, const std::string& name, int line) const {
    if (object.kind == Value::Kind::undefined) fail(line, fmt::format("'{}' is undefined (reading its '{}')", object.undefinedName, name));
    if (object.kind == Value::Kind::ns) {
      if (auto it = object.ns->find(name); it != object.ns->end()) return Value::of(*it);
      return Value::undefined(name);
    }
    if (object.j.is_object()) {
      if (auto it = object.j.find(name); it != object.j.end()) return Value::of(*it);
    }
    return Value::undefined(name);
  }

  Value item(const Value& object, const Value& key, int line) const {
    if (object.kind == Value::Kind::undefined) fail(line, fmt::format("'{}' is undefined (reading an item of it)", object.undefinedName));
    if (key.kind == Value::Kind::data && key.j.is_string()) return attribute(object, key.str(), line);
    if (object.kind == Value::Kind::data && key.kind == Value::Kind::data && key.j.is_number_integer() &&
        (object.j.is_array() || object.j.is_string())) {
      const Json seq = object.j.is_string() ? iterable(object, line) : object.j;
      auto i = key.j.get<std::int64_t>();
      const auto n = static_cast<std::int64_t>(seq.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::undefined("an index out of range");
      return Value::of(seq[static_cast<std::size_t>(i)]);
    }
    return Value::undefined("an item");
  }

  Value slice(const Expr& e) {
    const Value object = eval(*e.args[0]);
    auto bound = [&](const jinja::ExprPtr& x) -> std::optional<std::int64_t> {
      if (!x) return std::nullopt;
      const Value v = eval(*x);
      if (v.kind == Value::Kind::data && v.j.is_null()) return std::nullopt;
      if (v.kind != Value::Kind::data || !v.j.is_number_integer()) fail(e.line, "slice bounds must be integers");
      return v.j.get<std::int64_t>();
    };
    const auto start = bound(e.args[1]), stop = bound(e.args[2]), step = bound(e.args[3]);
    if (object.kind != Value::Kind::data || !(object.j.is_array() || object.j.is_string()))
      fail(e.line, "slicing a value that is not a list or a string");
    const Json seq = object.j.is_string() ? iterable(object, e.line) : object.j;
    const auto n = static_cast<std::int64_t>(seq.size());
    const std::int64_t s = step.value_or(1);
    if (s == 0) fail(e.line, "slice step cannot be zero");
    // Python's slice.indices
    auto clamp = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
      if (!v) return dflt;
      std::int64_t x = *v < 0 ? *v + n : *v;
      if (s > 0) return std::clamp<std::int64_t>(x, 0, n);
      return std::clamp<std::int64_t>(x, -1, n - 1);
    };
    const std::int64_t b = clamp(start, s > 0 ? 0 : n - 1), end = clamp(stop, s > 0 ? n : -1);
    Json out = Json::array();
    for (std::int64_t i = b; s > 0 ? i < end : i > end; i += s) out.push_back(seq[static_cast<std::size_t>(i)]);
    if (object.j.is_string()) {
      std::string joined;
      for (const auto& c : out) joined += c.get<std::string>();
      return Value::of(joined);
    }
    return Value::of(std::move(out));
  }

  std::vector<Value> arguments(const Expr& e) {
    std::vector<Value> args;
    for (std::size_t i = 1; i < e.args.size(); ++i) args.push_back(eval(*e.args[i]));
    return args;
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.args[0];
    if (callee.kind == Expr::Kind::name && lookup(callee.name).isUndefined()) {
      if (auto m = macros_.find(callee.name); m != macros_.end()) return callMacro(*m->second, e);
      return callGlobal(callee.name, e);
    }
    if (callee.kind == Expr::Kind::attribute) return callMethod(eval(*callee.args[0]), callee.name, e);
    fail(e.line, "calling this value is not supported");
  }

  // The macro's body with its parameters bound, in a scope of its own above the template's top level
  // (as Jinja resolves a macro's free names), its output returned as a string.
  Value callMacro(const Node& macro, const Expr& e) {
    if (e.args.size() - 1 > macro.targets.size()) fail(e.line, fmt::format("macro '{}' takes {} arguments", macro.text, macro.targets.size()));
    std::unordered_map<std::string, Value> parameters;
    for (std::size_t i = 0; i < macro.targets.size(); ++i) {
      if (i + 1 < e.args.size()) {
        parameters[macro.targets[i]] = eval(*e.args[i + 1]);
      } else if (macro.defaults[i]) {
        parameters[macro.targets[i]] = eval(*macro.defaults[i]);
      } else {
        parameters[macro.targets[i]] = Value::undefined(macro.targets[i]);
      }
    }
    for (const auto& [k, x] : e.kwargs) {
      if (std::find(macro.targets.begin(), macro.targets.end(), k) == macro.targets.end()) {
        fail(e.line, fmt::format("macro '{}' has no parameter '{}'", macro.text, k));
      }
      parameters[k] = eval(*x);
    }
    if (macroDepth_ >= 64) fail(e.line, fmt::format("macro '{}' recurses more than 64 deep", macro.text));
    ++macroDepth_;
    std::vector<std::unordered_map<std::string, Value>> saved = {scopes_.front(), std::move(parameters)};
    std::swap(saved, scopes_);
    std::string output = std::move(out_);
    out_.clear();
    renderBody(macro.body);
    std::swap(output, out_);
    saved.front() = std::move(scopes_.front());  // top-level state the macro changed
    scopes_ = std::move(saved);
    --macroDepth_;
    return Value::of(std::move(output));
  }

  Value callGlobal(const std::string& name, const Expr& e) {
    if (name == "namespace" || name == "dict") {
      Json attrs = Json::object();
      for (const auto& [k, x] : e.kwargs) attrs[k] = data(eval(*x), e.line);
      if (e.args.size() > 1) fail(e.line, fmt::format("{}() with positional arguments is not supported", name));
      if (name == "dict") return Value::of(std::move(attrs));
      Value ns;
      ns.kind = Value::Kind::ns;
      ns.ns = std::make_shared<Json>(std::move(attrs));
      return ns;
    }
    const std::vector<Value> args = arguments(e);
    if (name == "raise_exception") {
      throw makeError("{}: the template raised an error: {}", origin_, args.empty() ? std::string() : toText(args[0], e.line));
    }
    if (name == "strftime_now") {
      if (args.size() != 1 || !args[0].isString()) fail(e.line, "strftime_now() takes one format string");
      const std::time_t now = std::time(nullptr);
      std::tm local{};
      localtime_r(&now, &local);
      char buffer[256];
      const std::size_t n = std::strftime(buffer, sizeof(buffer), args[0].str().c_str(), &local);
      return Value::of(std::string(buffer, n));
    }
    if (name == "range") {
      std::vector<std::int64_t> bounds;
      for (const auto& a : args) {
        if (a.kind != Value::Kind::data || !a.j.is_number_integer()) fail(e.line, "range() takes integers");
        bounds.push_back(a.j.get<std::int64_t>());
      }
      if (bounds.empty() || bounds.size() > 3) fail(e.line, "range() takes one to three integers");
      const std::int64_t lo = bounds.size() >= 2 ? bounds[0] : 0, hi = bounds.size() >= 2 ? bounds[1] : bounds[0];
      const std::int64_t step = bounds.size() == 3 ? bounds[2] : 1;
      if (step == 0) fail(e.line, "range() step cannot be zero");
      if ((hi - lo) / step > 1'000'000) fail(e.line, "range() of more than a million items");
      countSteps(std::max<std::int64_t>(0, (hi - lo) / step), e.line);
      Json out = Json::array();
      for (std::int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(i);
      return Value::of(std::move(out));
    }
    fail(e.line, fmt::format("'{}' is undefined (no such function)", name));
  }

  std::string stringArgument(const std::vector<Value>& args, std::size_t i, const std::string& method, int line) const {
    if (i >= args.size() || !args[i].isString()) fail(line, fmt::format("{}() needs a string argument here", method));
    return args[i].str();
  }

  Value callMethod(const Value& object, const std::string& method, const Expr& e) {
    const std::vector<Value> args = arguments(e);
    if (!e.kwargs.empty()) fail(e.line, fmt::format("keyword arguments to .{}() are not supported", method));
    if (object.isString()) {
      const std::string& s = object.str();
      if (method == "startswith" || method == "endswith") {
        const std::string x = stringArgument(args, 0, method, e.line);
        const bool hit =
            x.size() <= s.size() && (method == "startswith" ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0);
        return Value::of(hit);
      }
      if (method == "strip" || method == "lstrip" || method == "rstrip") {
        std::optional<std::string> chars;
        if (!args.empty() && !(args[0].kind == Value::Kind::data && args[0].j.is_null())) chars = stringArgument(args, 0, method, e.line);
        return Value::of(strip(s, chars ? &*chars : nullptr, method != "rstrip", method != "lstrip"));
      }
      if (method == "split") {
        std::optional<std::string> separator;
        if (!args.empty() && !(args[0].kind == Value::Kind::data && args[0].j.is_null())) separator = stringArgument(args, 0, method, e.line);
        const std::int64_t maxSplit = args.size() > 1 && args[1].kind == Value::Kind::data ? args[1].j.get<std::int64_t>() : -1;
        return Value::of(splitString(s, separator, maxSplit));
      }
      if (method == "replace") {
        const std::string from = stringArgument(args, 0, method, e.line), to = stringArgument(args, 1, method, e.line);
        if (from.empty()) fail(e.line, "replace() of an empty string is not supported");
        std::string out = s;
        for (std::size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) out.replace(at, from.size(), to);
        return Value::of(out);
      }
      if (method == "upper" || method == "lower") {
        std::string out = s;
        for (char& c : out) {
          if (static_cast<unsigned char>(c) >= 0x80) fail(e.line, fmt::format(".{}() of non-ASCII text is not supported", method));
          c = static_cast<char>(method == "upper" ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
        }
        return Value::of(out);
      }
    }
    if (object.kind == Value::Kind::data && object.j.is_object()) {
      if (method == "items" || method == "keys" || method == "values") {
        Json out = Json::array();
        for (const auto& [k, x] : object.j.items()) {
          if (method == "items")
            out.push_back(Json::array({k, x}));
          else if (method == "keys")
            out.push_back(k);
          else
            out.push_back(x);
        }
        return Value::of(std::move(out));
      }
      if (method == "get") {
        const std::string key = stringArgument(args, 0, method, e.line);
        if (auto it = object.j.find(key); it != object.j.end()) return Value::of(*it);
        return args.size() > 1 ? args[1] : Value::of(nullptr);
      }
    }
    if (object.kind == Value::Kind::undefined) fail(e.line, fmt::format("'{}' is undefined (calling its .{}())", object.undefinedName, method));
    fail(e.line, fmt::format("the method .{}() is not supported by this renderer", method));
  }

  Value filter(const Expr& e) {
    const Value subject = eval(*e.args[0]);
    const std::vector<Value> args = arguments(e);
    const std::string& name = e.name;
    if (name == "tojson") {
      int indent = -1;
      for (const auto& [k, x] : e.kwargs) {
        const Value v = eval(*x);
        if (k == "indent" && v.kind == Value::Kind::data && v.j.is_number_integer()) {
          indent = static_cast<int>(v.j.get<std::int64_t>());
        } else if (!(v.kind == Value::Kind::data && v.j.is_null())) {
          fail(e.line, fmt::format("tojson({}=...) is not supported by this renderer", k));
        }
      }
      if (!args.empty() && args[0].kind == Value::Kind::data && args[0].j.is_number_integer())
        indent = static_cast<int>(args[0].j.get<std::int64_t>());
      return Value::of(pythonJsonDumps(data(subject, e.line), indent));
    }
    if (name == "length" || name == "count") {
      if (subject.kind == Value::Kind::undefined) return Value::of(0);
      if (subject.isString()) return Value::of(static_cast<std::int64_t>(iterable(subject, e.line).size()));
      if (subject.kind == Value::Kind::data && (subject.j.is_array() || subject.j.is_object()))
        return Value::of(static_cast<std::int64_t>(subject.j.size()));
      fail(e.line, "length of a value that has none");
    }
    if (name == "trim") return Value::of(strip(toText(subject, e.line), nullptr, true, true));
    if (name == "string") return Value::of(toText(subject, e.line));
    if (name == "upper" || name == "lower") return callMethod(Value::of(toText(subject, e.line)), name, e);
    if (name == "capitalize") {  // Python's str.capitalize: the first character upper, the rest lower
      std::string out = callMethod(Value::of(toText(subject, e.line)), "lower", e).str();
      if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
      return Value::of(out);
    }
    if (name == "first" || name == "last") {
      const Json seq = iterable(subject, e.line);
      if (seq.empty()) return Value::undefined(name + " of an empty sequence");
      return Value::of(name == "first" ? seq.front() : seq.back());
    }
    if (name == "list") return Value::of(iterable(subject, e.line));
    if (name == "reverse") {
      if (subject.isString()) {
        Json chars = iterable(subject, e.line);
        std::string out;
        for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->get<std::string>();
        return Value::of(out);
      }
      Json seq = iterable(subject, e.line);
      std::reverse(seq.begin(), seq.end());
      return Value::of(std::move(seq));
    }
    if (name == "join") {
      const std::string separator = args.empty() ? "" : toText(args[0], e.line);
      std::string out;
      bool first = true;
      for (const auto& x : iterable(subject, e.line)) {
        out += (first ? "" : separator) + pythonStr(x);
        first = false;
      }
      return Value::of(out);
    }
    if (name == "default" || name == "d") {
      const bool boolean = args.size() > 1 && truthy(args[1]);
      if (subject.isUndefined() || (boolean && !truthy(subject))) return args.empty() ? Value::of("") : args[0];
      return subject;
    }
    if (name == "int") {
      if (subject.kind == Value::Kind::data && subject.j.is_number()) return Value::of(static_cast<std::int64_t>(subject.j.get<double>()));
      fail(e.line, "int of a value that is not a number is not supported");
    }
    fail(e.line, fmt::format("the filter '{}' is not supported by this renderer", name));
  }

  bool test(const Expr& e) {
    const Value v = eval(*e.args[0]);
    const std::string& name = e.name;
    const bool data = v.kind == Value::Kind::data;
    if (name == "defined") return !v.isUndefined();
    if (name == "undefined") return v.isUndefined();
    if (name == "none") return data && v.j.is_null();
    if (name == "string") return data && v.j.is_string();
    if (name == "number") return data && v.j.is_number();
    if (name == "integer") return data && v.j.is_number_integer();
    if (name == "float") return data && v.j.is_number_float();
    if (name == "boolean") return data && v.j.is_boolean();
    if (name == "true") return data && v.j.is_boolean() && v.j.get<bool>();
    if (name == "false") return data && v.j.is_boolean() && !v.j.get<bool>();
    if (name == "mapping") return (data && v.j.is_object()) || v.kind == Value::Kind::ns;
    if (name == "sequence") return data && (v.j.is_array() || v.j.is_string() || v.j.is_object());
    if (name == "iterable") return data && (v.j.is_array() || v.j.is_string() || v.j.is_object());
    if (name == "odd" || name == "even") {
      if (!data || !v.j.is_number_integer()) fail(e.line, fmt::format("'is {}' of a value that is not an integer", name));
      return (v.j.get<std::int64_t>() % 2 != 0) == (name == "odd");
    }
    if (name == "equalto" || name == "eq" || name == "==") {
      const std::vector<Value> args = arguments(e);
      return !args.empty() && equal(v, args[0]);
    }
    fail(e.line, fmt::format("the test '{}' is not supported by this renderer", name));
  }

  static bool equal(const Value& a, const Value& b) {
    if (a.kind != b.kind) return false;
    if (a.kind == Value::Kind::undefined) return true;
    if (a.kind == Value::Kind::ns) return a.ns == b.ns;
    if (a.j.is_number() && b.j.is_number() && !a.j.is_boolean() && !b.j.is_boolean()) return a.j.get<double>() == b.j.get<double>();
    return a.j == b.j;
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value a = eval(*e.args[0]);
      return truthy(a) ? eval(*e.args[1]) : a;
    }
    if (op == "or") {
      Value a = eval(*e.args[0]);
      return truthy(a) ? a : eval(*e.args[1]);
    }
    const Value a = eval(*e.args[0]), b = eval(*e.args[1]);
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    if (op == "~") return Value::of(toText(a, e.line) + toText(b, e.line));
    if (op == "in" || op == "not in") return Value::of(contains(b, a, e.line) == (op == "in"));
    const Json x = data(a, e.line), y = data(b, e.line);
    if (op == "+") {
      if (x.is_string() && y.is_string()) return Value::of(x.get<std::string>() + y.get<std::string>());
      if (x.is_array() && y.is_array()) {
        Json out = x;
        for (const auto& item : y) out.push_back(item);
        return Value::of(std::move(out));
      }
    }
    if (x.is_number() && y.is_number()) return arithmetic(op, x, y, e.line);
    if (x.is_string() && y.is_string() && (op == "<" || op == "<=" || op == ">" || op == ">=")) {
      const int c = x.get<std::string>().compare(y.get<std::string>());
      return Value::of(op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0);
    }
    if (op == "*" && x.is_string() && y.is_number_integer()) {
      if (static_cast<double>(x.get_ref<const std::string&>().size()) * static_cast<double>(y.get<std::int64_t>()) > kMaxOutput) {
        fail(e.line, "a repeated string longer than 64 MiB");
      }
      std::string out;
      for (std::int64_t i = 0; i < y.get<std::int64_t>(); ++i) out += x.get<std::string>();
      return Value::of(out);
    }
    fail(e.line, fmt::format("unsupported operand types for {}: '{}' and '{}'", op, x.type_name(), y.type_name()));
  }

  Value arithmetic(const std::string& op, const Json& x, const Json& y, int line) const {
    const bool integers = x.is_number_integer() && y.is_number_integer();
    if (op == "<" || op == "<=" || op == ">" || op == ">=") {
      const double a = x.get<double>(), b = y.get<double>();
      return Value::of(op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b);
    }
    if (op == "/") {
      if (y.get<double>() == 0.0) fail(line, "division by zero");
      return Value::of(x.get<double>() / y.get<double>());
    }
    if (integers) {
      const std::int64_t a = x.get<std::int64_t>(), b = y.get<std::int64_t>();
      if (op == "+") return Value::of(a + b);
      if (op == "-") return Value::of(a - b);
      if (op == "*") return Value::of(a * b);
      if (op == "//" || op == "%") {
        if (b == 0) fail(line, "division by zero");
        std::int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // Python floors
        return Value::of(op == "//" ? q : a - q * b);
      }
      if (op == "**" && b >= 0) {
        if (b > 62) fail(line, "an integer power above 62 is not supported by this renderer");
        std::int64_t r = 1;
        for (std::int64_t i = 0; i < b; ++i) r *= a;
        return Value::of(r);
      }
    } else {
      const double a = x.get<double>(), b = y.get<double>();
      if (op == "+") return Value::of(a + b);
      if (op == "-") return Value::of(a - b);
      if (op == "*") return Value::of(a * b);
    }
    fail(line, fmt::format("the operator {} on these numbers is not supported by this renderer", op));
  }

  bool contains(const Value& haystack, const Value& needle, int line) const {
    if (haystack.kind == Value::Kind::undefined) fail(line, fmt::format("'{}' is undefined (testing 'in' it)", haystack.undefinedName));
    if (haystack.kind == Value::Kind::ns) return needle.isString() && haystack.ns->contains(needle.str());
    const Json& h = haystack.j;
    if (h.is_string()) {
      if (!needle.isString()) fail(line, "'in <string>' requires a string on the left");
      return h.get_ref<const std::string&>().find(needle.str()) != std::string::npos;
    }
    if (h.is_array()) return std::any_of(h.begin(), h.end(), [&](const Json& x) { return equal(Value::of(x), needle); });
    if (h.is_object()) return needle.isString() && h.contains(needle.str());
    fail(line, "'in' a value that is not a string, list or dictionary");
  }

  const std::string& origin_;
  std::vector<std::unordered_map<std::string, Value>> scopes_;
  std::unordered_map<std::string, const Node*> macros_;
  int macroDepth_ = 0;
  std::int64_t steps_ = 0;
  std::string out_;
};

}  // namespace

struct ChatTemplate::Impl {
  std::string origin;
  Body body;
};

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::parse(std::string_view source, const std::string& origin) {
  auto impl = std::make_unique<Impl>();
  impl->origin = origin;
  impl->body = jinja::parseTemplate(source, impl->origin);
  return ChatTemplate(std::move(impl));
}

std::string ChatTemplate::render(const Json& context) const { return Renderer(impl_->origin, context).run(impl_->body); }

const std::string& ChatTemplate::origin() const { return impl_->origin; }

}  // namespace cuset
