#pragma once
// A dense, row-major tensor in host memory: the currency between input generation, the LibTorch
// reference and the backends. Storage is 64-byte aligned so it can be wrapped without copies.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/dtype.hpp"

namespace cuset {

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<std::int64_t> shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t numel() const { return numel_; }
  std::size_t byteSize() const { return static_cast<std::size_t>(numel_) * dtypeSize(dtype_); }
  std::byte* data() { return storage_.get(); }
  const std::byte* data() const { return storage_.get(); }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(storage_.get());
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(storage_.get());
  }

  // Element i converted to double (fp16/bf16 decoded, bool as 0/1).
  double valueAsDouble(std::int64_t i) const;
  std::string shapeString() const;  // "[64, 1000]"

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  DType dtype_ = DType::float32;
  std::vector<std::int64_t> shape_;
  std::int64_t numel_ = 0;
  std::unique_ptr<std::byte[], FreeDeleter> storage_;
};

std::string formatShape(const std::vector<std::int64_t>& shape);

}  // namespace cuset
