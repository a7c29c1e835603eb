#pragma once
// clang-format off
// (not formatted: macro lists that stand for ATen's generated declarations, several to a line, on
// which clang-format 14 reaches no fixed point)
// AT_DISPATCH_*: the lambda once, with scalar_t set from the tensor's dtype, as ATen's macros do.
// The _AND variants take their extra types as expressions the preprocessor cannot read, so they
// accept both reduced floating types; a plan is recorded for one dtype per tensor, the problem's,
// so this differs from ATen only for a dtype no problem gives them.
#define CUSET_KB_CASE(enum_type, type, ...) \
  case ::c10::ScalarType::enum_type: {      \
    using scalar_t = type;                  \
    return __VA_ARGS__();                   \
  }
#define CUSET_KB_DEFAULT(TYPE, NAME) \
  default: throw ::c10::Error(std::string(NAME) + " not implemented for '" + ::c10::toString(TYPE) + "'");
#define CUSET_KB_FLOATING(...) CUSET_KB_CASE(Float, float, __VA_ARGS__) CUSET_KB_CASE(Double, double, __VA_ARGS__)
#define CUSET_KB_REDUCED(...) CUSET_KB_CASE(Half, ::c10::Half, __VA_ARGS__) CUSET_KB_CASE(BFloat16, ::c10::BFloat16, __VA_ARGS__)
#define CUSET_KB_INTEGRAL(...)                                                                                  \
  CUSET_KB_CASE(Byte, std::uint8_t, __VA_ARGS__) CUSET_KB_CASE(Char, std::int8_t, __VA_ARGS__)                 \
  CUSET_KB_CASE(Short, std::int16_t, __VA_ARGS__) CUSET_KB_CASE(Int, int, __VA_ARGS__)                         \
  CUSET_KB_CASE(Long, std::int64_t, __VA_ARGS__)

#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_CASE(Half, ::c10::Half, __VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_REDUCED(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_FLOATING_TYPES_AND(S1, TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_REDUCED(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_FLOATING_TYPES_AND2(S1, S2, TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_REDUCED(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_INTEGRAL(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  [&] { switch (TYPE) { CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_INTEGRAL(__VA_ARGS__) CUSET_KB_DEFAULT(TYPE, NAME) } }()
#define AT_DISPATCH_ALL_TYPES_AND_HALF(TYPE, NAME, ...)                                                         \
  [&] {                                                                                                         \
    switch (TYPE) {                                                                                             \
      CUSET_KB_FLOATING(__VA_ARGS__) CUSET_KB_INTEGRAL(__VA_ARGS__) CUSET_KB_CASE(Half, ::c10::Half, __VA_ARGS__) \
      CUSET_KB_DEFAULT(TYPE, NAME)                                                                              \
    }                                                                                                           \
  }()
