// Parsing inline PTX into a Program: statements split at ';', scopes at '{' '}', `.reg` declarations
// numbered after the asm operands, each instruction's modifiers decoded once. What is PTX but not
// simulated is `unsupported`, naming the instruction; what is not PTX at all (x86 in host code) is
// `not_ptx`, so the host compiler still sees it as written.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>

#include "ptx_program.hpp"

namespace cuset_sim::ptx {

namespace {

using Kind = PtxCheck::Kind;

// Every PTX opcode (PTX ISA 8.x), so that text using one is recognised as PTX even when the
// simulator does not run it.
constexpr std::string_view kPtxOpcodes[] = {
    "abs",          "activemask", "add",       "addc",     "alloca", "and",          "applypriority", "atom",  "bar",        "barrier",
    "bfe",          "bfi",        "bfind",     "bmsk",     "bra",    "brev",         "brkpt",         "brx",   "call",       "clusterlaunchcontrol",
    "clz",          "cnot",       "copysign",  "cos",      "cp",     "createpolicy", "cvt",           "cvta",  "discard",    "div",
    "dp2a",         "dp4a",       "elect",     "ex2",      "exit",   "fence",        "fma",           "fns",   "getctarank", "griddepcontrol",
    "isspacep",     "istypep",    "ld",        "ldmatrix", "ldu",    "lg2",          "lop3",          "mad",   "mad24",      "madc",
    "mapa",         "match",      "max",       "mbarrier", "membar", "min",          "mma",           "mov",   "movmatrix",  "mul",
    "mul24",        "multimem",   "nanosleep", "neg",      "not",    "or",           "pmevent",       "popc",  "prefetch",   "prefetchu",
    "prmt",         "rcp",        "red",       "redux",    "rem",    "ret",          "rsqrt",         "sad",   "selp",       "set",
    "setmaxnreg",   "setp",       "shf",       "shfl",     "shl",    "shr",          "sin",           "slct",  "sqrt",       "st",
    "stackrestore", "stacksave",  "stmatrix",  "sub",      "subc",   "suld",         "suq",           "sured", "sust",       "szext",
    "tanh",         "tcgen05",    "tensormap", "testp",    "tex",    "tld4",         "trap",          "txq",   "vabsdiff",   "vabsdiff2",
    "vabsdiff4",    "vadd",       "vmad",      "vmax",     "vmin",   "vote",         "vset",          "vshl",  "vshr",       "vsub",
    "wgmma",        "wmma",       "xor"};

// PTX instructions that take no modifier; any other PTX instruction has at least one (`mov.u32`),
// which tells it from x86's `mov %rax, %rbx`.
bool bareOpcode(std::string_view op) { return op == "ret" || op == "exit" || op == "trap" || op == "brkpt" || op == "bra" || op == "pmevent"; }

bool isPtxOpcode(std::string_view op) { return std::find(std::begin(kPtxOpcodes), std::end(kPtxOpcodes), op) != std::end(kPtxOpcodes); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<Type> typeNamed(std::string_view s) {
  static const std::map<std::string_view, Type> kTypes = {{"b8", Type::b8},   {"b16", Type::b16},     {"b32", Type::b32},   {"b64", Type::b64},
                                                          {"u8", Type::u8},   {"u16", Type::u16},     {"u32", Type::u32},   {"u64", Type::u64},
                                                          {"s8", Type::s8},   {"s16", Type::s16},     {"s32", Type::s32},   {"s64", Type::s64},
                                                          {"f16", Type::f16}, {"f16x2", Type::f16x2}, {"bf16", Type::bf16}, {"bf16x2", Type::bf16x2},
                                                          {"f32", Type::f32}, {"f64", Type::f64},     {"tf32", Type::tf32}, {"pred", Type::pred}};
  auto it = kTypes.find(s);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

std::optional<Special> specialNamed(std::string_view s) {
  static const std::map<std::string_view, Special> kSpecials = {{"%laneid", Special::laneid},
                                                                {"%warpid", Special::warpid},
                                                                {"%nwarpid", Special::nwarpid},
                                                                {"%tid.x", Special::tid_x},
                                                                {"%tid.y", Special::tid_y},
                                                                {"%tid.z", Special::tid_z},
                                                                {"%ntid.x", Special::ntid_x},
                                                                {"%ntid.y", Special::ntid_y},
                                                                {"%ntid.z", Special::ntid_z},
                                                                {"%ctaid.x", Special::ctaid_x},
                                                                {"%ctaid.y", Special::ctaid_y},
                                                                {"%ctaid.z", Special::ctaid_z},
                                                                {"%nctaid.x", Special::nctaid_x},
                                                                {"%nctaid.y", Special::nctaid_y},
                                                                {"%nctaid.z", Special::nctaid_z},
                                                                {"%smid", Special::smid},
                                                                {"%nsmid", Special::nsmid},
                                                                {"%gridid", Special::gridid},
                                                                {"%clock", Special::clock},
                                                                {"%clock_hi", Special::clock_hi},
                                                                {"%clock64", Special::clock64},
                                                                {"%globaltimer", Special::globaltimer},
                                                                {"%globaltimer_lo", Special::globaltimer_lo},
                                                                {"%globaltimer_hi", Special::globaltimer_hi},
                                                                {"%lanemask_eq", Special::lanemask_eq},
                                                                {"%lanemask_le", Special::lanemask_le},
                                                                {"%lanemask_lt", Special::lanemask_lt},
                                                                {"%lanemask_ge", Special::lanemask_ge},
                                                                {"%lanemask_gt", Special::lanemask_gt}};
  auto it = kSpecials.find(s);
  if (it == kSpecials.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '{' || s[i] == '[') ++depth;
    if (s[i] == '}' || s[i] == ']') --depth;
    if (s[i] == sep && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(s.substr(start)));
  return parts;
}

struct Failure {
  Kind kind;
  std::string message;
};

class Parser {
 public:
  Parser(int operands, Program& program) : program_(program) {
    program_.operands = operands;
    program_.registers = operands;
    types_.assign(static_cast<std::size_t>(operands), Type::none);
    scopes_.emplace_back();
  }

  // One statement (without its ';'); a leading '{' or trailing '}' opens or closes a scope.
  void statement(std::string_view s) {
    s = trim(s);
    while (!s.empty() && (s.front() == '{' || s.front() == '}')) {
      scope(s.front());
      s = trim(s.substr(1));
    }
    // A scope closing at the end of the last statement (`... }` with no ';' after it).
    int closes = 0;
    while (!s.empty() && s.back() == '}' && std::count(s.begin(), s.end(), '{') < std::count(s.begin(), s.end(), '}')) {
      ++closes;
      s = trim(s.substr(0, s.size() - 1));
    }
    s = labels(s);
    if (!s.empty()) {
      if (s.front() == '.') {
        directive(s);
      } else {
        instruction(s);
      }
    }
    for (int i = 0; i < closes; ++i) scope('}');
  }

  // Points every branch at its label, once all statements are read (a branch may jump forward).
  void resolveBranches() {
    for (const auto& [index, name] : branches_) {
      const auto it = labels_.find(name);
      if (it == labels_.end()) fail(Kind::unsupported, "inline PTX `" + program_.code[index].text + "` branches to an undefined label");
      program_.code[index].target = it->second;
    }
  }

 private:
  [[noreturn]] void fail(Kind kind, std::string message) { throw Failure{kind, std::move(message)}; }
  [[noreturn]] void unsupported(std::string_view what, std::string_view why = {}) {
    fail(Kind::unsupported, "inline PTX `" + std::string(what) + "` is not simulated" + (why.empty() ? "" : " (" + std::string(why) + ")"));
  }

  // Takes the labels (`name:`) that open a statement, each naming the next instruction's index.
  std::string_view labels(std::string_view s) {
    for (;;) {
      std::size_t i = 0;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '$')) ++i;
      if (i == 0 || i >= s.size() || s[i] != ':' || std::isdigit(static_cast<unsigned char>(s[0]))) return s;
      if (!labels_.emplace(std::string(s.substr(0, i)), program_.code.size()).second) {
        fail(Kind::unsupported, "inline PTX defining label `" + std::string(s.substr(0, i)) + "` twice");
      }
      s = trim(s.substr(i + 1));
    }
  }

  void scope(char c) {
    if (c == '{') {
      scopes_.emplace_back();
    } else if (scopes_.size() > 1) {
      scopes_.pop_back();
    } else {
      fail(Kind::unsupported, "inline PTX with an unbalanced '}'");
    }
  }

  void directive(std::string_view s) {
    // .reg .type name, name<4>, ...
    // Any other directive (.pushsection, .globl) is assembler text for the host, not PTX.
    if (s.substr(0, 4) != ".reg" || (s.size() > 4 && !std::isspace(static_cast<unsigned char>(s[4])))) {
      fail(Kind::not_ptx, "`" + std::string(s.substr(0, s.find_first_of(" \t\n"))) + "` is not a PTX register declaration");
    }
    s = trim(s.substr(4));
    const std::size_t space = s.find_first_of(" \t\n");
    if (s.empty() || s.front() != '.' || space == std::string_view::npos) fail(Kind::unsupported, "inline PTX `.reg` without a type");
    const std::optional<Type> type = typeNamed(s.substr(1, space - 1));
    if (!type) unsupported(s, "register type");
    for (std::string_view name : split(s.substr(space + 1), ',')) {
      if (name.empty()) continue;
      const std::size_t angle = name.find('<');
      if (angle == std::string_view::npos) {
        declare(std::string(name), *type);
        continue;
      }
      int count = 0;
      const std::string_view digits = name.substr(angle + 1, name.size() - angle - 2);
      std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (count <= 0 || count > kMaxRegisters || name.back() != '>') fail(Kind::unsupported, "inline PTX register range `" + std::string(name) + "`");
      for (int i = 0; i < count; ++i) declare(std::string(name.substr(0, angle)) + std::to_string(i), *type);
    }
  }

  void declare(std::string name, Type type) {
    if (program_.registers >= kMaxRegisters) fail(Kind::unsupported, "PTX declaring more than " + std::to_string(kMaxRegisters) + " registers");
    scopes_.back()[std::move(name)] = program_.registers++;
    types_.resize(static_cast<std::size_t>(program_.registers), Type::none);
    types_.back() = type;
  }
  bool isPredicate(const Operand& o) const {
    return o.kind == Operand::Kind::reg && o.reg >= 0 && static_cast<std::size_t>(o.reg) < types_.size() &&
           types_[static_cast<std::size_t>(o.reg)] == Type::pred;
  }

  std::optional<int> lookup(std::string_view name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto f = it->find(std::string(name)); f != it->end()) return f->second;
    }
    return std::nullopt;
  }

  int registerNamed(std::string_view name, std::string_view instr) {
    name = trim(name);
    if (!name.empty() && name.front() == '$') {
      int n = -1;
      std::from_chars(name.data() + 1, name.data() + name.size(), n);
      if (n < 0 || n >= program_.operands)
        fail(Kind::unsupported, "inline PTX naming operand %" + std::string(name.substr(1)) + ", which the asm statement does not have");
      return n;
    }
    if (auto r = lookup(name)) return *r;
    fail(Kind::unsupported,
         "inline PTX `" + std::string(instr) + "` uses `" + std::string(name) + "`, which is neither an operand nor a declared register");
  }

  Operand operand(std::string_view s, std::string_view instr) {
    s = trim(s);
    Operand o;
    if (s.empty()) fail(Kind::unsupported, "inline PTX `" + std::string(instr) + "` with an empty operand");
    if (s.front() == '{') {
      if (s.back() != '}') fail(Kind::unsupported, "inline PTX `" + std::string(instr) + "`: unclosed vector operand");
      o.kind = Operand::Kind::vector;
      for (std::string_view e : split(s.substr(1, s.size() - 2), ',')) o.elements.push_back(e == "_" ? -1 : registerNamed(e, instr));
      return o;
    }
    if (s.front() == '[') {
      if (s.back() != ']') fail(Kind::unsupported, "inline PTX `" + std::string(instr) + "`: unclosed address operand");
      o.kind = Operand::Kind::address;
      std::string_view inner = trim(s.substr(1, s.size() - 2));
      std::size_t plus = inner.find_first_of("+-", 1);
      std::string_view base = trim(inner.substr(0, plus));
      if (!base.empty() && (std::isdigit(static_cast<unsigned char>(base.front())) || base.front() == '-')) {
        o.imm = immediate(base, instr).imm;
      } else {
        o.reg = registerNamed(base, instr);
        if (plus != std::string_view::npos) {
          const bool minus = inner[plus] == '-';
          std::string_view off = trim(inner.substr(plus + 1));
          const std::uint64_t v = immediate(off, instr).imm;
          o.imm = minus ? ~v + 1 : v;
        }
      }
      return o;
    }
    if (const std::size_t bar = s.find('|'); bar != std::string_view::npos) {
      o = operand(s.substr(0, bar), instr);
      o.pair = registerNamed(s.substr(bar + 1), instr);
      return o;
    }
    if (std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '-' || s.front() == '+') return immediate(s, instr);
    if (s.front() == '%' && !lookup(s)) {
      if (auto sp = specialNamed(s)) {
        o.kind = Operand::Kind::special;
        o.special = *sp;
        return o;
      }
      unsupported(instr, "special register " + std::string(s));
    }
    if (s.front() == '!') unsupported(instr, "negated predicate operand");
    o.reg = registerNamed(s, instr);
    return o;
  }

  Operand immediate(std::string_view s, std::string_view instr) {
    Operand o;
    o.kind = Operand::Kind::imm;
    std::string text(trim(s));
    while (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.pop_back();
    bool negative = false;
    std::string_view t = text;
    if (!t.empty() && (t.front() == '-' || t.front() == '+')) {
      negative = t.front() == '-';
      t.remove_prefix(1);
    }
    std::uint64_t v = 0;
    auto hex = [&](std::string_view digits) {
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
      if (ec != std::errc() || p != digits.data() + digits.size())
        fail(Kind::unsupported, "inline PTX `" + std::string(instr) + "`: bad constant " + text);
    };
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
      hex(t.substr(2));
    } else if (t.size() == 10 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F')) {
      hex(t.substr(2));  // single-precision bits
    } else if (t.size() == 18 && t[0] == '0' && (t[1] == 'd' || t[1] == 'D')) {
      hex(t.substr(2));  // double-precision bits
    } else if (t.find_first_of(".eE") != std::string_view::npos) {
      const double d = std::strtod(std::string(t).c_str(), nullptr);
      std::memcpy(&v, &d, sizeof d);
      o.floatLiteral = true;
    } else {
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 10);
      if (ec != std::errc() || p != t.data() + t.size()) fail(Kind::unsupported, "inline PTX `" + std::string(instr) + "`: bad constant " + text);
    }
    if (negative) {
      if (o.floatLiteral) {
        double d;
        std::memcpy(&d, &v, sizeof d);
        d = -d;
        std::memcpy(&v, &d, sizeof d);
      } else {
        v = ~v + 1;
      }
    }
    o.imm = v;
    return o;
  }

  void instruction(std::string_view s) {
    Instr in;
    in.text = std::string(s);
    std::replace(in.text.begin(), in.text.end(), '$', '%');  // as the candidate wrote it
    if (s.front() == '@') {
      std::size_t end = s.find_first_of(" \t\n");
      std::string_view g = s.substr(1, end - 1);
      if (!g.empty() && g.front() == '!') {
        in.guardNegated = true;
        g.remove_prefix(1);
      }
      in.guard = registerNamed(g, s);
      s = end == std::string_view::npos ? std::string_view() : trim(s.substr(end));
      if (s.empty()) fail(Kind::unsupported, "inline PTX `" + in.text + "`: a guard without an instruction");
    }
    const std::size_t end = s.find_first_of(" \t\n");
    const std::string_view opcode = s.substr(0, end);
    std::vector<std::string_view> mods = split(opcode, '.');
    const std::string_view base = mods.front();
    mods.erase(mods.begin());
    if (!isPtxOpcode(base) || (mods.empty() && !bareOpcode(base))) {
      fail(Kind::not_ptx, "`" + std::string(opcode) + "` is not a PTX instruction");
    }
    if (base == "bra" || base == "ret" || base == "exit") {
      // bra[.uni] label; ret[.uni]; exit. Branches diverge lanes freely: each simulated thread has its own
      // program counter, and warp collectives check that the lanes they wait for meet at one instruction.
      if (!std::all_of(mods.begin(), mods.end(), [](std::string_view m) { return m == "uni"; })) unsupported(in.text, "modifier");
      in.op = base == "bra" ? Op::bra : Op::exit;
      const std::string_view target = end == std::string_view::npos ? std::string_view() : trim(s.substr(end));
      if ((in.op == Op::bra) == target.empty()) unsupported(in.text, "operands");
      if (in.op == Op::bra) branches_.emplace_back(program_.code.size(), std::string(target));
      program_.code.push_back(std::move(in));
      return;
    }
    if (end != std::string_view::npos) {
      for (std::string_view o : split(s.substr(end), ',')) in.operands.push_back(operand(o, in.text));
    }
    decode(base, mods, in);
    program_.code.push_back(std::move(in));
  }

  void need(const Instr& in, std::size_t count) {
    if (in.operands.size() != count) {
      fail(Kind::unsupported,
           "inline PTX `" + in.text + "`: expected " + std::to_string(count) + " operands, found " + std::to_string(in.operands.size()));
    }
  }

  // Sets `in.type` from the last modifier that names a type and requires every other modifier to be
  // one of `allowed`.
  void typed(Instr& in, const std::vector<std::string_view>& mods, std::initializer_list<std::string_view> allowed) {
    for (std::string_view m : mods) {
      if (auto t = typeNamed(m)) {
        in.type = *t;
      } else if (std::find(allowed.begin(), allowed.end(), m) == allowed.end()) {
        unsupported(in.text, "modifier ." + std::string(m));
      }
    }
    if (in.type == Type::none) unsupported(in.text, "no type");
  }

  static std::optional<Rounding> roundingNamed(std::string_view m) {
    static const std::map<std::string_view, Rounding> k = {{"rn", Rounding::rn},   {"rz", Rounding::rz},   {"rm", Rounding::rm},
                                                           {"rp", Rounding::rp},   {"rna", Rounding::rna}, {"rni", Rounding::rni},
                                                           {"rzi", Rounding::rzi}, {"rmi", Rounding::rmi}, {"rpi", Rounding::rpi}};
    auto it = k.find(m);
    if (it == k.end()) return std::nullopt;
    return it->second;
  }

  void memory(Instr& in, const std::vector<std::string_view>& mods, bool load) {
    for (std::string_view m : mods) {
      if (auto t = typeNamed(m)) {
        in.type = *t;
      } else if (m == "global") {
        in.space = Space::global;
      } else if (m == "shared" || m == "shared::cta") {
        in.space = Space::shared;
      } else if (m == "v2" || m == "v4") {
        in.vec = m[1] - '0';
      } else if (m == "weak" || m == "volatile" || m == "relaxed" || m == "acquire" || m == "release" || m == "cta" || m == "gpu" || m == "sys" ||
                 m == "cluster" || m.substr(0, 4) == "L1::" || m == "L2::64B" || m == "L2::128B" || m == "L2::256B" ||
                 (load && (m == "nc" || m == "ca" || m == "cg" || m == "cs" || m == "lu" || m == "cv")) ||
                 (!load && (m == "wb" || m == "cg" || m == "cs" || m == "wt"))) {
        // Caching and ordering: every access is coherent and in program order on the simulator.
      } else {
        unsupported(in.text,
                    m == "local" || m == "const" || m == "param" ? "the ." + std::string(m) + " state space" : "modifier ." + std::string(m));
      }
    }
    if (in.type == Type::none || in.type == Type::pred || in.type == Type::f16x2 || in.type == Type::bf16x2 || in.type == Type::tf32)
      unsupported(in.text, "type");
    need(in, 2);
    const Operand& data = in.operands[load ? 0 : 1];
    const Operand& addr = in.operands[load ? 1 : 0];
    if (addr.kind != Operand::Kind::address) unsupported(in.text, "the address must be written [...]");
    if (in.vec > 1 && (data.kind != Operand::Kind::vector || static_cast<int>(data.elements.size()) != in.vec)) unsupported(in.text, "vector size");
    // `{ %r1 }`, one register in braces, is a scalar access (as Triton writes its loads and stores).
    if (in.vec == 1 && data.kind == Operand::Kind::vector && data.elements.size() != 1) unsupported(in.text, "a vector without .v2/.v4");
  }

  // ldmatrix/stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans][.shared].b16: the address, and 1, 2 or 4
  // registers (the destination of ldmatrix, the source of stmatrix).
  void matrixMove(Instr& in, const std::vector<std::string_view>& mods, std::string_view name) {
    bool shape = false, sync = false, aligned = false;
    for (std::string_view m : mods) {
      if (m == "sync")
        sync = true;
      else if (m == "aligned")
        aligned = true;
      else if (m == "m8n8")
        shape = true;
      else if (m == "x1" || m == "x2" || m == "x4")
        in.vec = m[1] - '0';
      else if (m == "trans")
        in.trans = true;
      else if (m == "shared" || m == "shared::cta")
        in.space = Space::shared;
      else if (m == "b16")
        in.type = Type::b16;
      else
        unsupported(in.text, "modifier ." + std::string(m));
    }
    if (!shape || in.type != Type::b16 || !sync || !aligned)
      unsupported(in.text, "only " + std::string(name) + ".sync.aligned.m8n8.{x1,x2,x4}[.trans].b16 is");
    need(in, 2);
    const bool store = in.op == Op::stmatrix;
    if (in.operands[store ? 0 : 1].kind != Operand::Kind::address) unsupported(in.text, "address");
    const Operand& r = in.operands[store ? 1 : 0];
    if ((in.vec == 1 && r.kind == Operand::Kind::vector && r.elements.size() != 1) ||
        (in.vec > 1 && (r.kind != Operand::Kind::vector || static_cast<int>(r.elements.size()) != in.vec))) {
      unsupported(in.text, "register count");
    }
    program_.collectives = true;
  }

  void decode(std::string_view base, std::vector<std::string_view> mods, Instr& in) {
    if (base == "mov") {
      in.op = Op::mov;
      typed(in, mods, {});
      need(in, 2);
    } else if (base == "cvt") {
      decodeCvt(mods, in);
    } else if (base == "cvta") {
      decodeCvta(mods, in);
    } else if (base == "ld" || base == "ldu") {
      in.op = Op::ld;
      memory(in, mods, true);
    } else if (base == "st") {
      in.op = Op::st;
      memory(in, mods, false);
    } else if (base == "shfl") {
      decodeShfl(mods, in);
    } else if (base == "redux") {
      // redux.sync.<op>.<type> d, a, membermask: integer add/min/max/and/or/xor over the lanes of the mask.
      static const std::map<std::string_view, AtomicOp> kOps = {{"add", AtomicOp::add},  {"min", AtomicOp::min}, {"max", AtomicOp::max},
                                                                {"and", AtomicOp::and_}, {"or", AtomicOp::or_},  {"xor", AtomicOp::xor_}};
      if (mods.size() != 3 || mods[0] != "sync" || !kOps.contains(mods[1])) unsupported(in.text, "only redux.sync.<op>.<type> is");
      in.op = Op::redux;
      in.atomic = kOps.at(mods[1]);
      typed(in, {mods[2]}, {});
      if (in.type != Type::u32 && in.type != Type::s32 && in.type != Type::b32) unsupported(in.text, "type");
      need(in, 3);
      program_.collectives = true;
    } else if (base == "bar" || base == "barrier") {
      decodeBarrier(mods, in);
    } else if (base == "cp") {
      decodeCopyAsync(mods, in);
    } else if (base == "atom" || base == "red") {
      decodeAtomic(base, mods, in);
    } else if (base == "stmatrix" || base == "ldmatrix") {
      in.op = base == "stmatrix" ? Op::stmatrix : Op::ldmatrix;
      matrixMove(in, mods, base);
    } else if (base == "mma") {
      decodeMma(mods, in);
    } else if (base == "add" || base == "sub" || base == "min" || base == "max" || base == "and" || base == "or" || base == "xor" || base == "shl" ||
               base == "shr" || base == "neg" || base == "not" || base == "fma" || base == "mad" || base == "mul") {
      decodeArithmetic(base, mods, in);
    } else if (base == "div" || base == "rem") {
      decodeDivision(base, mods, in);
    } else if (base == "ex2" || base == "lg2" || base == "sqrt" || base == "rsqrt" || base == "rcp") {
      decodeFloatFunction(base, mods, in);
    } else if (base == "setp") {
      in.op = Op::setp;
      static const std::map<std::string_view, Cmp> kCmp = {
          {"eq", Cmp::eq},   {"ne", Cmp::ne},   {"lt", Cmp::lt},   {"le", Cmp::le},   {"gt", Cmp::gt},   {"ge", Cmp::ge},
          {"lo", Cmp::lo},   {"ls", Cmp::ls},   {"hi", Cmp::hi},   {"hs", Cmp::hs},   {"equ", Cmp::equ}, {"neu", Cmp::neu},
          {"ltu", Cmp::ltu}, {"leu", Cmp::leu}, {"gtu", Cmp::gtu}, {"geu", Cmp::geu}, {"num", Cmp::num}, {"nan", Cmp::nan}};
      if (mods.size() != 2 || !kCmp.contains(mods[0])) unsupported(in.text, "only setp.<cmp>.<type> is");
      in.cmp = kCmp.at(mods[0]);
      typed(in, {mods[1]}, {});
      if (in.cmp >= Cmp::equ && !isFloat(in.type)) unsupported(in.text, "an unordered comparison of integers");
      need(in, 3);
    } else if (base == "selp") {
      in.op = Op::selp;
      typed(in, mods, {});
      need(in, 4);
    } else if (base == "prmt") {
      in.op = Op::prmt;
      if (mods.size() != 1 || mods[0] != "b32") unsupported(in.text, "of prmt, only the default mode (prmt.b32) is");
      in.type = Type::b32;
      need(in, 4);
    } else if (base == "lop3") {
      in.op = Op::lop3;
      if (mods.size() != 1 || mods[0] != "b32") unsupported(in.text, "only lop3.b32 is");
      in.type = Type::b32;
      need(in, 5);
    } else if (base == "bfe" || base == "bfi") {
      in.op = base == "bfe" ? Op::bfe : Op::bfi;
      typed(in, mods, {});
      if (bitsOf(in.type) < 32 || isFloat(in.type)) unsupported(in.text, "type");
      need(in, base == "bfe" ? 4 : 5);
    } else if (base == "popc" || base == "clz" || base == "brev" || base == "abs") {
      in.op = base == "popc" ? Op::popc : base == "clz" ? Op::clz : base == "brev" ? Op::brev : Op::abs;
      typed(in, mods, {"ftz"});
      if (in.op != Op::abs && (bitsOf(in.type) < 32 || isFloat(in.type))) unsupported(in.text, "type");
      if (in.op == Op::abs && in.type != Type::s16 && in.type != Type::s32 && in.type != Type::s64 && in.type != Type::f32 && in.type != Type::f64) {
        unsupported(in.text, "type");
      }
      need(in, 2);
    } else if (base == "membar" || base == "fence") {
      in.op = Op::fence;
      for (std::string_view m : mods) {
        if (m != "cta" && m != "gl" && m != "sys" && m != "gpu" && m != "sc" && m != "acq_rel") unsupported(in.text, "modifier ." + std::string(m));
      }
      need(in, 0);
    } else if (base == "activemask") {
      in.op = Op::activemask;
      typed(in, mods, {});
      need(in, 1);
      program_.collectives = true;
    } else if (base == "trap") {
      in.op = Op::trap;
    } else if (base == "prefetch" || base == "nanosleep") {
      in.op = Op::fence;  // no effect on the simulator's memory
      in.operands.clear();
    } else {
      unsupported(in.text);
    }
  }

  // cvt: a destination and a source type, rounding, saturation.
  void decodeCvt(std::vector<std::string_view>& mods, Instr& in) {
    in.op = Op::cvt;
    std::vector<Type> types;
    for (std::string_view m : mods) {
      if (auto t = typeNamed(m))
        types.push_back(*t);
      else if (auto r = roundingNamed(m))
        in.rounding = *r;
      else if (m == "sat")
        in.sat = true;
      else if (m != "ftz")
        unsupported(in.text, "modifier ." + std::string(m));
    }
    if (types.size() != 2) unsupported(in.text, "cvt needs a destination and a source type");
    in.type = types[0];
    in.type2 = types[1];
    const bool pair = in.type == Type::f16x2 || in.type == Type::bf16x2;
    if (pair && in.type2 != Type::f32) unsupported(in.text, "packing from anything but .f32");
    if (in.type == Type::pred || in.type2 == Type::pred || in.type2 == Type::f16x2 || in.type2 == Type::bf16x2) unsupported(in.text, "type");
    if (in.type == Type::tf32 && in.type2 != Type::f32) unsupported(in.text, "type");
    need(in, pair ? 3 : 2);
  }

  // cvta: between generic and a state space.
  void decodeCvta(std::vector<std::string_view>& mods, Instr& in) {
    in.op = Op::cvta;
    for (std::string_view m : mods) {
      if (m == "to")
        in.toSpace = true;
      else if (m == "shared" || m == "shared::cta")
        in.space = Space::shared;
      else if (m == "global")
        in.space = Space::global;
      else if (m == "u32" || m == "u64")
        in.type = *typeNamed(m);
      else
        unsupported(in.text, "modifier ." + std::string(m));
    }
    if (in.type == Type::none || in.space == Space::generic) unsupported(in.text, "cvta needs a state space and a type");
    need(in, 2);
  }

  // shfl.sync.<mode>.b32 only.
  void decodeShfl(std::vector<std::string_view>& mods, Instr& in) {
    in.op = Op::shfl;
    if (mods.size() != 3 || mods[0] != "sync" || mods[2] != "b32") unsupported(in.text, "only shfl.sync.<mode>.b32 is");
    static const std::map<std::string_view, ShflMode> kModes = {
        {"up", ShflMode::up}, {"down", ShflMode::down}, {"bfly", ShflMode::bfly}, {"idx", ShflMode::idx}};
    auto it = kModes.find(mods[1]);
    if (it == kModes.end()) unsupported(in.text, "shuffle mode");
    in.shfl = it->second;
    in.type = Type::b32;
    need(in, 5);
    program_.collectives = true;
  }

  // bar.sync and barrier.sync (the whole block) and bar.warp.sync.
  void decodeBarrier(std::vector<std::string_view>& mods, Instr& in) {
    std::erase_if(mods, [](std::string_view m) { return m == "cta" || m == "aligned"; });
    if (mods.size() == 2 && mods[0] == "warp" && mods[1] == "sync") {
      in.op = Op::bar_warp;
      need(in, 1);
    } else if (mods.size() == 1 && mods[0] == "sync") {
      in.op = Op::bar;
      if (in.operands.size() == 2) unsupported(in.text, "a thread count: a barrier for part of the block");
      need(in, 1);
    } else {
      unsupported(in.text, "only bar.sync, barrier.sync and bar.warp.sync are");
    }
    program_.collectives = true;
  }

  // cp.async and its commit/wait groups.
  void decodeCopyAsync(std::vector<std::string_view>& mods, Instr& in) {
    if (mods.empty() || mods[0] != "async") unsupported(in.text);
    if (mods.size() == 2 && mods[1] == "commit_group") {
      in.op = Op::cp_commit;
      need(in, 0);
    } else if (mods.size() == 2 && mods[1] == "wait_group") {
      in.op = Op::cp_wait_group;
      need(in, 1);
    } else if (mods.size() == 2 && mods[1] == "wait_all") {
      in.op = Op::cp_wait_all;
      need(in, 0);
    } else if (mods.size() >= 4 && (mods[1] == "ca" || mods[1] == "cg") && (mods[2] == "shared" || mods[2] == "shared::cta") && mods[3] == "global") {
      in.op = Op::cp_async;
      in.cacheAll = mods[1] == "ca";
      for (std::size_t i = 4; i < mods.size(); ++i) {
        if (mods[i] != "L2::64B" && mods[i] != "L2::128B" && mods[i] != "L2::256B") unsupported(in.text, "modifier ." + std::string(mods[i]));
      }
      if (in.operands.size() < 3 || in.operands.size() > 4) unsupported(in.text, "operands");
      if (in.operands[0].kind != Operand::Kind::address || in.operands[1].kind != Operand::Kind::address) unsupported(in.text, "addresses");
      in.ignoreSrc = in.operands.size() == 4 && isPredicate(in.operands[3]);
    } else {
      unsupported(in.text, "of cp.async, only .ca/.cg.shared.global copies, commit_group, wait_group and wait_all are");
    }
  }

  // atom and red: a space, an operation and a type.
  void decodeAtomic(std::string_view base, std::vector<std::string_view>& mods, Instr& in) {
    in.op = base == "atom" ? Op::atom : Op::red;
    static const std::map<std::string_view, AtomicOp> kOps = {
        {"add", AtomicOp::add},  {"min", AtomicOp::min}, {"max", AtomicOp::max},  {"exch", AtomicOp::exch}, {"cas", AtomicOp::cas},
        {"and", AtomicOp::and_}, {"or", AtomicOp::or_},  {"xor", AtomicOp::xor_}, {"inc", AtomicOp::inc},   {"dec", AtomicOp::dec}};
    bool haveOp = false;
    for (std::string_view m : mods) {
      if (auto t = typeNamed(m)) {
        in.type = *t;
      } else if (auto it = kOps.find(m); it != kOps.end()) {
        in.atomic = it->second;
        haveOp = true;
      } else if (m == "global") {
        in.space = Space::global;
      } else if (m == "shared" || m == "shared::cta") {
        in.space = Space::shared;
      } else if (m != "relaxed" && m != "acquire" && m != "release" && m != "acq_rel" && m != "cta" && m != "gpu" && m != "sys") {
        unsupported(in.text, "modifier ." + std::string(m));
      }
    }
    const int w = bitsOf(in.type);
    if (!haveOp || (w != 32 && w != 64) || in.type == Type::f16x2 || in.type == Type::bf16x2 || in.type == Type::tf32) unsupported(in.text, "type");
    if (isFloat(in.type) && in.atomic != AtomicOp::add && in.atomic != AtomicOp::min && in.atomic != AtomicOp::max && in.atomic != AtomicOp::exch) {
      unsupported(in.text, "operation on a floating-point type");
    }
    const std::size_t operands = (in.op == Op::atom ? 3 : 2) + (in.atomic == AtomicOp::cas ? 1 : 0);
    need(in, operands);
    if (in.op == Op::red && in.atomic == AtomicOp::cas) unsupported(in.text, "red.cas");
    if (in.operands[in.op == Op::atom ? 1 : 0].kind != Operand::Kind::address) unsupported(in.text, "the address must be written [...]");
  }

  // mma.sync: the shapes and types the simulator computes.
  void decodeMma(std::vector<std::string_view>& mods, Instr& in) {
    in.op = Op::mma;
    const std::string rest = [&] {
      std::string r;
      for (std::string_view m : mods) r += "." + std::string(m);
      return r;
    }();
    static const std::map<std::string, std::array<Type, 4>> kForms = {
        {".sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", {Type::f32, Type::f16, Type::f32, Type::none}},
        {".sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", {Type::f32, Type::bf16, Type::f32, Type::none}},
        {".sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", {Type::f16, Type::f16, Type::f16, Type::none}},
        {".sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", {Type::f32, Type::f16, Type::f32, Type::none}},
        {".sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", {Type::f32, Type::bf16, Type::f32, Type::none}},
        {".sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", {Type::f16, Type::f16, Type::f16, Type::none}},
        {".sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", {Type::f32, Type::tf32, Type::f32, Type::none}}};
    auto it = kForms.find(rest);
    if (it == kForms.end()) unsupported(in.text, "of mma.sync, only m16n8k16 and m16n8k8 .row.col with f16/bf16 inputs, and m16n8k8 with tf32, are");
    in.type = it->second[0];
    in.type2 = it->second[1];
    in.type3 = it->second[2];
    in.k = rest.find("m16n8k16") != std::string::npos ? 16 : 8;
    need(in, 4);
    // A tf32 element fills a register; f16/bf16 pack two.
    const std::size_t dRegs = in.type == Type::f32 ? 4 : 2, aRegs = in.k == 16 || in.type2 == Type::tf32 ? 4 : 2,
                      bRegs = in.k == 16 || in.type2 == Type::tf32 ? 2 : 1;
    const std::size_t expected[4] = {dRegs, aRegs, bRegs, dRegs};
    for (int i = 0; i < 4; ++i) {
      const Operand& o = in.operands[i];
      if (o.kind != Operand::Kind::vector || o.elements.size() != expected[i]) unsupported(in.text, "fragment register counts");
    }
    program_.collectives = true;
  }

  // The arithmetic and logic ops: one table of names, a type, rounding and saturation.
  void decodeArithmetic(std::string_view base, std::vector<std::string_view>& mods, Instr& in) {
    static const std::map<std::string_view, Op> kOps = {{"add", Op::add},  {"sub", Op::sub},  {"min", Op::min}, {"max", Op::max}, {"and", Op::and_},
                                                        {"or", Op::or_},   {"xor", Op::xor_}, {"shl", Op::shl}, {"shr", Op::shr}, {"neg", Op::neg},
                                                        {"not", Op::not_}, {"fma", Op::fma},  {"mad", Op::mad}, {"mul", Op::mul}};
    in.op = kOps.at(base);
    for (std::string_view m : mods) {
      if (m == "lo")
        in.mul = MulMode::lo;
      else if (m == "hi")
        in.mul = MulMode::hi;
      else if (m == "wide")
        in.mul = MulMode::wide;
      else if (auto r = roundingNamed(m); r && (*r == Rounding::rn))
        in.rounding = *r;
    }
    typed(in, mods, {"lo", "hi", "wide", "rn", "ftz"});
    if (in.type == Type::f16 || in.type == Type::bf16 || in.type == Type::f16x2 || in.type == Type::bf16x2 || in.type == Type::tf32)
      unsupported(in.text, "type");
    if ((in.op == Op::mul || in.op == Op::mad) && in.mul != MulMode::lo && isFloat(in.type)) unsupported(in.text, "modifier");
    if (in.op == Op::mad && isFloat(in.type)) in.op = Op::fma;
    const std::size_t sources = (in.op == Op::neg || in.op == Op::not_) ? 1 : (in.op == Op::fma || in.op == Op::mad) ? 3 : 2;
    need(in, sources + 1);
  }

  // div and rem: integer quotient and remainder; div of f32 and f64 (.rn, .full, .approx: the host's
  // correctly rounded quotient, which .full and .approx are within 2 ulp of on a GPU).
  void decodeDivision(std::string_view base, std::vector<std::string_view>& mods, Instr& in) {
    in.op = base == "div" ? Op::div : Op::rem;
    typed(in, mods, {"rn", "full", "approx", "ftz", "rz", "rm", "rp"});
    directedRounding(in, mods);
    if (isFloat(in.type) && (in.op == Op::rem || (in.type != Type::f32 && in.type != Type::f64))) unsupported(in.text, "type");
    if (bitsOf(in.type) < 16 && !isFloat(in.type)) unsupported(in.text, "type");
    need(in, 3);
  }

  // ex2, lg2 (.approx), sqrt, rsqrt, rcp of f32 and f64: the host's libm (the GPU's .approx forms are
  // within their ISA bounds of it; .ftz's flushing of subnormals is not modelled).
  void decodeFloatFunction(std::string_view base, std::vector<std::string_view>& mods, Instr& in) {
    static const std::map<std::string_view, Op> kOps = {
        {"ex2", Op::ex2}, {"lg2", Op::lg2}, {"sqrt", Op::sqrt}, {"rsqrt", Op::rsqrt}, {"rcp", Op::rcp}};
    in.op = kOps.at(base);
    typed(in, mods, {"approx", "rn", "ftz", "full", "rz", "rm", "rp"});
    directedRounding(in, mods);
    if (in.type != Type::f32 && in.type != Type::f64) unsupported(in.text, "type");
    need(in, 2);
  }

  // Rounding toward zero or an infinity is not modelled for these: the host rounds to nearest.
  void directedRounding(const Instr& in, const std::vector<std::string_view>& mods) {
    if (isFloat(in.type) && std::any_of(mods.begin(), mods.end(), [](std::string_view m) { return m == "rz" || m == "rm" || m == "rp"; })) {
      unsupported(in.text, "directed rounding");
    }
  }

  static constexpr int kMaxRegisters = 1 << 16;

  Program& program_;
  std::map<std::string, std::size_t> labels_;                  // name: index of the instruction it precedes
  std::vector<std::pair<std::size_t, std::string>> branches_;  // bra's index, its label
  std::vector<std::map<std::string, int>> scopes_;
  std::vector<Type> types_;  // of each register; none for the asm's operands
};

// Template text with %N turned into $N and %% into % (extended asm only: basic asm's % is literal),
// and comments removed.
std::string normalise(std::string_view text, bool extended) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "//") {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else if (extended && text[i] == '%' && i + 1 < text.size() && text[i + 1] == '%') {
      out += '%';
      ++i;
    } else if (extended && text[i] == '%' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      out += '$';
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

PtxCheck parse(std::string_view text, int operands, bool extended, Program& program) {
  PtxCheck check;
  program = Program{};
  const std::string normalised = normalise(text, extended);
  if (extended && normalised.find("%[") != std::string::npos) {
    check.kind = Kind::unsupported;
    check.message = "inline PTX with named operands (%[name]) is not simulated";
    return check;
  }
  try {
    Parser parser(operands, program);
    std::size_t start = 0;
    for (std::size_t i = 0; i <= normalised.size(); ++i) {
      if (i == normalised.size() || normalised[i] == ';') {
        parser.statement(std::string_view(normalised).substr(start, i - start));
        start = i + 1;
      }
    }
    parser.resolveBranches();
  } catch (const Failure& f) {
    check.kind = f.kind;
    check.message = f.message;
    program.code.clear();
    return check;
  }
  check.registers = program.registers > kCallerRegisters ? operands : program.registers;
  check.collectives = program.collectives;
  if (program.code.empty()) {
    check.kind = Kind::not_ptx;  // nothing to run: an empty asm("") is left to the host compiler
    check.message = "no instructions";
  }
  return check;
}

}  // namespace cuset_sim::ptx

namespace cuset_sim {

PtxCheck ptx_check(std::string_view text, int operands, bool extended) {
  ptx::Program program;
  return ptx::parse(text, operands, extended, program);
}

}  // namespace cuset_sim
