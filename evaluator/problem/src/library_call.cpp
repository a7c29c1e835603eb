// Library steps through LibTorch's dispatcher (library_call.hpp). Besides torch_reference.cpp, the
// evaluator's one translation unit that includes LibTorch.
#include "cuset/evaluator/problem/library_call.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <string_view>

namespace cuset {
namespace {

at::ScalarType scalarType(const std::string& name) {
  static const std::map<std::string, at::ScalarType> kTypes = {
      {"float32", at::kFloat}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16}, {"float64", at::kDouble}, {"int32", at::kInt},
      {"int64", at::kLong},    {"int16", at::kShort},  {"int8", at::kChar},         {"uint8", at::kByte},     {"bool", at::kBool}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) throw std::runtime_error("unknown dtype " + name);
  return it->second;
}

// A view of the region: {"byte": buffer offset, "offset": elements, "sizes", "strides", "dtype"}.
at::Tensor viewOf(const nlohmann::json& v, const LibraryMemory& memory) {
  const at::ScalarType dtype = scalarType(v.at("dtype").get<std::string>());
  const auto offset = v.at("byte").get<std::int64_t>() + v.at("offset").get<std::int64_t>() * static_cast<std::int64_t>(c10::elementSize(dtype));
  auto options = at::TensorOptions().dtype(dtype);
  options = memory.cuda ? options.device(at::kCUDA, static_cast<c10::DeviceIndex>(memory.device)) : options.device(at::kCPU);
  return torch::from_blob(memory.base + offset, v.at("sizes").get<std::vector<std::int64_t>>(), v.at("strides").get<std::vector<std::int64_t>>(),
                          options);
}

c10::TypePtr unwrapOptional(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

struct Converter {
  const LibraryMemory& memory;
  bool upcast;                                                  // float16/bfloat16 tensors as float32 copies
  std::vector<std::pair<at::Tensor, at::Tensor>> upcastCopies;  // (original view, its float32 copy)

  at::Tensor tensor(const nlohmann::json& v) {
    at::Tensor t = viewOf(v, memory);
    if (upcast && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16)) {
      at::Tensor wide = t.to(at::kFloat);
      upcastCopies.emplace_back(t, wide);
      return wide;
    }
    return t;
  }

  c10::IValue value(const nlohmann::json& j, const c10::TypePtr& declared) {
    const c10::TypePtr type = unwrapOptional(declared);
    if (j.is_null()) return {};
    if (j.is_object()) {
      if (j.contains("tensor")) return tensor(j["tensor"]);
      if (j.contains("dtype")) return c10::IValue(scalarType(j["dtype"].get<std::string>()));
      if (j.contains("layout")) return c10::IValue(at::kStrided);
      if (j.contains("device"))
        return c10::IValue(memory.cuda ? c10::Device(at::kCUDA, static_cast<c10::DeviceIndex>(memory.device)) : c10::Device(at::kCPU));
      if (j.contains("memory_format")) {
        const std::string f = j["memory_format"];
        return c10::IValue(f == "channels_last"      ? at::MemoryFormat::ChannelsLast
                           : f == "channels_last_3d" ? at::MemoryFormat::ChannelsLast3d
                           : f == "preserve_format"  ? at::MemoryFormat::Preserve
                                                     : at::MemoryFormat::Contiguous);
      }
      if (j.contains("float")) return c10::IValue(std::stod(j["float"].get<std::string>()));
      throw std::runtime_error("an argument this harness cannot read: " + j.dump());
    }
    if (j.is_boolean()) return c10::IValue(j.get<bool>());
    if (j.is_number() && type->kind() == c10::TypeKind::TensorType) {
      // A Python number where the op takes a tensor (x.add_(1)): a wrapped number, as Python's binding
      // makes it, so it does not decide the result's dtype.
      at::Tensor t = j.is_number_integer() ? at::scalar_tensor(j.get<std::int64_t>(), at::kLong) : at::scalar_tensor(j.get<double>(), at::kDouble);
      t.unsafeGetTensorImpl()->set_wrapped_number(true);
      return t;
    }
    if (j.is_number_integer()) {
      if (type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(j.get<std::int64_t>()));
      if (auto list = type->cast<c10::ListType>()) return c10::IValue(std::vector<std::int64_t>{j.get<std::int64_t>()});  // int[2] given as 3
      return c10::IValue(j.get<std::int64_t>());
    }
    if (j.is_number()) return c10::IValue(j.get<double>());
    if (j.is_string()) return c10::IValue(j.get<std::string>());
    if (j.is_array()) return list(j, type);
    throw std::runtime_error("an argument this harness cannot read: " + j.dump());
  }

  c10::IValue list(const nlohmann::json& j, const c10::TypePtr& type) {
    const auto listType = type->cast<c10::ListType>();
    const c10::TypePtr element = listType ? listType->getElementType() : c10::IntType::get();
    const c10::TypePtr inner = unwrapOptional(element);
    if (inner->kind() == c10::TypeKind::TensorType) {
      if (element->kind() == c10::TypeKind::OptionalType) {
        c10::List<c10::optional<at::Tensor>> out;
        for (const auto& x : j) out.push_back(x.is_null() ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(tensor(x.at("tensor"))));
        return c10::IValue(out);
      }
      std::vector<at::Tensor> out;
      for (const auto& x : j) out.push_back(tensor(x.at("tensor")));
      return c10::IValue(out);
    }
    if (inner->kind() == c10::TypeKind::FloatType) return c10::IValue(j.get<std::vector<double>>());
    if (inner->kind() == c10::TypeKind::BoolType) return c10::IValue(j.get<std::vector<bool>>());
    return c10::IValue(j.get<std::vector<std::int64_t>>());
  }
};

c10::OperatorHandle findOp(const std::string& op, const std::string& overload) {
  auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
  if (!handle) throw std::runtime_error(fmt::format("this LibTorch has no op {}{}", op, overload.empty() ? "" : "." + overload));
  return *handle;
}

void run(const nlohmann::json& call, const LibraryMemory& memory, bool upcast) {
  const c10::OperatorHandle op = findOp(call.at("op").get<std::string>(), call.value("overload", std::string()));
  const auto& arguments = op.schema().arguments();
  const nlohmann::json& args = call.at("args");
  const nlohmann::json kwargs = call.value("kwargs", nlohmann::json::object());
  if (args.size() > arguments.size())
    throw std::runtime_error(fmt::format("{} takes {} arguments, the step gives {}", op.schema().name(), arguments.size(), args.size()));
  for (const auto& [name, v] : kwargs.items()) {
    if (std::none_of(arguments.begin(), arguments.end(), [&](const c10::Argument& a) { return a.name() == name; })) {
      throw std::runtime_error(fmt::format("{} has no argument '{}'", op.schema().name(), name));
    }
  }
  Converter convert{memory, upcast, {}};
  torch::jit::Stack stack;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& a = arguments[i];
    if (i < args.size())
      stack.push_back(convert.value(args[i], a.type()));
    else if (kwargs.contains(a.name()))
      stack.push_back(convert.value(kwargs[a.name()], a.type()));
    else if (a.default_value())
      stack.push_back(*a.default_value());
    else
      throw std::runtime_error(fmt::format("{}: argument '{}' is missing", op.schema().name(), a.name()));
  }
  {
    torch::NoGradGuard noGrad;  // the harness computes, nothing trains
    op.callBoxed(&stack);
  }
  // Results of a functional op into their views; written arguments of an in-place op back from their
  // float32 copies.
  const nlohmann::json outputs = call.value("outputs", nlohmann::json::array());
  std::size_t next = 0;
  for (const auto& r : stack) {
    if (!r.isTensor() || next >= outputs.size()) continue;
    at::Tensor view = viewOf(outputs[next++], memory);
    // An auxiliary result some devices leave empty (batch norm's saved statistics in eval mode are
    // [0] on the CPU, [C] on the meta device the recording ran on): nothing to copy.
    if (r.toTensor().numel() == 0 && view.numel() != 0) continue;
    view.copy_(r.toTensor());
  }
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::AliasInfo* alias = arguments[i].alias_info();
    if (!alias || !alias->isWrite()) continue;
    for (const auto& [original, wide] : convert.upcastCopies) original.copy_(wide);
    break;
  }
}

}  // namespace

std::string runLibraryCall(const nlohmann::json& call, const LibraryMemory& memory) {
  try {
    try {
      run(call, memory, false);
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      const bool reducedOnCpu = !memory.cuda && (what.find("'Half'") != std::string::npos || what.find("'BFloat16'") != std::string::npos);
      if (!reducedOnCpu) throw;
      run(call, memory, true);
    }
    return {};
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    return what.substr(0, what.find('\n'));
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string libraryOpRefusal(const std::string& op, const std::string& overload) {
  if (!op.starts_with("aten::")) return fmt::format("{} is not an ATen op", op);
  static const std::array<std::string_view, 8> kDenied = {"from_file", "_local_scalar_dense", "item",          "set_",
                                                          "resize_",   "record_stream",       "_assert_async", "save"};
  const std::string_view name = std::string_view(op).substr(6);
  if (std::find(kDenied.begin(), kDenied.end(), name) != kDenied.end()) return fmt::format("{} cannot be a library step", op);
  const auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
  if (!handle) return fmt::format("this LibTorch has no op {}{}", op, overload.empty() ? "" : "." + overload);
  static const std::array<std::string_view, 10> kStringArguments = {"reduce", "rounding_mode", "approximate",   "padding",  "equation",
                                                                    "mode",   "side",          "interpolation", "indexing", "reduction"};
  for (const auto& a : handle->schema().arguments()) {
    const c10::TypePtr t = unwrapOptional(a.type());
    if (t->kind() == c10::TypeKind::GeneratorType) return fmt::format("{} draws random numbers", op);
    if (t->kind() == c10::TypeKind::StringType && std::find(kStringArguments.begin(), kStringArguments.end(), a.name()) == kStringArguments.end()) {
      return fmt::format("{} takes a string argument '{}'", op, a.name());
    }
  }
  return {};
}

std::vector<nlohmann::json> libraryWrittenArguments(const nlohmann::json& call) {
  const c10::OperatorHandle op = findOp(call.at("op").get<std::string>(), call.value("overload", std::string()));
  const auto& arguments = op.schema().arguments();
  const nlohmann::json& args = call.at("args");
  const nlohmann::json kwargs = call.value("kwargs", nlohmann::json::object());
  auto given = [&](std::size_t i) -> const nlohmann::json* {
    if (i < args.size()) return &args[i];
    if (kwargs.contains(arguments[i].name())) return &kwargs[arguments[i].name()];
    return nullptr;
  };
  auto training = [&] {
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i].name() == "training") {
        const nlohmann::json* v = given(i);
        return v && v->is_boolean() && v->get<bool>();
      }
    }
    return false;
  };
  static const std::array<std::string_view, 7> kHiddenWrites = {"native_batch_norm", "batch_norm",        "_batch_norm_impl_index",
                                                                "cudnn_batch_norm",  "miopen_batch_norm", "_native_batch_norm_legit",
                                                                "instance_norm"};
  const std::string name = op.schema().name();
  const bool hidden =
      std::find(kHiddenWrites.begin(), kHiddenWrites.end(), std::string_view(name).substr(name.find("::") + 2)) != kHiddenWrites.end() && training();
  std::vector<nlohmann::json> written;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::AliasInfo* alias = arguments[i].alias_info();
    const bool writes = (alias && alias->isWrite()) || (hidden && (arguments[i].name() == "running_mean" || arguments[i].name() == "running_var"));
    const nlohmann::json* v = given(i);
    if (!writes || !v) continue;
    if (v->is_object() && v->contains("tensor")) written.push_back(v->at("tensor"));
    if (v->is_array()) {
      for (const auto& x : *v) {
        if (x.is_object() && x.contains("tensor")) written.push_back(x.at("tensor"));
      }
    }
  }
  return written;
}

}  // namespace cuset
