#pragma once
// The functions a solution exposes to Python: those `load_inline(functions=[...])` names (bound by a
// generated registration) or those its own PYBIND11_MODULE defines. The recorder calls them by name
// with tensors and numbers; each becomes a std::function over Values.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace cuset_kb {

using Function = std::function<Value(const Values&)>;
void registerFunction(const std::string& name, Function f);

template <class T>
struct FromValue;
template <>
struct FromValue<at::Tensor> {
  static at::Tensor get(const Value& v) { return v.kind == Value::Kind::none ? at::Tensor() : tensorOf(v); }
};
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct FromValue<T> {
  static T get(const Value& v) { return static_cast<T>(v.kind == Value::Kind::real ? static_cast<std::int64_t>(v.d) : v.i); }
};
template <class T>
requires std::is_floating_point_v<T>
struct FromValue<T> {
  static T get(const Value& v) { return static_cast<T>(v.kind == Value::Kind::integer ? static_cast<double>(v.i) : v.d); }
};
template <>
struct FromValue<bool> {
  static bool get(const Value& v) { return v.i != 0; }
};
template <>
struct FromValue<std::string> {
  static std::string get(const Value& v) { return v.s; }
};
template <>
struct FromValue<c10::Scalar> {
  static c10::Scalar get(const Value& v) { return v.kind == Value::Kind::real ? c10::Scalar(v.d) : c10::Scalar(v.i); }
};
template <class T>
struct FromValue<std::vector<T>> {
  static std::vector<T> get(const Value& v) {
    std::vector<T> out;
    for (const auto& x : v.list) out.push_back(FromValue<T>::get(x));
    return out;
  }
};
template <class T>
struct FromValue<std::optional<T>> {
  static std::optional<T> get(const Value& v) { return v.kind == Value::Kind::none ? std::nullopt : std::optional<T>(FromValue<T>::get(v)); }
};

template <class R>
Value resultValue(const R& r) {
  if constexpr (std::is_same_v<R, at::Tensor>) {
    return toValue(r);
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    Value v;
    v.kind = Value::Kind::list;
    std::apply([&](const auto&... x) { (v.list.push_back(resultValue(x)), ...); }, r);
    return v;
  } else if constexpr (requires {
                         r.begin();
                         r.size();
                       }) {
    Value v;
    v.kind = Value::Kind::list;
    for (const auto& x : r) v.list.push_back(resultValue(x));
    return v;
  } else {
    return toValue(r);
  }
}

template <class R, class... A>
Function wrap(R (*f)(A...)) {
  return [f](const Values& args) -> Value {
    if (args.size() != sizeof...(A)) {
      throw c10::Error("the function takes " + std::to_string(sizeof...(A)) + " argument(s), " + std::to_string(args.size()) + " given");
    }
    return [&]<std::size_t... I>(std::index_sequence<I...>)->Value {
      if constexpr (std::is_void_v<R>) {
        f(FromValue<std::decay_t<A>>::get(args[I])...);
        return Value{};
      } else {
        return resultValue(f(FromValue<std::decay_t<A>>::get(args[I])...));
      }
    }
    (std::index_sequence_for<A...>{});
  };
}

// pybind11's module object, as far as `m.def("name", &function, ...)` goes.
struct Module {
  template <class F, class... Extra>
  Module& def(const char* name, F* f, const Extra&...) {
    registerFunction(name, wrap(f));
    return *this;
  }
};
struct Registration {
  explicit Registration(void (*bind)(Module&)) {
    Module m;
    bind(m);
  }
};

}  // namespace cuset_kb

namespace pybind11 {
using module = cuset_kb::Module;
using module_ = cuset_kb::Module;
struct arg {
  explicit arg(const char*) {}
  template <class T>
  arg& operator=(const T&) {
    return *this;
  }
};
}  // namespace pybind11
namespace py = pybind11;

#define PYBIND11_MODULE(name, variable)                                                \
  static void cuset_kb_bind_##name(::cuset_kb::Module& variable);                      \
  static ::cuset_kb::Registration cuset_kb_registration_##name(&cuset_kb_bind_##name); \
  static void cuset_kb_bind_##name(::cuset_kb::Module& variable)
