#include "cuset/evaluator/problem/host_tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cuset/common/error.hpp"

namespace cuset {

void HostTensor::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, std::vector<std::int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (auto d : shape_) {
    if (d < 0 || __builtin_mul_overflow(numel_, d, &numel_)) throw makeError("invalid tensor shape {}", formatShape(shape_));
  }
  constexpr std::size_t kAlign = 64;
  const std::size_t bytes = ((std::max<std::size_t>(byteSize(), 1) + kAlign - 1) / kAlign) * kAlign;
  storage_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, bytes)));
  if (!storage_) throw makeError("out of host memory allocating a {} {} tensor ({} bytes)", dtypeName(dtype_), formatShape(shape_), bytes);
  std::memset(storage_.get(), 0, bytes);
}

double HostTensor::valueAsDouble(std::int64_t i) const {
  switch (dtype_) {
    case DType::float32:
      return as<float>()[i];
    case DType::float16:
      return halfBitsToFloat(as<std::uint16_t>()[i]);
    case DType::bfloat16:
      return bfloat16BitsToFloat(as<std::uint16_t>()[i]);
    case DType::int32:
      return as<std::int32_t>()[i];
    case DType::int64:
      return static_cast<double>(as<std::int64_t>()[i]);
    case DType::boolean:
      return as<std::uint8_t>()[i] != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

std::string formatShape(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string HostTensor::shapeString() const { return formatShape(shape_); }

}  // namespace cuset
