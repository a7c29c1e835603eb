// The only evaluator file that includes LibTorch headers.
#include "cuset/evaluator/problem/torch_reference.hpp"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "cuset/evaluator/problem/input_generator.hpp"

#include "cuset/common/error.hpp"

namespace cuset {
namespace {

c10::ScalarType storageType(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return torch::kFloat32;
    case DType::float16:
      return torch::kFloat16;
    case DType::bfloat16:
      return torch::kBFloat16;
    case DType::int32:
      return torch::kInt32;
    case DType::int64:
      return torch::kInt64;
    case DType::boolean:
      return torch::kBool;
  }
  return torch::kFloat32;
}

std::string problemFile(const Problem& p) { return (p.directory / "problem.yaml").string(); }

// Python TorchScript resolves `torch.int32` through the Python `torch` module; torch::jit::compile in
// C++ has no such module, and a dtype is an int (its ScalarType) in TorchScript anyway. So the dtype
// names a reference may use become those ints before it is compiled; `dtype=torch.float16` and
// `x.to(torch.int32)` then mean what they mean in Python.
std::string withDtypeConstants(const std::string& source) {
  static const std::vector<std::pair<std::string, c10::ScalarType>> kNames = {
      {"float32", torch::kFloat32}, {"float", torch::kFloat32}, {"float64", torch::kFloat64},   {"double", torch::kFloat64},
      {"float16", torch::kFloat16}, {"half", torch::kFloat16},  {"bfloat16", torch::kBFloat16}, {"int8", torch::kInt8},
      {"uint8", torch::kUInt8},     {"int16", torch::kInt16},   {"short", torch::kInt16},       {"int32", torch::kInt32},
      {"int", torch::kInt32},       {"int64", torch::kInt64},   {"long", torch::kInt64},        {"bool", torch::kBool}};
  std::string out;
  out.reserve(source.size());
  auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t i = 0; i < source.size();) {
    if (source.compare(i, 6, "torch.") == 0 && (i == 0 || !identifier(source[i - 1]))) {
      std::size_t end = i + 6;
      while (end < source.size() && identifier(source[end])) ++end;
      const std::string name = source.substr(i + 6, end - i - 6);
      // An attribute, not a call or a submodule: `torch.float32`, never `torch.float(` or `torch.int.x`.
      const bool attribute = end >= source.size() || (source[end] != '(' && source[end] != '.');
      const auto it = std::find_if(kNames.begin(), kNames.end(), [&](const auto& n) { return n.first == name; });
      if (attribute && it != kNames.end()) {
        out += std::to_string(static_cast<int>(it->second));
        i = end;
        continue;
      }
    }
    out += source[i++];
  }
  return out;
}

// A tensor viewing a host buffer (no copy, no ownership).
torch::Tensor hostView(const HostTensor& t) { return torch::from_blob(const_cast<std::byte*>(t.data()), t.shape(), storageType(t.dtype())); }

// `t` converted to `out`'s dtype and copied into it; the caller has checked the shape.
void copyInto(HostTensor& out, const torch::Tensor& t) {
  const torch::Tensor host = t.to(torch::kCPU).to(storageType(out.dtype())).contiguous();
  std::memcpy(out.data(), host.data_ptr(), out.byteSize());
}

// A TorchScript archive (`path` inside the problem's folder). torch::jit::Module is a handle to shared
// state, so each TorchReference loads its own copy (attributes are set on it before every call).
torch::jit::Module loadArchive(const Problem& problem, const std::filesystem::path& path, std::string_view what) {
  try {
    return torch::jit::load(path.string());
  } catch (const std::exception& e) {
    throw makeError("{}: {} archive '{}' does not load: {}", problemFile(problem), what, path.string(), e.what());
  }
}

std::size_t inputIndex(const Problem& problem, std::string_view name) {
  if (auto i = problem.inputIndex(name)) return *i;
  throw makeError("{}: '{}' is not an input", problemFile(problem), name);
}

const std::filesystem::path& archiveFor(const Problem& problem, const std::map<std::string, std::filesystem::path>& archives,
                                        const SizeBindings& sizes, std::string_view what) {
  const SizeSet* set = problem.sizeSetOf(sizes);
  auto it = set ? archives.find(set->name) : archives.end();
  if (it == archives.end()) {
    throw makeError("problem {}: the {} is a TorchScript archive per size set and these sizes are none of the problem's sets", problem.id, what);
  }
  return it->second;
}

// Every output of a TorchScript call as a list of tensors.
std::vector<torch::Tensor> tensorsOf(const c10::IValue& result, const Problem& problem, std::string_view what) {
  std::vector<torch::Tensor> produced;
  if (result.isTensor()) {
    produced.push_back(result.toTensor());
  } else if (result.isTuple() || result.isList()) {
    const auto elements = result.isTuple() ? result.toTupleRef().elements().vec() : result.toListRef().vec();
    for (const auto& v : elements) {
      if (!v.isTensor()) throw makeError("problem {}: {} returned a tuple with a non-tensor element", problem.id, what);
      produced.push_back(v.toTensor());
    }
  } else {
    throw makeError("problem {}: {} must return a Tensor or a tuple of Tensors, got {}", problem.id, what, result.tagKind());
  }
  return produced;
}

// roundToTf32 (float32_numerics.hpp) over a tensor; other dtypes pass unchanged. Registered as the op
// cuset::round_tf32, which the TF32 references' graphs and the library steps of a TF32 trial call.
torch::Tensor roundTensorToTf32(const torch::Tensor& t) {
  if (t.scalar_type() != torch::kFloat32) return t;
  const torch::Tensor bits = t.contiguous().view(torch::kInt32);
  const torch::Tensor rounded = bits.add(0x1000).bitwise_and(~0x1FFF).view(torch::kFloat32).view(t.sizes());
  return torch::where(torch::isfinite(t), rounded, t);
}

TORCH_LIBRARY(cuset, m) { m.def("round_tf32(Tensor x) -> Tensor", &roundTensorToTf32); }

// Inserts cuset::round_tf32 before the input and weight of every convolution in `block` and its nested
// blocks; returns how many convolutions it found.
std::size_t roundConvolutionOperands(torch::jit::Graph& graph, torch::jit::Block* block) {
  std::size_t found = 0;
  for (torch::jit::Node* node : block->nodes()) {
    for (torch::jit::Block* inner : node->blocks()) found += roundConvolutionOperands(graph, inner);
    if (!isTf32Convolution(node->kind().toQualString())) continue;
    ++found;
    torch::jit::WithInsertPoint point(node);
    for (std::size_t i = 0; i < 2; ++i) {
      torch::jit::Value* rounded = graph.insert(c10::Symbol::fromQualString("cuset::round_tf32"), {node->input(i)});
      node->replaceInput(i, rounded);
    }
  }
  return found;
}

// Every method of `module` and its submodules, rewritten so (the module was loaded for this reference
// alone: torch::jit::load gives each load its own types and graphs).
void roundConvolutionOperands(torch::jit::Module& module) {
  for (const torch::jit::Module& m : module.modules()) {
    for (const torch::jit::Method& method : m.get_methods()) {
      auto& graph = *torch::jit::toGraphFunction(method.function()).graph();
      roundConvolutionOperands(graph, graph.block());
    }
  }
}

}  // namespace

struct TorchReference::Impl {
  const Problem* problem = nullptr;
  Float32Numerics numerics = Float32Numerics::exact;
  std::shared_ptr<torch::jit::CompilationUnit> unit;
  torch::jit::Function* forward = nullptr;
  struct Binding {
    enum class Kind { input, size, number } kind = Kind::input;
    std::size_t inputIndex = 0;
    std::string sizeName;
    c10::IValue number;
  };
  std::vector<Binding> bindings;  // one per forward parameter
  // Archive references: modules by file, and inputs set as attributes before each call.
  std::mutex archiveMutex;
  std::map<std::filesystem::path, torch::jit::Module> modules;
  std::vector<std::pair<std::string, std::size_t>> attributes;  // dotted path -> input index

  torch::jit::Module& moduleFor(const SizeBindings& sizes) {
    const auto& file = archiveFor(*problem, problem->referenceArchive->archives, sizes, "reference");
    auto it = modules.find(file);
    if (it == modules.end()) {
      torch::jit::Module module = loadArchive(*problem, problem->directory / file, "reference");
      if (numerics == Float32Numerics::tf32Convolutions) roundConvolutionOperands(module);
      it = modules.emplace(file, std::move(module)).first;
    }
    return it->second;
  }

  void setAttributes(torch::jit::Module& module, const std::vector<torch::Tensor>& values) {
    for (std::size_t i = 0; i < attributes.size(); ++i) {
      const std::string& path = attributes[i].first;
      torch::jit::Module owner = module;
      std::size_t start = 0;
      for (std::size_t dot = path.find('.'); dot != std::string::npos; start = dot + 1, dot = path.find('.', start)) {
        const std::string part = path.substr(start, dot - start);
        if (!owner.hasattr(part))
          throw makeError("problem {}: the reference archive has no submodule '{}' (attribute '{}')", problem->id, part, path);
        owner = owner.attr(part).toModule();
      }
      const std::string leaf = path.substr(start);
      if (!owner.hasattr(leaf)) throw makeError("problem {}: the reference archive has no attribute '{}'", problem->id, path);
      owner.setattr(leaf, values[i]);
    }
  }
};

TorchReference::TorchReference(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TorchReference::TorchReference(TorchReference&&) noexcept = default;
TorchReference& TorchReference::operator=(TorchReference&&) noexcept = default;
TorchReference::~TorchReference() = default;

TorchReference TorchReference::compile(const Problem& problem, Float32Numerics numerics) {
  auto impl = std::make_unique<Impl>();
  impl->problem = &problem;
  impl->numerics = numerics;
  if (const auto& archive = problem.referenceArchive) {
    using Kind = Impl::Binding::Kind;
    for (const auto& name : archive->attributes) impl->attributes.emplace_back(name, inputIndex(problem, name));
    if (archive->args.empty()) {
      for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
        const bool isAttribute = std::any_of(impl->attributes.begin(), impl->attributes.end(), [&](auto& a) { return a.second == i; });
        if (!isAttribute) impl->bindings.push_back({Kind::input, i, {}, {}});
      }
    }
    for (const auto& arg : archive->args) {
      if (!arg.input.empty())
        impl->bindings.push_back({Kind::input, inputIndex(problem, arg.input), {}, {}});
      else if (arg.isInteger)
        impl->bindings.push_back({Kind::number, 0, {}, c10::IValue(static_cast<std::int64_t>(arg.number))});
      else
        impl->bindings.push_back({Kind::number, 0, {}, c10::IValue(arg.number)});
    }
    return TorchReference(std::move(impl));
  }
  try {
    impl->unit = torch::jit::compile(withDtypeConstants(problem.reference));
  } catch (const std::exception& e) {
    throw makeError("{}: field 'reference': TorchScript does not compile:\n{}", problemFile(problem), e.what());
  }
  if (!impl->unit->find_function("forward")) {
    throw makeError("{}: field 'reference': no function named 'forward'", problemFile(problem));
  }
  impl->forward = &impl->unit->get_function("forward");
  if (numerics == Float32Numerics::tf32Convolutions) {
    for (torch::jit::Function* f : impl->unit->get_functions()) {
      auto& graph = *torch::jit::toGraphFunction(*f).graph();
      roundConvolutionOperands(graph, graph.block());
    }
  }
  for (const auto& arg : impl->forward->getSchema().arguments()) {
    Impl::Binding b;
    const std::string& name = arg.name();
    const auto kind = arg.type()->kind();
    if (const auto input = problem.inputIndex(name)) {
      if (kind != c10::TypeKind::TensorType) {
        throw makeError("{}: reference parameter '{}' names an input, so it must be annotated ': Tensor'", problemFile(problem), name);
      }
      b.inputIndex = *input;
    } else if (problem.isSizeName(name)) {
      if (kind != c10::TypeKind::IntType) {
        throw makeError("{}: reference parameter '{}' names a size, so it must be annotated ': int'", problemFile(problem), name);
      }
      b.kind = Impl::Binding::Kind::size;
      b.sizeName = name;
    } else {
      throw makeError("{}: reference parameter '{}' is neither an input nor a size name", problemFile(problem), name);
    }
    impl->bindings.push_back(std::move(b));
  }
  return TorchReference(std::move(impl));
}

bool TorchReference::cudaAvailable() { return torch::cuda::is_available(); }

namespace {

// forward's arguments in parameter order: sizes as ints, inputs as tensors viewed over the host
// buffers and turned into what the caller needs by `prepare`.
template <class Bindings, class Prepare>
std::vector<c10::IValue> bindArguments(const Bindings& bindings, const std::vector<HostTensor>& inputs, const SizeBindings& sizes, Prepare prepare) {
  std::vector<c10::IValue> args;
  for (const auto& b : bindings) {
    if (b.kind == TorchReference::Impl::Binding::Kind::size) {
      args.emplace_back(sizes.at(b.sizeName));
      continue;
    }
    if (b.kind == TorchReference::Impl::Binding::Kind::number) {
      args.push_back(b.number);
      continue;
    }
    const HostTensor& in = inputs.at(b.inputIndex);
    args.emplace_back(prepare(hostView(in), in));
  }
  return args;
}

// The archive module for these sizes with its attributes set from `inputs` (each prepared like every
// argument by `prepare`), or nullptr for a compiled reference. The caller holds impl.archiveMutex while
// it uses the module: attributes are state of the shared module.
template <class Prepare>
torch::jit::Module* prepareArchive(TorchReference::Impl& impl, const std::vector<HostTensor>& inputs, const SizeBindings& sizes, Prepare prepare) {
  if (!impl.problem->referenceArchive) return nullptr;
  torch::jit::Module& module = impl.moduleFor(sizes);
  std::vector<torch::Tensor> values;
  for (const auto& [name, index] : impl.attributes) {
    const HostTensor& in = inputs.at(index);
    values.push_back(prepare(hostView(in), in));
  }
  impl.setAttributes(module, values);
  return &module;
}

c10::IValue invokeReference(TorchReference::Impl& impl, torch::jit::Module* module, std::vector<c10::IValue> args) {
  if (module == nullptr) return (*impl.forward)(std::move(args));
  args.insert(args.begin(), module->_ivalue());
  return module->get_method("forward").function()(std::move(args));
}

}  // namespace

void TorchReference::runOnGpu(const std::vector<HostTensor>& inputs, const SizeBindings& sizes,
                              const std::function<bool(const std::function<void()>&)>& step) const {
  const Problem& problem = *impl_->problem;
  if (!cudaAvailable()) throw makeError("problem {}: this LibTorch has no CUDA device to time the reference on", problem.id);
  torch::NoGradGuard noGrad;
  const auto toGpu = [](const torch::Tensor& t, const HostTensor&) { return t.to(torch::kCUDA); };
  const std::vector<c10::IValue> args = bindArguments(impl_->bindings, inputs, sizes, toGpu);
  // Weights go to the device once, before timing: only forward is in the timed loop.
  std::unique_lock lock(impl_->archiveMutex, std::defer_lock);
  if (problem.referenceArchive) lock.lock();
  torch::jit::Module* module = prepareArchive(*impl_, inputs, sizes, toGpu);
  torch::cuda::synchronize();
  const std::function<void()> run = [&] {
    try {
      invokeReference(*impl_, module, args);  // the outputs are discarded: correctness was judged on the CPU
    } catch (const std::exception& e) {
      throw makeError("problem {}: reference forward on the GPU failed: {}", problem.id, e.what());
    }
  };
  while (step(run)) {
  }
  torch::cuda::synchronize();
}

std::vector<HostTensor> TorchReference::run(const std::vector<HostTensor>& inputs, const SizeBindings& sizes, bool onGpu,
                                            std::vector<UpdatedInput>* updated) const {
  const Problem& problem = *impl_->problem;
  torch::NoGradGuard noGrad;
  const auto computeFloat = problem.referenceInFloat64 ? torch::kFloat64 : torch::kFloat32;
  std::vector<std::pair<std::size_t, torch::Tensor>> given;  // what the reference received, by input
  const auto prepare = [&](const torch::Tensor& view, const HostTensor& in) {
    // from_blob does not own the memory; clone() gives the reference its own copy, so nothing it does
    // (in-place ops included) can touch the harness's input buffers.
    torch::Tensor t = view.clone();
    if (isFloating(in.dtype())) t = t.to(computeFloat);
    if (onGpu) t = t.to(torch::kCUDA);
    given.emplace_back(static_cast<std::size_t>(&in - inputs.data()), t);
    return t;
  };
  c10::IValue result;
  try {
    std::vector<c10::IValue> args = bindArguments(impl_->bindings, inputs, sizes, prepare);
    std::unique_lock lock(impl_->archiveMutex, std::defer_lock);
    if (problem.referenceArchive) lock.lock();
    result = invokeReference(*impl_, prepareArchive(*impl_, inputs, sizes, prepare), std::move(args));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw makeError("problem {}: reference forward failed: {}", problem.id, e.what());
  }
  std::vector<torch::Tensor> produced = tensorsOf(result, problem, "reference");
  if (produced.size() != problem.outputs.size()) {
    throw makeError("problem {}: reference returned {} tensor(s) but outputs declares {}", problem.id, produced.size(), problem.outputs.size());
  }
  std::vector<HostTensor> outputs;
  for (std::size_t i = 0; i < produced.size(); ++i) {
    const TensorSpec& spec = problem.outputs[i];
    const torch::Tensor& t = produced[i];
    auto shape = evaluateShape(spec, sizes);
    if (!shape) throw makeError("problem {}: {}", problem.id, shape.error());
    const std::vector<std::int64_t> got(t.sizes().begin(), t.sizes().end());
    if (got != *shape) {
      throw makeError("problem {}: reference output {} '{}' has shape {} but outputs declares {}", problem.id, i, spec.name, formatShape(got),
                      formatShape(*shape));
    }
    const bool gotFloat = t.is_floating_point();
    if (gotFloat != isFloating(spec.dtype) || (!gotFloat && t.scalar_type() != storageType(spec.dtype))) {
      throw makeError("problem {}: reference output '{}' has dtype {} but outputs declares {}{}", problem.id, spec.name,
                      c10::toString(t.scalar_type()), dtypeName(spec.dtype),
                      gotFloat ? "" : " (integer and bool outputs must match exactly: add .to(...) in the reference)");
    }
    HostTensor out(spec.dtype, *shape);
    copyInto(out, t);
    outputs.push_back(std::move(out));
  }
  if (updated) {
    // In place, as the module's own state (a training-mode BatchNorm's running statistics): the value
    // the reference left, in the input's dtype, where it differs from what it was given.
    for (const auto& [index, t] : given) {
      const HostTensor& before = inputs[index];
      if (std::any_of(updated->begin(), updated->end(), [&](const UpdatedInput& u) { return u.input == index; })) continue;
      HostTensor after(before.dtype(), before.shape());
      copyInto(after, t);
      if (std::memcmp(after.data(), before.data(), before.byteSize()) != 0) updated->push_back({index, std::move(after)});
    }
    std::sort(updated->begin(), updated->end(), [](const UpdatedInput& a, const UpdatedInput& b) { return a.input < b.input; });
  }
  return outputs;
}

std::string libtorchVersion() { return TORCH_VERSION; }
// Built with CUDA: libc10_cuda registered its device guard when it loaded, with or without a GPU
// (at::hasCUDA() asks whether a device is usable, which is the other question).
bool libtorchHasCuda() { return c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA); }
int libtorchCudaDevices() { return libtorchHasCuda() ? static_cast<int>(torch::cuda::device_count()) : 0; }

std::vector<HostTensor> drawInputs(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial, bool alternate) {
  if (!problem.inputTransform) return generateInputs(problem, sizes, runSeed, trial, alternate);
  const InputTransform& transform = *problem.inputTransform;
  std::vector<HostTensor> inputs = generateInputs(problem, sizes, runSeed, trial, alternate);
  std::vector<c10::IValue> raws;
  for (const HostTensor& draw : generateDraws(problem, sizes, runSeed, trial, alternate)) {
    raws.emplace_back(hostView(draw).clone());
  }
  // One loaded module per file for the whole process: the transform has no state to set.
  static std::mutex mutex;
  static std::map<std::filesystem::path, torch::jit::Module> modules;
  const std::filesystem::path file = problem.directory / archiveFor(problem, transform.archives, sizes, "input transform");
  std::vector<torch::Tensor> produced;
  {
    std::lock_guard lock(mutex);
    auto it = modules.find(file);
    if (it == modules.end()) it = modules.emplace(file, loadArchive(problem, file, "input transform")).first;
    torch::NoGradGuard noGrad;
    try {
      produced = tensorsOf(it->second.forward(std::move(raws)), problem, "input transform");
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw makeError("problem {}: input transform failed: {}", problem.id, e.what());
    }
  }
  if (produced.size() != transform.produces.size()) {
    throw makeError("problem {}: input transform returned {} tensor(s) but produces lists {}", problem.id, produced.size(),
                    transform.produces.size());
  }
  for (std::size_t i = 0; i < produced.size(); ++i) {
    HostTensor& target = inputs.at(inputIndex(problem, transform.produces[i]));
    const torch::Tensor& t = produced[i];
    const std::vector<std::int64_t> got(t.sizes().begin(), t.sizes().end());
    if (got != target.shape()) {
      throw makeError("problem {}: input transform gives '{}' the shape {} but inputs declares {}", problem.id, transform.produces[i],
                      formatShape(got), formatShape(target.shape()));
    }
    if (t.is_floating_point() != isFloating(target.dtype())) {
      throw makeError("problem {}: input transform gives '{}' dtype {} but inputs declares {}", problem.id, transform.produces[i],
                      c10::toString(t.scalar_type()), dtypeName(target.dtype()));
    }
    copyInto(target, t);
  }
  return inputs;
}

}  // namespace cuset
