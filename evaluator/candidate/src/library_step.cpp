// A library step's typed form and its JSON (library_step.hpp).
#include "cuset/evaluator/candidate/library_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace cuset {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

constexpr std::size_t kMaxListDepth = 4;  // int[], Tensor?[]: a recorded argument nests at most a little

Unexpected fail(std::string message) { return Unexpected(std::move(message)); }

Expected<std::vector<std::int64_t>> integers(const nlohmann::json& j, std::string_view field) {
  if (!j.is_array()) return fail(fmt::format("\"{}\" is not a list of integers", field));
  std::vector<std::int64_t> out;
  for (const auto& x : j) {
    if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max()))
      return fail(fmt::format("\"{}\" holds {}, not a 64-bit integer", field, x.dump()));
    out.push_back(x.get<std::int64_t>());
  }
  return out;
}

Expected<LibraryArg> argFromJson(const nlohmann::json& j, std::size_t depth);

Expected<LibraryArg> objectArg(const nlohmann::json& j) {
  if (j.size() != 1) return fail(fmt::format("an argument this harness cannot read: {}", j.dump()));
  // Not `*j.items().begin()`: that binds to the proxy value inside a temporary iterator, dead at the
  // end of the statement (AddressSanitizer: stack-use-after-scope, issue #62's sanitizer job).
  const auto first = j.begin();
  const std::string& key = first.key();
  const nlohmann::json& v = first.value();
  if (key == "tensor") {
    auto view = tensorViewFromJson(v);
    if (!view) return fail(view.error());
    return LibraryArg{std::move(*view)};
  }
  if (!v.is_string()) return fail(fmt::format("an argument this harness cannot read: {}", j.dump()));
  const std::string name = v.get<std::string>();
  if (key == "dtype") return LibraryArg{ScalarTypeArg{name}};
  if (key == "device") return LibraryArg{DeviceArg{name}};
  if (key == "layout") return LibraryArg{LayoutArg{name}};
  if (key == "memory_format") {
    if (name == "contiguous_format") return LibraryArg{MemoryFormatArg::contiguous};
    if (name == "channels_last") return LibraryArg{MemoryFormatArg::channels_last};
    if (name == "channels_last_3d") return LibraryArg{MemoryFormatArg::channels_last_3d};
    if (name == "preserve_format") return LibraryArg{MemoryFormatArg::preserve};
    return fail(fmt::format("a memory_format argument {}", name));
  }
  if (key == "float") {
    if (name == "inf") return LibraryArg{std::numeric_limits<double>::infinity()};
    if (name == "-inf") return LibraryArg{-std::numeric_limits<double>::infinity()};
    if (name == "nan") return LibraryArg{std::numeric_limits<double>::quiet_NaN()};
    return fail(fmt::format("a float argument \"{}\" (only inf, -inf and nan are written as strings)", name));
  }
  return fail(fmt::format("an argument this harness cannot read: {}", j.dump()));
}

Expected<LibraryArg> argFromJson(const nlohmann::json& j, std::size_t depth) {
  if (j.is_null()) return LibraryArg{};
  if (j.is_boolean()) return LibraryArg{j.get<bool>()};
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())
    return fail(fmt::format("an integer argument {} does not fit in 64 bits", j.dump()));
  if (j.is_number_integer()) return LibraryArg{j.get<std::int64_t>()};
  if (j.is_number()) return LibraryArg{j.get<double>()};
  if (j.is_string()) return LibraryArg{j.get<std::string>()};
  if (j.is_object()) return objectArg(j);
  if (depth >= kMaxListDepth) return fail("an argument nests lists too deeply");
  LibraryArg::List list;
  for (const auto& x : j) {
    auto a = argFromJson(x, depth + 1);
    if (!a) return a;
    list.push_back(std::move(*a));
  }
  return LibraryArg{std::move(list)};
}

nlohmann::json argToJson(const LibraryArg& a) {
  return std::visit(Overloaded{
                        [](std::monostate) { return nlohmann::json(); },
                        [](bool b) { return nlohmann::json(b); },
                        [](std::int64_t i) { return nlohmann::json(i); },
                        [](double d) {
                          return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json{{"float", fmt::format("{}", d)}};
                        },
                        [](const std::string& s) { return nlohmann::json(s); },
                        [](const TensorView& v) {
                          return nlohmann::json{{"tensor", toJson(v)}};
                        },
                        [](const ScalarTypeArg& t) {
                          return nlohmann::json{{"dtype", t.name}};
                        },
                        [](const DeviceArg& d) {
                          return nlohmann::json{{"device", d.recorded}};
                        },
                        [](const LayoutArg& l) {
                          return nlohmann::json{{"layout", l.name}};
                        },
                        [](MemoryFormatArg f) {
                          static constexpr const char* kNames[] = {"contiguous_format", "channels_last", "channels_last_3d", "preserve_format"};
                          return nlohmann::json{{"memory_format", kNames[static_cast<int>(f)]}};
                        },
                        [](const LibraryArg::List& l) {
                          nlohmann::json out = nlohmann::json::array();
                          for (const auto& x : l) out.push_back(argToJson(x));
                          return out;
                        },
                    },
                    a.value);
}

std::string describeArg(const LibraryArg& a) {
  if (const auto* v = std::get_if<TensorView>(&a.value)) return v->describe();
  if (const auto* l = std::get_if<LibraryArg::List>(&a.value)) {
    std::vector<std::string> items;
    for (const auto& x : *l) items.push_back(describeArg(x));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  return argToJson(a).dump();
}

std::string argumentRefusal(const LibraryArg& a) {
  if (const auto* t = std::get_if<ScalarTypeArg>(&a.value)) {
    if ((" " + std::string(kLibraryScalarTypes) + " ").find(" " + t->name + " ") == std::string::npos)
      return fmt::format("a dtype argument {} (the harness's library steps take {})", t->name, kLibraryScalarTypes);
  }
  if (const auto* l = std::get_if<LayoutArg>(&a.value); l && l->name != "strided")
    return fmt::format("a layout argument {} (views are strided)", l->name);
  if (const auto* list = std::get_if<LibraryArg::List>(&a.value)) {
    for (const auto& x : *list) {
      if (std::string why = argumentRefusal(x); !why.empty()) return why;
    }
  }
  return {};
}

template <class Arg, class View>
void visitViews(Arg& a, const std::function<void(View&)>& visit) {
  if (auto* v = std::get_if<TensorView>(&a.value)) visit(*v);
  if (auto* l = std::get_if<LibraryArg::List>(&a.value)) {
    for (auto& x : *l) visitViews(x, visit);
  }
}

Expected<LibraryStep::Purpose> purposeFromJson(const nlohmann::json& j) {
  if (!j.contains("purpose")) return LibraryStep::Purpose::candidate;
  const auto& p = j.at("purpose");
  if (p == "output") return LibraryStep::Purpose::output;
  if (p == "buffer_copy") return LibraryStep::Purpose::bufferCopy;
  if (p == "constant") return LibraryStep::Purpose::constant;
  return fail(fmt::format("a step's purpose {} is not \"output\", \"buffer_copy\" or \"constant\"", p.dump()));
}

}  // namespace

std::string TensorView::describe() const { return offset ? fmt::format("{}+{}", buffer, offset) : buffer; }

Expected<TensorView> tensorViewFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return fail("a view is not an object");
  TensorView v;
  if (!j.contains("buffer") || !j["buffer"].is_string()) return fail("a view names no buffer");
  v.buffer = j["buffer"].get<std::string>();
  if (!j.contains("offset") || !j["offset"].is_number_integer()) return fail(fmt::format("a view of '{}' has no integer \"offset\"", v.buffer));
  v.offset = j["offset"].get<std::int64_t>();
  for (auto [field, out] : {std::pair{"sizes", &v.sizes}, std::pair{"strides", &v.strides}}) {
    auto values = integers(j.value(field, nlohmann::json()), field);
    if (!values) return fail(fmt::format("a view of '{}': {}", v.buffer, values.error()));
    *out = std::move(*values);
  }
  const auto dtype = parseDType(j.value("dtype", nlohmann::json("")).is_string() ? j.value("dtype", std::string()) : std::string());
  if (!dtype) return fail(fmt::format("a view of '{}' has dtype {}, not one of {}", v.buffer, j.value("dtype", nlohmann::json()).dump(), kDTypeList));
  v.dtype = *dtype;
  if (j.contains("byte")) {
    if (!j["byte"].is_number_integer()) return fail(fmt::format("a view of '{}' has a \"byte\" that is not an integer", v.buffer));
    v.regionByte = j["byte"].get<std::int64_t>();
  }
  return v;
}

nlohmann::json toJson(const TensorView& v) {
  nlohmann::json j = {{"buffer", v.buffer}, {"offset", v.offset}, {"sizes", v.sizes}, {"strides", v.strides}, {"dtype", dtypeName(v.dtype)}};
  if (v.regionByte) j["byte"] = *v.regionByte;
  return j;
}

Expected<LibraryStep> libraryStepFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return fail("a library step is not an object");
  LibraryStep s;
  if (!j.contains("op") || !j["op"].is_string()) return fail("a library step names no op");
  s.name = j["op"].get<std::string>();
  const auto where = [&](const std::string& what) { return fmt::format("library step {}: {}", s.name, what); };
  if (j.contains("overload") && !j["overload"].is_string()) return fail(where("\"overload\" is not a string"));
  s.overload = j.value("overload", std::string());
  const nlohmann::json args = j.value("args", nlohmann::json::array());
  const nlohmann::json kwargs = j.value("kwargs", nlohmann::json::object());
  const nlohmann::json outputs = j.value("outputs", nlohmann::json::array());
  if (!args.is_array() || !kwargs.is_object() || !outputs.is_array())
    return fail(where("\"args\" must be a list, \"kwargs\" an object and \"outputs\" a list"));
  for (const auto& a : args) {
    auto arg = argFromJson(a, 0);
    if (!arg) return fail(where(arg.error()));
    s.args.push_back(std::move(*arg));
  }
  for (const auto& [name, a] : kwargs.items()) {
    auto arg = argFromJson(a, 0);
    if (!arg) return fail(where(fmt::format("argument '{}': {}", name, arg.error())));
    s.kwargs.emplace_back(name, std::move(*arg));
  }
  for (const auto& o : outputs) {
    auto view = tensorViewFromJson(o);
    if (!view) return fail(where(view.error()));
    s.outputs.push_back(std::move(*view));
  }
  auto purpose = purposeFromJson(j);
  if (!purpose) return fail(where(purpose.error()));
  s.purpose = *purpose;
  return s;
}

nlohmann::json toJson(const LibraryStep& s) {
  nlohmann::json j = {{"op", s.name},
                      {"overload", s.overload},
                      {"args", nlohmann::json::array()},
                      {"kwargs", nlohmann::json::object()},
                      {"outputs", nlohmann::json::array()}};
  for (const auto& a : s.args) j["args"].push_back(argToJson(a));
  for (const auto& [name, a] : s.kwargs) j["kwargs"][name] = argToJson(a);
  for (const auto& o : s.outputs) j["outputs"].push_back(toJson(o));
  if (s.purpose == LibraryStep::Purpose::output) j["purpose"] = "output";
  if (s.purpose == LibraryStep::Purpose::bufferCopy) j["purpose"] = "buffer_copy";
  if (s.purpose == LibraryStep::Purpose::constant) j["purpose"] = "constant";
  return j;
}

std::string LibraryStep::describe() const {
  std::vector<std::string> shown;
  for (const auto& a : args) shown.push_back(describeArg(a));
  for (const auto& [k, v] : kwargs) shown.push_back(fmt::format("{}={}", k, describeArg(v)));
  std::vector<std::string> outs;
  for (const auto& o : outputs) outs.push_back(o.describe());
  return fmt::format("{}{}({}){}{}", name, overload.empty() ? "" : "." + overload, fmt::join(shown, ", "),
                     outs.empty() ? std::string(" (in place)") : fmt::format(" -> {}", fmt::join(outs, ", ")),
                     purpose == Purpose::candidate  ? ""
                     : purpose == Purpose::output   ? " [harness: into the output]"
                     : purpose == Purpose::constant ? " [harness: a constant the solution made with data]"
                                                    : " [harness: a copy of a weight or module buffer]");
}

std::string libraryArgumentRefusal(const LibraryStep& step) {
  for (const auto& a : step.args) {
    if (std::string why = argumentRefusal(a); !why.empty()) return fmt::format("{} takes {}", step.name, why);
  }
  for (const auto& [name, a] : step.kwargs) {
    if (std::string why = argumentRefusal(a); !why.empty()) return fmt::format("{} takes {} as '{}'", step.name, why, name);
  }
  return {};
}

void LibraryStep::forEachView(const std::function<void(TensorView&)>& visit) {
  for (auto& a : args) visitViews(a, visit);
  for (auto& [key, a] : kwargs) visitViews(a, visit);
  for (auto& o : outputs) visit(o);
}

void LibraryStep::forEachView(const std::function<void(const TensorView&)>& visit) const {
  for (const auto& a : args) visitViews(a, visit);
  for (const auto& [key, a] : kwargs) visitViews(a, visit);
  for (const auto& o : outputs) visit(o);
}

}  // namespace cuset
