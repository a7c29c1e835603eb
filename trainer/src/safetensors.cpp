#include "cuset/trainer/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"

namespace fs = std::filesystem;

namespace cuset::safetensors {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit

std::optional<DType> parseDType(std::string_view s) {
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8, DType::U8, DType::BOOL}) {
    if (dtypeName(d) == s) return d;
  }
  return std::nullopt;
}

}  // namespace

std::string_view dtypeName(DType d) {
  switch (d) {
    case DType::F64:
      return "F64";
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::I64:
      return "I64";
    case DType::I32:
      return "I32";
    case DType::I16:
      return "I16";
    case DType::I8:
      return "I8";
    case DType::U8:
      return "U8";
    case DType::BOOL:
      return "BOOL";
  }
  return "?";
}

std::size_t dtypeSize(DType d) {
  switch (d) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::I8:
    case DType::U8:
    case DType::BOOL:
      return 1;
  }
  return 0;
}

File File::open(const fs::path& path) {
  File f;
  f.path_ = path;
  const std::string where = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw makeError("{}: cannot open: {}", where, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw makeError("{}: cannot stat: {}", where, std::strerror(errno));
  }
  f.mappedBytes_ = static_cast<std::size_t>(st.st_size);
  if (f.mappedBytes_ < 8) {
    ::close(fd);
    throw makeError("{}: not a safetensors file ({} bytes, shorter than its 8-byte header length)", where, f.mappedBytes_);
  }
  f.mapping_ = ::mmap(nullptr, f.mappedBytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (f.mapping_ == MAP_FAILED) {
    f.mapping_ = nullptr;
    throw makeError("{}: cannot map: {}", where, std::strerror(errno));
  }
  const auto* bytes = static_cast<const std::byte*>(f.mapping_);
  std::uint64_t headerBytes = 0;
  std::memcpy(&headerBytes, bytes, 8);  // little-endian on every platform CuSeT runs on
  if (headerBytes > kMaxHeaderBytes || headerBytes > f.mappedBytes_ - 8) {
    throw makeError("{}: header length {} does not fit the file ({} bytes): truncated or not a safetensors file", where, headerBytes, f.mappedBytes_);
  }
  const std::string_view headerText(reinterpret_cast<const char*>(bytes + 8), headerBytes);
  if (headerText.empty() || headerText.front() != '{') throw makeError("{}: header is not a JSON object", where);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(headerText);
  } catch (const nlohmann::json::exception& e) {
    throw makeError("{}: header is not valid JSON: {}", where, e.what());
  }
  if (!header.is_object()) throw makeError("{}: header is not a JSON object", where);
  const std::byte* data = bytes + 8 + headerBytes;
  const std::uint64_t dataBytes = f.mappedBytes_ - 8 - headerBytes;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw makeError("{}: __metadata__ must be an object of strings", where);
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw makeError("{}: __metadata__ value '{}' is not a string", where, k);
        f.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      TensorView t;
      t.name = name;
      const auto dtype = parseDType(entry.at("dtype").get<std::string>());
      if (!dtype) throw makeError("unsupported dtype '{}'", entry.at("dtype").get<std::string>());
      t.dtype = *dtype;
      // Through jsonInteger: get<>() of a float such as 1e301 into an integer is undefined (found by fuzz_safetensors).
      t.shape = jsonIntegers(entry.at("shape"), "shape");
      std::vector<std::uint64_t> offsets;
      for (std::int64_t o : jsonIntegers(entry.at("data_offsets"), "data_offsets", 0)) offsets.push_back(static_cast<std::uint64_t>(o));
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > dataBytes) {
        throw makeError("data_offsets out of range of the {}-byte data buffer", dataBytes);
      }
      std::uint64_t elements = 1;
      for (auto d : t.shape) {
        if (d < 0 || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(d), &elements)) throw makeError("invalid shape");
      }
      std::uint64_t expected = 0;
      if (__builtin_mul_overflow(elements, dtypeSize(t.dtype), &expected) || expected != offsets[1] - offsets[0]) {
        throw makeError("shape and dtype need {} bytes but data_offsets span {}", expected, offsets[1] - offsets[0]);
      }
      t.data = std::span<const std::byte>(data + offsets[0], offsets[1] - offsets[0]);
      ranges.emplace_back(offsets[0], offsets[1]);
      f.tensors_.push_back(std::move(t));
    } catch (const nlohmann::json::exception& e) {
      throw makeError("{}: tensor '{}': malformed entry: {}", where, name, e.what());
    } catch (const Error& e) {
      throw makeError("{}: tensor '{}': {}", where, name, e.what());
    }
  }
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t cursor = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin < cursor) throw makeError("{}: tensors overlap at data byte {}", where, begin);
    if (begin > cursor) throw makeError("{}: data bytes {}..{} belong to no tensor", where, cursor, begin);
    cursor = end;
  }
  if (cursor != dataBytes) throw makeError("{}: data bytes {}..{} belong to no tensor", where, cursor, dataBytes);
  std::sort(f.tensors_.begin(), f.tensors_.end(), [](const TensorView& a, const TensorView& b) { return a.name < b.name; });
  return f;
}

File::File(File&& o) noexcept
    : path_(std::move(o.path_)),
      mapping_(std::exchange(o.mapping_, nullptr)),
      mappedBytes_(std::exchange(o.mappedBytes_, 0)),
      tensors_(std::move(o.tensors_)),
      metadata_(std::move(o.metadata_)) {}

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    if (mapping_) ::munmap(mapping_, mappedBytes_);
    path_ = std::move(o.path_);
    mapping_ = std::exchange(o.mapping_, nullptr);
    mappedBytes_ = std::exchange(o.mappedBytes_, 0);
    tensors_ = std::move(o.tensors_);
    metadata_ = std::move(o.metadata_);
  }
  return *this;
}

File::~File() {
  if (mapping_) ::munmap(mapping_, mappedBytes_);
}

const TensorView* File::find(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name, [](const TensorView& t, std::string_view n) { return t.name < n; });
  return (it != tensors_.end() && it->name == name) ? &*it : nullptr;
}

Checkpoint Checkpoint::open(const fs::path& directory) {
  Checkpoint c;
  const fs::path single = directory / "model.safetensors";
  const fs::path indexPath = directory / "model.safetensors.index.json";
  std::vector<fs::path> shards;
  std::map<std::string, std::string> expectedShard;
  if (fs::exists(indexPath)) {
    const nlohmann::json index = readJsonFile(indexPath);
    if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
      throw makeError("{}: has no weight_map object", indexPath.string());
    }
    std::set<std::string> files;
    for (const auto& [name, file] : index["weight_map"].items()) {
      if (!file.is_string()) throw makeError("{}: weight_map['{}'] is not a file name", indexPath.string(), name);
      const std::string shard = file.get<std::string>();
      if (shard.find('/') != std::string::npos) throw makeError("{}: shard '{}' is outside the checkpoint folder", indexPath.string(), shard);
      expectedShard[name] = shard;
      files.insert(shard);
    }
    for (const auto& s : files) shards.push_back(directory / s);
  } else if (fs::exists(single)) {
    shards.push_back(single);
  } else {
    throw makeError("{}: no model.safetensors or model.safetensors.index.json", directory.string());
  }
  for (const auto& s : shards) {
    c.files_.push_back(std::make_unique<File>(File::open(s)));
    for (const auto& t : c.files_.back()->tensors()) {
      if (!c.index_.emplace(t.name, &t).second) throw makeError("{}: tensor '{}' appears in two shards", s.string(), t.name);
    }
  }
  for (const auto& [name, shard] : expectedShard) {
    auto it = c.index_.find(name);
    if (it == c.index_.end()) throw makeError("{}: the index lists '{}' in {}, which lacks it", indexPath.string(), name, shard);
  }
  return c;
}

const TensorView* Checkpoint::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : index_) out.push_back(name);
  return out;
}

void write(const fs::path& path, const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) throw makeError("{}: tensor '{}' given twice", path.string(), t.name);
    std::uint64_t elements = 1;
    for (auto d : t.shape) elements *= static_cast<std::uint64_t>(d);
    if (elements * dtypeSize(t.dtype) != t.data.size()) {
      throw makeError("{}: tensor '{}' has {} bytes but its shape and dtype need {}", path.string(), t.name, t.data.size(),
                      elements * dtypeSize(t.dtype));
    }
    header[t.name] = {{"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string headerText = header.dump();
  headerText.append((8 - headerText.size() % 8) % 8, ' ');  // data starts 8-byte aligned, as HF writes it
  std::string out;
  out.reserve(8 + headerText.size() + offset);
  const std::uint64_t headerBytes = headerText.size();
  out.append(reinterpret_cast<const char*>(&headerBytes), 8);
  out += headerText;
  for (const auto& t : tensors) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  writeFileAtomic(path, out);
}

}  // namespace cuset::safetensors
