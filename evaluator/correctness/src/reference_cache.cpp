#include "cuset/evaluator/correctness/reference_cache.hpp"

#include "cuset/common/hash.hpp"

namespace cuset {

std::vector<HostTensor> ReferenceCache::run(const Problem& problem, const std::vector<HostTensor>& inputs, const SizeBindings& sizes,
                                            Float32Numerics numerics, std::vector<UpdatedInput>* updated) {
  Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Not the id alone: an engine's runs judge against many suites, whose problems may share an id
    // (every reference the service imports is level1/kb1_reference).
    const std::string identity = problem.directory.string() + '\n' + problem.id + '\n' + hashString(problem.reference).hex();
    auto& slot = entries_[{identity, numerics}];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
  }
  std::lock_guard lock(entry->mutex);  // one reference run at a time per problem
  if (!entry->compileError.empty()) throw ReferenceFailure(entry->compileError);
  if (!entry->reference) {
    try {
      entry->reference = std::make_unique<TorchReference>(TorchReference::compile(problem, numerics));
    } catch (const std::exception& e) {
      entry->compileError = e.what();
      throw ReferenceFailure(entry->compileError);
    }
  }
  try {
    return entry->reference->run(inputs, sizes, onGpu_, updated);
  } catch (const std::exception& e) {
    throw ReferenceFailure(e.what());
  }
}

}  // namespace cuset
