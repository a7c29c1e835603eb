#include "cuset/evaluator/kernelbench/cuda_source_split.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "cuset/common/cpp_lexer.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"

namespace cuset {
namespace {

// Tokens of the code that is neither comment, literal nor preprocessor line (common/cpp_lexer.hpp).
// Literals become one token ("s") and numbers "0", so that braces inside strings never count.
struct Token {
  std::string text;
  std::size_t begin = 0, end = 0;
};

struct Directive {
  std::size_t begin = 0, end = 0;  // the whole line, continuations included, without the newline
};

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return isCppIdentifierChar(c); }

struct Scanned {
  std::vector<Token> tokens;
  std::vector<Directive> directives;
};

Scanned scan(std::string_view s) {
  Scanned out;
  for (const CppToken& t : lexCpp(s)) {
    switch (t.kind) {
      case CppToken::Kind::comment:
        break;
      case CppToken::Kind::directive:
        out.directives.push_back({t.begin, t.end});
        break;
      case CppToken::Kind::literal:
        out.tokens.push_back({"s", t.begin, t.end});
        break;
      case CppToken::Kind::number:
        out.tokens.push_back({"0", t.begin, t.end});
        break;
      case CppToken::Kind::identifier:
      case CppToken::Kind::punct:
        out.tokens.push_back({std::string(t.text(s)), t.begin, t.end});
        break;
    }
  }
  return out;
}

bool isOpen(const std::string& t) { return t == "(" || t == "[" || t == "{"; }
bool isClose(const std::string& t) { return t == ")" || t == "]" || t == "}"; }

// Names whose presence marks a namespace-scope declaration as host-only for the device half.
bool mentionsHostLibrary(const std::vector<Token>& t, std::size_t from, std::size_t to) {
  static const std::set<std::string> kHost = {"torch", "at", "c10", "pybind11", "py", "Tensor", "PYBIND11_MODULE", "TORCH_LIBRARY"};
  for (std::size_t k = from; k < to; ++k) {
    if (kHost.contains(t[k].text)) return true;
  }
  return false;
}

class Splitter {
 public:
  explicit Splitter(std::string_view source) : src_(source), scanned_(scan(source)), t_(scanned_.tokens) {}

  SplitCudaSource run() {
    scope(0, t_.size(), /*inClass=*/false);
    SplitCudaSource out;
    out.device = std::string(src_);
    for (const auto& [b, e] : deviceBlanks_) blank(out.device, b, e);
    for (const auto& d : scanned_.directives) {
      if (!keepDirectiveOnDevice(d)) blank(out.device, d.begin, d.end);
    }
    out.host = std::string(src_);
    // Edits from the back, so earlier offsets stay valid.
    std::vector<Edit> edits = hostEdits_;
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
    for (const auto& e : edits) out.host.replace(e.begin, e.end - e.begin, e.text);
    out.kernels = kernels_;
    out.launches = launches_;
    return out;
  }

 private:
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };

  // Spaces for everything but newlines: line numbers stay where they were.
  static void blank(std::string& s, std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e && k < s.size(); ++k) {
      if (s[k] != '\n') s[k] = ' ';
    }
  }

  bool keepDirectiveOnDevice(const Directive& d) const {
    std::string_view line = src_.substr(d.begin, d.end - d.begin);
    std::size_t k = line.find_first_not_of(" \t#");
    if (k == std::string_view::npos || line.substr(k, 7) != "include") return true;
    const std::size_t open = line.find_first_of("<\"", k + 7);
    if (open == std::string_view::npos || line[open] == '"') return false;
    const std::size_t close = line.find('>', open);
    if (close == std::string_view::npos) return false;
    return isAllowedHeader(line.substr(open + 1, close - open - 1));
  }

  std::size_t match(std::size_t open) const {
    int depth = 0;
    for (std::size_t k = open; k < t_.size(); ++k) {
      if (isOpen(t_[k].text))
        ++depth;
      else if (isClose(t_[k].text) && --depth == 0)
        return k;
    }
    return t_.size() - 1;
  }

  // Past the `>` closing the template parameter list that starts at t_[open] == "<".
  std::size_t skipAngles(std::size_t open) const {
    int depth = 0;
    for (std::size_t k = open; k < t_.size(); ++k) {
      const std::string& x = t_[k].text;
      if (x == "(" || x == "[")
        k = match(k);
      else if (x == "<")
        ++depth;
      else if (x == ">")
        --depth;
      else if (x == ">>")
        depth -= 2;
      else if (x == ">>>")
        depth -= 3;
      if (depth <= 0) return k + 1;
    }
    return t_.size();
  }

  bool has(std::size_t from, std::size_t to, std::string_view word) const {
    for (std::size_t k = from; k < to; ++k) {
      if (t_[k].text == word) return true;
    }
    return false;
  }

  // One declaration after another until `end` (or a `}` closing the scope).
  void scope(std::size_t i, std::size_t end, bool inClass) {
    while (i < end) {
      if (t_[i].text == "}") return;
      i = declaration(i, end, inClass);
    }
  }

  // Parses one declaration starting at `start`; returns the index after it.
  std::size_t declaration(std::size_t start, std::size_t end, bool inClass) {
    bool paren = false, assign = false, braces = false, memberInit = false;
    std::size_t k = start;
    while (k < end) {
      const std::string& x = t_[k].text;
      if (x == "template" && k + 1 < end && t_[k + 1].text == "<") {
        k = skipAngles(k + 1);
        continue;
      }
      if (x == "(" || x == "[") {
        // An attribute's parentheses (struct __align__(16) {...}) do not make a function.
        const bool attribute = k > start && (t_[k - 1].text == "__align__" || t_[k - 1].text == "alignas" || t_[k - 1].text == "__attribute__" ||
                                             t_[k - 1].text == "__declspec" || t_[k - 1].text == "__launch_bounds__");
        if (x == "(" && !attribute) paren = true;
        k = match(k) + 1;
        continue;
      }
      if (x == ";") {
        finishDeclaration(start, k, paren, assign, braces, inClass);
        return k + 1;
      }
      if (x == "=" && !(k > start && t_[k - 1].text == "operator")) assign = true;
      if (x == ":" && paren && !assign) memberInit = true;
      if (x == "}") return k;  // the scope's end: a declaration without ';' (a stray token)
      if (x == "{") {
        const std::size_t close = match(k);
        const std::string& first = t_[start].text;
        if (first == "namespace" || (first == "inline" && start + 1 < end && t_[start + 1].text == "namespace")) {
          scope(k + 1, close, false);
          return close + 1;
        }
        if (first == "extern" && start + 1 < k && t_[start + 1].text == "s" && k == start + 2) {  // extern "C" { ... }
          scope(k + 1, close, false);
          return close + 1;
        }
        if (assign) {  // an initializer: int a[] = {...}; auto f = [] {...};
          braces = true;
          k = close + 1;
          continue;
        }
        const bool classKey = has(start, k, "class") || has(start, k, "struct") || has(start, k, "union") || has(start, k, "enum");
        if (classKey && !paren) {
          if (!has(start, k, "enum")) scope(k + 1, close, true);
          braces = true;
          k = close + 1;
          continue;
        }
        if (memberInit && k > start && (identChar(src_[t_[k - 1].end - 1]) || t_[k - 1].text == ">")) {  // b{2} in a member-init list
          k = close + 1;
          continue;
        }
        if (paren) {
          function(start, k, close);
          std::size_t next = close + 1;
          if (next < end && t_[next].text == ";") ++next;
          return next;
        }
        braces = true;  // something else with a body: leave it as it is
        k = close + 1;
        continue;
      }
      ++k;
    }
    return end;
  }

  void finishDeclaration(std::size_t start, std::size_t semi, bool paren, bool assign, bool braces, bool inClass) {
    if (inClass || braces) return;
    const bool device = has(start, semi, "__global__") || has(start, semi, "__device__") || has(start, semi, "__constant__") ||
                        has(start, semi, "__shared__") || has(start, semi, "__managed__");
    // A __device__ function's prototype leaves host code: its definition is deleted there (function()),
    // and a deleted definition must be the first declaration.
    const bool deviceFunction =
        paren && !assign && has(start, semi, "__device__") && !has(start, semi, "__host__") && !has(start, semi, "__global__");
    if (deviceFunction) hostEdits_.push_back({t_[start].begin, t_[semi].end, std::string(newlines(t_[start].begin, t_[semi].end), '\n')});
    if (device) return;
    const std::string& first = t_[start].text;
    const bool hostLibrary = mentionsHostLibrary(t_, start, semi);
    const bool prototype = paren && !assign && first != "typedef" && first != "using" && first != "static_assert";
    if (hostLibrary || prototype) deviceBlanks_.emplace_back(t_[start].begin, t_[semi].end);
  }

  void function(std::size_t start, std::size_t bodyOpen, std::size_t bodyClose) {
    const bool global = has(start, bodyOpen, "__global__");
    const bool device = global || has(start, bodyOpen, "__device__");
    const bool host = has(start, bodyOpen, "__host__");
    if (global) {
      // The name is the identifier before the parameter list (after __launch_bounds__(...), if any).
      std::size_t k = start;
      std::size_t lastParenName = 0;
      while (k < bodyOpen) {
        if (t_[k].text == "template" && k + 1 < bodyOpen && t_[k + 1].text == "<") {
          k = skipAngles(k + 1);
          continue;
        }
        if (t_[k].text == "(") {
          if (k > start && identStart(t_[k - 1].text[0]) && t_[k - 1].text != "__launch_bounds__") lastParenName = k - 1;
          k = match(k) + 1;
          continue;
        }
        ++k;
      }
      if (lastParenName) kernels_.push_back(t_[lastParenName].text);
    }
    if (device && !host) {
      // Host code needs only the signature. A __device__ function is deleted there, so host code that
      // calls one fails to build, as nvcc refuses it ("calling a __device__ function from a __host__
      // function is not allowed"); a kernel keeps an empty body, for its launches to take its address.
      const std::string lines(newlines(t_[bodyOpen].begin, t_[bodyClose].end), '\n');
      if (global) {
        hostEdits_.push_back({t_[bodyOpen].begin + 1, t_[bodyClose].begin, lines});
      } else {
        hostEdits_.push_back({t_[bodyOpen].begin, t_[bodyClose].end, " = delete;" + lines});
      }
      return;
    }
    if (!device) deviceBlanks_.emplace_back(t_[start].begin, t_[bodyClose].end);
    rewriteLaunches(bodyOpen, bodyClose);
  }

  std::size_t newlines(std::size_t b, std::size_t e) const { return static_cast<std::size_t>(std::count(src_.begin() + b, src_.begin() + e, '\n')); }

  // kernel<T><<<grid, block, shared, stream>>>(args) -> ::cuset_kb::Launch<&kernel<T>>(grid, block, shared, stream)(args)
  void rewriteLaunches(std::size_t bodyOpen, std::size_t bodyClose) {
    for (std::size_t k = bodyOpen; k < bodyClose; ++k) {
      if (t_[k].text != "<<<") continue;
      std::size_t calleeStart = k;
      std::size_t p = k;
      while (p > bodyOpen + 1) {
        const std::string& prev = t_[p - 1].text;
        if (prev == ">" || prev == ">>") {
          int depth = 0;
          std::size_t q = p - 1;
          for (; q > bodyOpen; --q) {
            const std::string& y = t_[q].text;
            if (y == ">")
              ++depth;
            else if (y == ">>")
              depth += 2;
            else if (y == "<" && --depth == 0)
              break;
          }
          p = q;
          continue;
        }
        if (identStart(prev[0]) || prev == "::") {
          --p;
          calleeStart = p;
          continue;
        }
        break;
      }
      std::size_t close = k + 1;
      for (int depth = 0; close < bodyClose; ++close) {
        const std::string& y = t_[close].text;
        if (y == "(" || y == "[" || y == "{")
          ++depth;
        else if (y == ")" || y == "]" || y == "}")
          --depth;
        else if (y == ">>>" && depth == 0)
          break;
      }
      if (calleeStart == k || close >= bodyClose) continue;  // not a launch we can read: the host build will say why
      const std::string callee(src_.substr(t_[calleeStart].begin, t_[k - 1].end - t_[calleeStart].begin));
      const std::string config(src_.substr(t_[k].end, t_[close].begin - t_[k].end));
      hostEdits_.push_back({t_[calleeStart].begin, t_[close].end, "::cuset_kb::Launch<&" + callee + " >(" + config + ")"});
      ++launches_;
      k = close;
    }
  }

  std::string_view src_;
  Scanned scanned_;
  const std::vector<Token>& t_;
  std::vector<std::pair<std::size_t, std::size_t>> deviceBlanks_;
  std::vector<Edit> hostEdits_;
  std::vector<std::string> kernels_;
  int launches_ = 0;
};

}  // namespace

SplitCudaSource splitCudaSource(std::string_view source) { return Splitter(source).run(); }

}  // namespace cuset
