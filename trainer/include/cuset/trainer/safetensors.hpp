#pragma once
// Hugging Face safetensors: the checkpoint format models are loaded from and saved to, with HF tensor
// names, so checkpoints move between CuSeT and the Python ecosystem.
//
// File layout: u64 little-endian header length N, N bytes of JSON header
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ..., "__metadata__": {..}}
// then the data buffer, which the tensors must cover exactly (no holes, no overlaps).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cuset::safetensors {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };
std::string_view dtypeName(DType d);  // "F32", ...
std::size_t dtypeSize(DType d);

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;  // into the mapped file
};

// One .safetensors file, memory-mapped read-only and fully validated on open: every error names the
// file and the problem, and no access afterwards can read outside the mapping.
class File {
 public:
  static File open(const std::filesystem::path& path);
  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  File() = default;
  std::filesystem::path path_;
  void* mapping_ = nullptr;
  std::size_t mappedBytes_ = 0;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A checkpoint folder: `model.safetensors`, or shards listed by `model.safetensors.index.json`.
class Checkpoint {
 public:
  static Checkpoint open(const std::filesystem::path& directory);
  const TensorView* find(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::vector<std::unique_ptr<File>> files_;
  std::map<std::string, const TensorView*, std::less<>> index_;
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;
};

// Writes one file atomically (temporary + rename): a crash leaves the old file or the new one.
void write(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata = {});

}  // namespace cuset::safetensors
