// Library steps through LibTorch's dispatcher (library_call.hpp). Besides problem/'s
// torch_reference.cpp, the evaluator's one translation unit that includes LibTorch.
#include "cuset/evaluator/candidate/library_call.hpp"

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

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

at::Tensor viewOf(const TensorView& v, const LibraryMemory& memory) {
  if (!v.regionByte) throw std::runtime_error(fmt::format("a view of '{}' was not placed in the region", v.buffer));
  const at::ScalarType dtype = scalarType(std::string(dtypeName(v.dtype)));
  const auto offset = *v.regionByte + v.offset * static_cast<std::int64_t>(c10::elementSize(dtype));
  auto options = at::TensorOptions().dtype(dtype);
  options = memory.cuda ? options.device(at::kCUDA, static_cast<c10::DeviceIndex>(memory.device)) : options.device(at::kCPU);
  return torch::from_blob(memory.base + offset, v.sizes, v.strides, options);
}

// A Python number where the op takes a tensor (x.add_(1)): a wrapped number, as Python's binding makes
// it, so it does not decide the result's dtype.
at::Tensor wrappedNumber(at::Tensor t) {
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

template <class T>
std::vector<T> numbers(const LibraryArg::List& list) {
  std::vector<T> out;
  for (const auto& x : list) {
    if (const auto* i = std::get_if<std::int64_t>(&x.value))
      out.push_back(static_cast<T>(*i));
    else if (const auto* d = std::get_if<double>(&x.value))
      out.push_back(static_cast<T>(*d));
    else if (const auto* b = std::get_if<bool>(&x.value))
      out.push_back(static_cast<T>(*b));
    else
      throw std::runtime_error("a list of numbers holds something else");
  }
  return out;
}

c10::TypePtr unwrapOptional(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

struct Converter {
  const LibraryMemory& memory;
  bool upcast;                                                  // float16/bfloat16 tensors as float32 copies
  std::vector<std::pair<at::Tensor, at::Tensor>> upcastCopies;  // (original view, its float32 copy)

  at::Tensor tensor(const TensorView& v) {
    at::Tensor t = viewOf(v, memory);
    if (upcast && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16)) {
      at::Tensor wide = t.to(at::kFloat);
      upcastCopies.emplace_back(t, wide);
      return wide;
    }
    return t;
  }

  at::Tensor tensorIn(const LibraryArg& a) {
    const auto* v = std::get_if<TensorView>(&a.value);
    if (!v) throw std::runtime_error("a list of tensors holds something else");
    return tensor(*v);
  }

  c10::IValue value(const LibraryArg& a, const c10::TypePtr& declared) {
    const c10::TypePtr type = unwrapOptional(declared);
    const bool tensorType = type->kind() == c10::TypeKind::TensorType;
    return std::visit(
        Overloaded{
            [](std::monostate) { return c10::IValue(); },
            [](bool b) { return c10::IValue(b); },
            [&](std::int64_t i) {
              if (tensorType) return c10::IValue(wrappedNumber(at::scalar_tensor(i, at::kLong)));
              if (type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(i));
              if (type->cast<c10::ListType>()) return c10::IValue(std::vector<std::int64_t>{i});  // int[2] given as 3
              return c10::IValue(i);
            },
            [&](double d) { return tensorType ? c10::IValue(wrappedNumber(at::scalar_tensor(d, at::kDouble))) : c10::IValue(d); },
            [](const std::string& s) { return c10::IValue(s); },
            [&](const TensorView& v) { return c10::IValue(tensor(v)); },
            [](const ScalarTypeArg& t) { return c10::IValue(scalarType(t.name)); },
            [&](const DeviceArg&) {
              return c10::IValue(memory.cuda ? c10::Device(at::kCUDA, static_cast<c10::DeviceIndex>(memory.device)) : c10::Device(at::kCPU));
            },
            [](const LayoutArg&) { return c10::IValue(at::kStrided); },
            [](MemoryFormatArg f) {
              return c10::IValue(f == MemoryFormatArg::channels_last      ? at::MemoryFormat::ChannelsLast
                                 : f == MemoryFormatArg::channels_last_3d ? at::MemoryFormat::ChannelsLast3d
                                 : f == MemoryFormatArg::preserve         ? at::MemoryFormat::Preserve
                                                                          : at::MemoryFormat::Contiguous);
            },
            [&](const LibraryArg::List& l) { return list(l, type); },
        },
        a.value);
  }

  c10::IValue list(const LibraryArg::List& l, const c10::TypePtr& type) {
    const auto listType = type->cast<c10::ListType>();
    const c10::TypePtr element = listType ? listType->getElementType() : c10::IntType::get();
    const c10::TypePtr inner = unwrapOptional(element);
    if (inner->kind() == c10::TypeKind::TensorType) {
      if (element->kind() == c10::TypeKind::OptionalType) {
        c10::List<c10::optional<at::Tensor>> out;
        for (const auto& x : l) {
          out.push_back(std::holds_alternative<std::monostate>(x.value) ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(tensorIn(x)));
        }
        return c10::IValue(out);
      }
      std::vector<at::Tensor> out;
      for (const auto& x : l) out.push_back(tensorIn(x));
      return c10::IValue(out);
    }
    if (inner->kind() == c10::TypeKind::FloatType) return c10::IValue(numbers<double>(l));
    if (inner->kind() == c10::TypeKind::BoolType) return c10::IValue(numbers<bool>(l));
    return c10::IValue(numbers<std::int64_t>(l));
  }
};

c10::OperatorHandle findOp(const std::string& op, const std::string& overload) {
  auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
  if (!handle) throw std::runtime_error(fmt::format("this LibTorch has no op {}{}", op, overload.empty() ? "" : "." + overload));
  return *handle;
}

const LibraryArg* keyword(const LibraryStep& step, const std::string& name) {
  const auto it = std::find_if(step.kwargs.begin(), step.kwargs.end(), [&](const auto& kv) { return kv.first == name; });
  return it == step.kwargs.end() ? nullptr : &it->second;
}

// A convolution's input and weight rounded to TF32, as cuDNN reads them on Ampere and later by default:
// through cuset::round_tf32, the op the TorchScript references' TF32 graphs call (torch_reference.cpp).
void roundConvolutionOperands(torch::jit::Stack& stack) {
  static const c10::OperatorHandle round = findOp("cuset::round_tf32", "");
  for (std::size_t i = 0; i < 2 && i < stack.size(); ++i) {
    if (!stack[i].isTensor()) continue;
    torch::jit::Stack call{stack[i]};
    round.callBoxed(&call);
    stack[i] = call.at(0);
  }
}

void run(const LibraryStep& step, const LibraryMemory& memory, bool upcast, Float32Numerics numerics) {
  const c10::OperatorHandle op = findOp(step.name, step.overload);
  const auto& arguments = op.schema().arguments();
  if (step.args.size() > arguments.size())
    throw std::runtime_error(fmt::format("{} takes {} arguments, the step gives {}", op.schema().name(), arguments.size(), step.args.size()));
  for (const auto& [name, v] : step.kwargs) {
    if (std::none_of(arguments.begin(), arguments.end(), [&](const c10::Argument& a) { return a.name() == name; })) {
      throw std::runtime_error(fmt::format("{} has no argument '{}'", op.schema().name(), name));
    }
  }
  Converter convert{memory, upcast, {}};
  torch::jit::Stack stack;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& a = arguments[i];
    if (i < step.args.size())
      stack.push_back(convert.value(step.args[i], a.type()));
    else if (const LibraryArg* k = keyword(step, a.name()))
      stack.push_back(convert.value(*k, a.type()));
    else if (a.default_value())
      stack.push_back(*a.default_value());
    else
      throw std::runtime_error(fmt::format("{}: argument '{}' is missing", op.schema().name(), a.name()));
  }
  if (numerics == Float32Numerics::tf32Convolutions && isTf32Convolution(step.name)) roundConvolutionOperands(stack);
  {
    torch::NoGradGuard noGrad;  // the harness computes, nothing trains
    op.callBoxed(&stack);
  }
  // Results of a functional op into their views; written arguments of an in-place op back from their
  // float32 copies.
  std::size_t next = 0;
  for (const auto& r : stack) {
    if (!r.isTensor() || next >= step.outputs.size()) continue;
    at::Tensor view = viewOf(step.outputs[next++], memory);
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

std::string runLibraryCall(const LibraryStep& step, const LibraryMemory& memory, Float32Numerics numerics) {
  try {
    try {
      run(step, memory, false, numerics);
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      const bool reducedOnCpu = !memory.cuda && (what.find("'Half'") != std::string::npos || what.find("'BFloat16'") != std::string::npos);
      if (!reducedOnCpu) throw;
      run(step, memory, true, numerics);
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
  if (!isLibraryOp(op)) return fmt::format("{} is not one of the ops a library step may be (docs/kernelbench-solutions.md lists them)", op);
  return {};
}

std::vector<TensorView> libraryWrittenArguments(const LibraryStep& step) {
  const c10::OperatorHandle op = findOp(step.name, step.overload);
  const auto& arguments = op.schema().arguments();
  auto given = [&](std::size_t i) -> const LibraryArg* { return i < step.args.size() ? &step.args[i] : keyword(step, arguments[i].name()); };
  auto training = [&] {
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i].name() == "training") {
        const LibraryArg* v = given(i);
        const bool* on = v ? std::get_if<bool>(&v->value) : nullptr;
        return on && *on;
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
  std::vector<TensorView> written;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::AliasInfo* alias = arguments[i].alias_info();
    const bool writes = (alias && alias->isWrite()) || (hidden && (arguments[i].name() == "running_mean" || arguments[i].name() == "running_var"));
    const LibraryArg* v = given(i);
    if (!writes || !v) continue;
    if (const auto* view = std::get_if<TensorView>(&v->value)) written.push_back(*view);
    if (const auto* list = std::get_if<LibraryArg::List>(&v->value)) {
      for (const auto& x : *list) {
        if (const auto* view = std::get_if<TensorView>(&x.value)) written.push_back(*view);
      }
    }
  }
  return written;
}

}  // namespace cuset
