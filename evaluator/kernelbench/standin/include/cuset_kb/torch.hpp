#pragma once
// clang-format off
// (not formatted: macro lists that stand for ATen's generated declarations, several to a line, on
// which clang-format 14 reaches no fixed point)
// A shape-only stand-in for the torch C++ extension API, for the host code of a KernelBench solution
// (docs/kernelbench.md). A Tensor here is a handle to a tensor of the recorder (kb_recorder.py)
// with its shape, strides, dtype and place in a buffer; it has no data. Every operation on it is asked
// of the recorder, which records it as a library step (or, for views and factories, as buffers), and
// every <<<...>>> launch is recorded with its geometry and arguments. `data_ptr<T>()` gives an address
// inside a range that no memory backs, so host code may do pointer arithmetic on it but a read of
// tensor data on the host faults; the recorder says so.
// What torch/extension.h brings in besides its own API, which solutions rely on without including it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <numeric>
#include <unordered_map>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// No CUDA header: torch/extension.h and torch/types.h include none (the CUDA runtime, streams,
// guards and the CUDA check macros come with <cuda_runtime.h>, <c10/cuda/...> and <ATen/cuda/...>, whose
// stand-ins are cuset_kb/c10_cuda.hpp and cuset_kb/aten_cuda.hpp). The toolkit's half types are only
// named here, for data_ptr<__half>() where host code has included <cuda_fp16.h> itself.
struct __half;
struct __nv_bfloat16;

namespace cuset_kb {
// Something the recording cannot express (a stream, a host read of tensor data): the candidate is
// `unsupported` with this message.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
}  // namespace cuset_kb

namespace c10 {

enum class ScalarType : std::int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16, Undefined };
const char* toString(ScalarType t);
std::size_t elementSize(ScalarType t);
inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::BFloat16;
}
// What the deprecated Tensor::type() returns: AT_DISPATCH and comparisons take it for its dtype.
class DeprecatedTypeProperties {
 public:
  explicit DeprecatedTypeProperties(ScalarType t) : type_(t) {}
  ScalarType scalarType() const { return type_; }
  operator ScalarType() const { return type_; }
  bool is_cuda() const { return true; }
  bool operator==(const DeprecatedTypeProperties& o) const { return type_ == o.type_; }

 private:
  ScalarType type_;
};

// Host-side half types: storage and conversions only (host code rarely computes with them).
struct Half {
  std::uint16_t x = 0;
  Half() = default;
  Half(float f);
  operator float() const;
};
struct BFloat16 {
  std::uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f);
  operator float() const;
};

enum class DeviceType : std::int8_t { CPU, CUDA };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
struct Device {
  DeviceType type_ = DeviceType::CUDA;
  int index_ = 0;
  Device(DeviceType t, int index = 0) : type_(t), index_(index) {}
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  int index() const { return index_; }
  DeviceType type() const { return type_; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
};

enum class MemoryFormat : std::int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
enum class Layout : std::int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

template <class T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  ArrayRef(std::initializer_list<T> l) : data_(l.begin()), size_(l.size()) {}
  ArrayRef(const T* data, std::size_t size) : data_(data), size_(size) {}
  ArrayRef(const T& one) : data_(&one), size_(1) {}
  template <std::size_t N>
  ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};
using IntArrayRef = ArrayRef<std::int64_t>;

template <class T>
using optional = std::optional<T>;
using std::nullopt;

class Scalar {
 public:
  Scalar() = default;
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Scalar(T v) : integral_(true), i_(static_cast<std::int64_t>(v)), d_(static_cast<double>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : d_(static_cast<double>(v)) {}
  Scalar(Half v) : d_(static_cast<float>(v)) {}
  bool isIntegral() const { return integral_; }
  double toDouble() const { return d_; }
  float toFloat() const { return static_cast<float>(d_); }
  std::int64_t toLong() const { return integral_ ? i_ : static_cast<std::int64_t>(d_); }
  int toInt() const { return static_cast<int>(toLong()); }
  template <class T>
  T to() const { return static_cast<T>(integral_ ? static_cast<double>(i_) : d_); }

 private:
  bool integral_ = false;
  std::int64_t i_ = 0;
  double d_ = 0.0;
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TensorOptions {
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType d) : device_(Device(d)) {}
  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  template <class T>
  TensorOptions dtype() const;
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType d, int index = 0) const { return device(Device(d, index)); }
  TensorOptions layout(Layout) const { return *this; }
  TensorOptions requires_grad(bool = true) const { return *this; }
  TensorOptions memory_format(MemoryFormat) const { return *this; }
  TensorOptions pinned_memory(bool = true) const { return *this; }
  ScalarType dtype() const { return dtype_.value_or(ScalarType::Float); }
  Device device() const { return device_.value_or(Device(DeviceType::CPU)); }
};

template <class T>
struct CppTypeToScalarType;
#define CUSET_KB_SCALAR(T, S) \
  template <>                 \
  struct CppTypeToScalarType<T> { static constexpr ScalarType value = ScalarType::S; };
CUSET_KB_SCALAR(std::uint8_t, Byte)
CUSET_KB_SCALAR(std::int8_t, Char)
CUSET_KB_SCALAR(std::int16_t, Short)
CUSET_KB_SCALAR(int, Int)
CUSET_KB_SCALAR(std::int64_t, Long)
CUSET_KB_SCALAR(Half, Half)
CUSET_KB_SCALAR(float, Float)
CUSET_KB_SCALAR(double, Double)
CUSET_KB_SCALAR(bool, Bool)
CUSET_KB_SCALAR(BFloat16, BFloat16)
#undef CUSET_KB_SCALAR
// The toolkit's half types stand for c10's where host code passes them to data_ptr<T>().
template <>
struct CppTypeToScalarType<__half> { static constexpr ScalarType value = ScalarType::Half; };
template <>
struct CppTypeToScalarType<__nv_bfloat16> { static constexpr ScalarType value = ScalarType::BFloat16; };
template <>
struct CppTypeToScalarType<long long> { static constexpr ScalarType value = ScalarType::Long; };

template <class T>
TensorOptions TensorOptions::dtype() const { return dtype(CppTypeToScalarType<T>::value); }

}  // namespace c10

namespace at {
using c10::ArrayRef;
using c10::DeprecatedTypeProperties;
using c10::isFloatingType;
using c10::BFloat16;
using c10::Device;
using c10::DeviceType;
using c10::Half;
using c10::IntArrayRef;
using c10::kCPU;
using c10::kCUDA;
using c10::Layout;
using c10::MemoryFormat;
using c10::optional;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;
using c10::toString;
using std::nullopt;

constexpr ScalarType kByte = ScalarType::Byte, kChar = ScalarType::Char, kShort = ScalarType::Short, kInt = ScalarType::Int,
                     kInt32 = ScalarType::Int, kLong = ScalarType::Long, kInt64 = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat16 = ScalarType::Half, kFloat = ScalarType::Float, kFloat32 = ScalarType::Float, kDouble = ScalarType::Double,
                     kFloat64 = ScalarType::Double, kBool = ScalarType::Bool, kBFloat16 = ScalarType::BFloat16, kUInt8 = ScalarType::Byte,
                     kInt8 = ScalarType::Char, kInt16 = ScalarType::Short;

// What the recorder knows of a tensor.
struct TensorMeta {
  std::int64_t handle = -1;
  std::int64_t buffer = -1;
  std::int64_t offset = 0;  // elements from the buffer's start
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  ScalarType dtype = ScalarType::Float;
};

class Tensor;
}  // namespace at

namespace cuset_kb {

// An argument or result crossing to the recorder.
struct Value {
  enum class Kind { none, integer, real, boolean, string, list, tensor, dtype, device, options, memoryFormat };
  Kind kind = Kind::none;
  std::int64_t i = 0;
  double d = 0.0;
  std::string s;
  std::vector<Value> list;
  std::shared_ptr<const at::TensorMeta> tensor;
  c10::TensorOptions options;
};
using Values = std::vector<Value>;
using Kwargs = std::vector<std::pair<std::string, Value>>;

// Asks the recorder to run `name` (a torch function, or a Tensor method when `method`), returns its result.
Value call(bool method, const char* name, const Values& args, const Kwargs& kwargs = {});
// The address data_ptr() gives for a tensor: its buffer's unbacked base plus its offset in bytes.
void* fakeAddress(const at::TensorMeta& meta);
[[noreturn]] void unsupported(const std::string& what);

Value toValue(const at::Tensor& t);
inline Value toValue(std::nullopt_t) { return {}; }
inline Value toValue(bool b) { Value v; v.kind = Value::Kind::boolean; v.i = b; return v; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
Value toValue(T x) { Value v; v.kind = Value::Kind::integer; v.i = static_cast<std::int64_t>(x); return v; }
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
Value toValue(T x) { Value v; v.kind = Value::Kind::real; v.d = static_cast<double>(x); return v; }
inline Value toValue(const c10::Scalar& s) { return s.isIntegral() ? toValue(s.toLong()) : toValue(s.toDouble()); }
inline Value toValue(const std::string& s) { Value v; v.kind = Value::Kind::string; v.s = s; return v; }
inline Value toValue(const char* s) { return toValue(std::string(s)); }
inline Value toValue(c10::ScalarType t) { Value v; v.kind = Value::Kind::dtype; v.i = static_cast<int>(t); return v; }
inline Value toValue(c10::MemoryFormat f) { Value v; v.kind = Value::Kind::memoryFormat; v.i = static_cast<int>(f); return v; }
inline Value toValue(const c10::Device& d) { Value v; v.kind = Value::Kind::device; v.i = d.is_cuda(); return v; }
inline Value toValue(c10::DeviceType d) { return toValue(c10::Device(d)); }
inline Value toValue(const c10::TensorOptions& o) { Value v; v.kind = Value::Kind::options; v.options = o; return v; }
template <class T>
Value toValue(c10::ArrayRef<T> a) {
  Value v;
  v.kind = Value::Kind::list;
  for (const auto& x : a) v.list.push_back(toValue(x));
  return v;
}
template <class T>
Value toValue(const std::vector<T>& a) { return toValue(c10::ArrayRef<T>(a)); }
template <class T>
Value toValue(std::initializer_list<T> a) { return toValue(c10::ArrayRef<T>(a.begin(), a.size())); }
template <class T>
Value toValue(const std::optional<T>& o) { return o ? toValue(*o) : Value{}; }

template <class... A>
Values values(const A&... a) { return Values{toValue(a)...}; }

at::Tensor tensorOf(const Value& v);

}  // namespace cuset_kb

namespace at {

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorMeta> meta) : meta_(std::move(meta)) {}

  bool defined() const { return meta_ != nullptr; }
  const TensorMeta& meta() const { check(); return *meta_; }
  IntArrayRef sizes() const { return meta().sizes; }
  IntArrayRef strides() const { return meta().strides; }
  std::int64_t size(std::int64_t d) const { return meta().sizes.at(wrap(d)); }
  std::int64_t stride(std::int64_t d) const { return meta().strides.at(wrap(d)); }
  std::int64_t dim() const { return static_cast<std::int64_t>(meta().sizes.size()); }
  std::int64_t ndimension() const { return dim(); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto s : meta().sizes) n *= s;
    return n;
  }
  std::int64_t storage_offset() const { return meta().offset; }
  std::size_t element_size() const { return c10::elementSize(meta().dtype); }
  std::size_t itemsize() const { return element_size(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * element_size(); }
  ScalarType scalar_type() const { return meta().dtype; }
  TensorOptions options() const { return TensorOptions(scalar_type()).device(Device(kCUDA)); }
  ScalarType dtype() const { return scalar_type(); }
  Device device() const { return Device(kCUDA); }
  bool is_cuda() const { return true; }
  bool is_cpu() const { return false; }
  bool requires_grad() const { return false; }
  bool is_contiguous(MemoryFormat = MemoryFormat::Contiguous) const {
    std::int64_t expected = 1;
    for (std::int64_t d = dim() - 1; d >= 0; --d) {
      if (meta().sizes[static_cast<std::size_t>(d)] != 1 && meta().strides[static_cast<std::size_t>(d)] != expected) return false;
      expected *= meta().sizes[static_cast<std::size_t>(d)];
    }
    return true;
  }

  void* data_ptr() const { return cuset_kb::fakeAddress(meta()); }
  template <class T>
  T* data_ptr() const {
    if (c10::CppTypeToScalarType<std::remove_cv_t<T>>::value != scalar_type()) {
      throw c10::Error(std::string("expected scalar type ") + c10::toString(c10::CppTypeToScalarType<std::remove_cv_t<T>>::value) +
                       " but found " + c10::toString(scalar_type()));
    }
    return static_cast<T*>(data_ptr());
  }
  template <class T>
  T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <class T>
  const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T>
  T item() const { cuset_kb::unsupported("host code reads a tensor's value (.item())"); }
  // Not recorded: the host build stops here with the reason (docs/kernelbench.md).
  template <class T, std::size_t N>
  void accessor() const { static_assert(sizeof(T) == 0, "cuset: host code reads tensor data through an accessor"); }
  template <class T, std::size_t N, template <class> class P = std::add_pointer_t, class I = std::int64_t>
  void packed_accessor32() const { static_assert(sizeof(T) == 0, "cuset: packed accessors as kernel arguments are not recorded"); }
  template <class T, std::size_t N, template <class> class P = std::add_pointer_t, class I = std::int64_t>
  void packed_accessor64() const { static_assert(sizeof(T) == 0, "cuset: packed accessors as kernel arguments are not recorded"); }
  Tensor cpu() const { cuset_kb::unsupported("host code moves a tensor to the CPU (.cpu())"); }

  // Operations the recorder runs (a Tensor method of the same name in Python).
// A braced list first ({1}, {-1, n}) cannot deduce a template parameter: the second overload takes it.
#define CUSET_KB_METHOD(name)                                                                                      \
  template <class... A>                                                                                            \
  Tensor name(const A&... a) const { return cuset_kb::tensorOf(cuset_kb::call(true, #name, cuset_kb::values(*this, a...))); } \
  template <class... A>                                                                                            \
  Tensor name(IntArrayRef list, const A&... a) const {                                                             \
    return cuset_kb::tensorOf(cuset_kb::call(true, #name, cuset_kb::values(*this, list, a...)));                   \
  }
#define CUSET_KB_INPLACE(name)                                                  \
  template <class... A>                                                         \
  const Tensor& name(const A&... a) const {                                     \
    cuset_kb::call(true, #name, cuset_kb::values(*this, a...));                 \
    return *this;                                                               \
  }
  CUSET_KB_METHOD(contiguous) CUSET_KB_METHOD(clone) CUSET_KB_METHOD(view) CUSET_KB_METHOD(reshape) CUSET_KB_METHOD(transpose)
  CUSET_KB_METHOD(permute) CUSET_KB_METHOD(unsqueeze) CUSET_KB_METHOD(squeeze) CUSET_KB_METHOD(flatten) CUSET_KB_METHOD(select)
  CUSET_KB_METHOD(slice) CUSET_KB_METHOD(narrow) CUSET_KB_METHOD(expand) CUSET_KB_METHOD(expand_as) CUSET_KB_METHOD(view_as)
  CUSET_KB_METHOD(reshape_as) CUSET_KB_METHOD(t) CUSET_KB_METHOD(to) CUSET_KB_METHOD(type_as) CUSET_KB_METHOD(mean) CUSET_KB_METHOD(sum)
  CUSET_KB_METHOD(prod) CUSET_KB_METHOD(amax) CUSET_KB_METHOD(amin) CUSET_KB_METHOD(min) CUSET_KB_METHOD(max) CUSET_KB_METHOD(matmul) CUSET_KB_METHOD(mm) CUSET_KB_METHOD(bmm)
  CUSET_KB_METHOD(add) CUSET_KB_METHOD(sub) CUSET_KB_METHOD(mul) CUSET_KB_METHOD(div) CUSET_KB_METHOD(pow) CUSET_KB_METHOD(neg)
  CUSET_KB_METHOD(abs) CUSET_KB_METHOD(exp) CUSET_KB_METHOD(log) CUSET_KB_METHOD(sqrt) CUSET_KB_METHOD(rsqrt) CUSET_KB_METHOD(relu)
  CUSET_KB_METHOD(sigmoid) CUSET_KB_METHOD(tanh) CUSET_KB_METHOD(clamp) CUSET_KB_METHOD(softmax) CUSET_KB_METHOD(log_softmax)
  CUSET_KB_METHOD(var) CUSET_KB_METHOD(std) CUSET_KB_METHOD(norm) CUSET_KB_METHOD(cumsum) CUSET_KB_METHOD(triu) CUSET_KB_METHOD(tril)
  CUSET_KB_METHOD(index_select) CUSET_KB_METHOD(gather) CUSET_KB_METHOD(masked_fill) CUSET_KB_METHOD(where) CUSET_KB_METHOD(repeat)
  CUSET_KB_METHOD(new_empty) CUSET_KB_METHOD(new_zeros) CUSET_KB_METHOD(new_ones) CUSET_KB_METHOD(new_full)
  CUSET_KB_INPLACE(zero_) CUSET_KB_INPLACE(fill_) CUSET_KB_INPLACE(copy_) CUSET_KB_INPLACE(add_) CUSET_KB_INPLACE(sub_)
  CUSET_KB_INPLACE(mul_) CUSET_KB_INPLACE(div_) CUSET_KB_INPLACE(relu_) CUSET_KB_INPLACE(clamp_) CUSET_KB_INPLACE(resize_)
#undef CUSET_KB_METHOD
#undef CUSET_KB_INPLACE
  Tensor cuda() const { return *this; }
  Tensor operator[](std::int64_t i) const { return select(0, i); }
  Tensor operator-() const { return neg(); }
  Tensor type(ScalarType t) const { return to(t); }
  // The deprecated x.type() that host code still hands to AT_DISPATCH (x.type().scalarType()).
  DeprecatedTypeProperties type() const { return DeprecatedTypeProperties(scalar_type()); }
  bool is_floating_point() const { return c10::isFloatingType(scalar_type()); }
  int64_t get_device() const { return 0; }

 private:
  void check() const {
    if (!meta_) throw c10::Error("an undefined tensor is used");
  }
  std::size_t wrap(std::int64_t d) const { return static_cast<std::size_t>(d < 0 ? d + dim() : d); }
  std::shared_ptr<const TensorMeta> meta_;
};

using TensorList = ArrayRef<Tensor>;
inline std::optional<Device> device_of(const Tensor& t) { return t.device(); }

#define CUSET_KB_OPERATOR(op, name)                                                                                   \
  inline Tensor operator op(const Tensor& a, const Tensor& b) { return a.name(b); }                                   \
  inline Tensor operator op(const Tensor& a, const Scalar& b) { return a.name(b); }                                   \
  inline Tensor operator op(const Scalar& a, const Tensor& b) {                                                       \
    return cuset_kb::tensorOf(cuset_kb::call(false, "cuset_reverse_" #name, cuset_kb::values(b, a)));                \
  }
CUSET_KB_OPERATOR(+, add)
CUSET_KB_OPERATOR(-, sub)
CUSET_KB_OPERATOR(*, mul)
CUSET_KB_OPERATOR(/, div)
#undef CUSET_KB_OPERATOR

// torch.<name>(...) in the recorder.
#define CUSET_KB_FUNCTION(name) \
  template <class... A>         \
  Tensor name(const A&... a) { return cuset_kb::tensorOf(cuset_kb::call(false, #name, cuset_kb::values(a...))); }
CUSET_KB_FUNCTION(empty_like) CUSET_KB_FUNCTION(zeros_like) CUSET_KB_FUNCTION(ones_like) CUSET_KB_FUNCTION(full_like)
CUSET_KB_FUNCTION(empty_strided) CUSET_KB_FUNCTION(matmul) CUSET_KB_FUNCTION(mm) CUSET_KB_FUNCTION(bmm) CUSET_KB_FUNCTION(addmm)
CUSET_KB_FUNCTION(relu) CUSET_KB_FUNCTION(sigmoid) CUSET_KB_FUNCTION(tanh) CUSET_KB_FUNCTION(exp) CUSET_KB_FUNCTION(log)
CUSET_KB_FUNCTION(softmax) CUSET_KB_FUNCTION(log_softmax) CUSET_KB_FUNCTION(mean) CUSET_KB_FUNCTION(sum) CUSET_KB_FUNCTION(add)
CUSET_KB_FUNCTION(sub) CUSET_KB_FUNCTION(mul) CUSET_KB_FUNCTION(div) CUSET_KB_FUNCTION(clamp) CUSET_KB_FUNCTION(where)
CUSET_KB_FUNCTION(conv2d) CUSET_KB_FUNCTION(linear) CUSET_KB_FUNCTION(transpose) CUSET_KB_FUNCTION(reshape) CUSET_KB_FUNCTION(arange)
CUSET_KB_FUNCTION(cat) CUSET_KB_FUNCTION(stack)
// Further torch functions the published solutions' host code calls (measured over CUDA-L1's 250).
CUSET_KB_FUNCTION(abs) CUSET_KB_FUNCTION(neg) CUSET_KB_FUNCTION(sqrt) CUSET_KB_FUNCTION(rsqrt) CUSET_KB_FUNCTION(pow)
CUSET_KB_FUNCTION(cumsum) CUSET_KB_FUNCTION(batch_norm) CUSET_KB_FUNCTION(layer_norm) CUSET_KB_FUNCTION(group_norm)
CUSET_KB_FUNCTION(conv1d) CUSET_KB_FUNCTION(conv3d) CUSET_KB_FUNCTION(conv_transpose1d) CUSET_KB_FUNCTION(conv_transpose2d)
CUSET_KB_FUNCTION(conv_transpose3d) CUSET_KB_FUNCTION(max_pool2d) CUSET_KB_FUNCTION(avg_pool2d) CUSET_KB_FUNCTION(gelu)
CUSET_KB_FUNCTION(silu) CUSET_KB_FUNCTION(amax) CUSET_KB_FUNCTION(amin) CUSET_KB_FUNCTION(baddbmm) CUSET_KB_FUNCTION(einsum)
CUSET_KB_FUNCTION(clamp_min) CUSET_KB_FUNCTION(clamp_max) CUSET_KB_FUNCTION(maximum) CUSET_KB_FUNCTION(minimum)
CUSET_KB_FUNCTION(logsumexp) CUSET_KB_FUNCTION(contiguous) CUSET_KB_FUNCTION(flatten) CUSET_KB_FUNCTION(permute)
CUSET_KB_FUNCTION(sigmoid_) CUSET_KB_FUNCTION(relu_)
#undef CUSET_KB_FUNCTION



// Factories take a size list first; `{a, b}` needs an explicit parameter type to deduce.
#define CUSET_KB_FACTORY(name)                                                                                         \
  template <class... A>                                                                                                \
  Tensor name(IntArrayRef sizes, const A&... a) { return cuset_kb::tensorOf(cuset_kb::call(false, #name, cuset_kb::values(sizes, a...))); }
CUSET_KB_FACTORY(empty) CUSET_KB_FACTORY(zeros) CUSET_KB_FACTORY(ones) CUSET_KB_FACTORY(rand) CUSET_KB_FACTORY(randn)
#undef CUSET_KB_FACTORY
template <class... A>
Tensor full(IntArrayRef sizes, const Scalar& value, const A&... a) {
  return cuset_kb::tensorOf(cuset_kb::call(false, "full", cuset_kb::values(sizes, value, a...)));
}

}  // namespace at

// As torch's Macros.h (included by every torch header) makes c10::cuda's names at::cuda's, whichever
// <c10/cuda/...> header declared them.
namespace c10::cuda {}
namespace at::cuda {
using namespace c10::cuda;
}  // namespace at::cuda

namespace torch {
using namespace at;
using at::Tensor;
// torch::nn::functional::<name>(...): torch.nn.functional.<name> in the recorder.
namespace nn::functional {
#define CUSET_KB_FUNCTIONAL(name) \
  template <class... A>         \
  Tensor name(const A&... a) { return cuset_kb::tensorOf(cuset_kb::call(false, "nn.functional." #name, cuset_kb::values(a...))); }
CUSET_KB_FUNCTIONAL(mish) CUSET_KB_FUNCTIONAL(gelu) CUSET_KB_FUNCTIONAL(silu) CUSET_KB_FUNCTIONAL(softplus) CUSET_KB_FUNCTIONAL(hardswish)
CUSET_KB_FUNCTIONAL(hardtanh) CUSET_KB_FUNCTIONAL(leaky_relu) CUSET_KB_FUNCTIONAL(elu) CUSET_KB_FUNCTIONAL(selu)
#undef CUSET_KB_FUNCTIONAL
}  // namespace nn::functional
namespace indexing {}
using Dtype = at::ScalarType;
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions device(DeviceType d) { return TensorOptions(d); }
}  // namespace torch

#define TORCH_CHECK(cond, ...)                                                                                     \
  do {                                                                                                             \
    if (!(cond)) throw ::c10::Error(::cuset_kb::message("Expected " #cond " to be true", ##__VA_ARGS__));          \
  } while (0)
#define TORCH_CHECK_EQ(a, b) TORCH_CHECK((a) == (b))
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond) TORCH_CHECK(cond)
#define AT_ERROR(...) throw ::c10::Error(::cuset_kb::message("", ##__VA_ARGS__))
#define TORCH_EXTENSION_NAME cuset_kb_extension

namespace cuset_kb {
template <class... A>
std::string message(const char* fallback, const A&... a) {
  std::ostringstream s;
  if constexpr (sizeof...(A) == 0) s << fallback;
  else ((s << a), ...);
  return s.str();
}
}  // namespace cuset_kb

#include "cuset_kb/dispatch.hpp"
#include "cuset_kb/module.hpp"
