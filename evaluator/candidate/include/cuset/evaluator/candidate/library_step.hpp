#pragma once
// A launch plan's library step (DESIGN §3): one ATen op of a closed set, with its arguments as typed
// values, run by the harness through LibTorch on views of the plan's buffers. A producer (the KernelBench
// recording) builds one from its JSON once (libraryStepFromJson), where every field is checked; the
// backends execute this typed form. JSON appears again only where a step crosses a process boundary
// (the GPU worker's protocol), read back by the same function.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/problem/dtype.hpp"

namespace cuset {

// A strided view of one of the plan's buffers.
struct TensorView {
  std::string buffer;
  std::int64_t offset = 0;  // in elements, from the buffer's start
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  DType dtype = DType::float32;
  // The buffer's byte offset in the trial's region, once a backend has placed the buffers
  // (resolvedIn); the views of a plan do not have one.
  std::optional<std::int64_t> regionByte;

  std::string describe() const;  // "x", "t3+128"
};

// The Python-side values a recorded op may take besides tensors and numbers.
struct ScalarTypeArg {
  std::string name;  // one of kLibraryScalarTypes (libraryArgumentRefusal)
};
struct DeviceArg {
  std::string recorded;  // "meta", "cuda": the step runs on the backend's device whatever the recording's was
};
struct LayoutArg {
  std::string name;  // "strided", the one layout views have (libraryArgumentRefusal)
};
enum class MemoryFormatArg { contiguous, channels_last, channels_last_3d, preserve };

// One argument: None, bool, int, float (inf and nan included), string, tensor view, scalar type,
// device, layout, memory format, or a list of these.
struct LibraryArg {
  using List = std::vector<LibraryArg>;
  std::variant<std::monostate, bool, std::int64_t, double, std::string, TensorView, ScalarTypeArg, DeviceArg, LayoutArg, MemoryFormatArg, List> value;
};

inline constexpr std::string_view kLibraryScalarTypes = "float32 float16 bfloat16 float64 int32 int64 int16 int8 uint8 bool";

struct LibraryStep {
  // A step the harness adds: copying a returned view into the output, copying a module buffer before an
  // op updates it, or writing a constant the solution made from data. It runs and is timed like the
  // others but is not the candidate's use of the library.
  enum class Purpose { candidate, output, bufferCopy, constant };

  std::string name;      // "aten::convolution"
  std::string overload;  // "Tensor", or empty
  std::vector<LibraryArg> args;
  std::vector<std::pair<std::string, LibraryArg>> kwargs;  // by name
  std::vector<TensorView> outputs;                         // a functional op's results are copied into these
  Purpose purpose = Purpose::candidate;

  const std::string& op() const { return name; }
  bool harness() const { return purpose != Purpose::candidate; }
  std::string describe() const;  // "aten::convolution(x, conv.weight, ...) -> t3"

  // Every view the step reads or writes (arguments, keyword arguments, outputs), in that order.
  void forEachView(const std::function<void(TensorView&)>& visit);
  void forEachView(const std::function<void(const TensorView&)>& visit) const;
};

// Whether `op` ("aten::convolution") is one of the ATen ops a library step may be: the ops KernelBench's
// reference models run and the ones their solutions call (convolutions, matrix products, pooling,
// normalisation, activations, elementwise arithmetic, reductions, softmax, losses, copies and
// concatenation), the harness's own copies and fills, and nothing that draws random numbers, reads a
// file or a device value on the host, or reinterprets memory (as_strided, set_). docs/kernelbench.md
// lists them.
bool isLibraryOp(std::string_view op);
std::vector<std::string_view> libraryOps();  // sorted

// A step read from its JSON form: {"op", "overload", "args": [...], "kwargs": {...}, "outputs": [view...],
// "purpose"} where a tensor is {"tensor": view}, a view {"buffer", "offset", "sizes", "strides", "dtype"
// (, "byte")}, and the other values {"dtype": name}, {"device": type}, {"layout": name},
// {"memory_format": name}, {"float": "inf"|"-inf"|"nan"}, JSON scalars and arrays. The error names what
// is wrong and where; an argument of a type this harness does not hold says so.
Expected<LibraryStep> libraryStepFromJson(const nlohmann::json& j);
Expected<TensorView> tensorViewFromJson(const nlohmann::json& j);
nlohmann::json toJson(const LibraryStep& step);
// Why a well-formed step takes a value the harness does not hold (a complex dtype, a sparse layout),
// or "".
std::string libraryArgumentRefusal(const LibraryStep& step);
nlohmann::json toJson(const TensorView& view);

}  // namespace cuset
