#include "cuset/evaluator/correctness/reference_cache.hpp"

namespace cuset {

std::vector<HostTensor> ReferenceCache::run(const Problem& problem, const std::vector<HostTensor>& inputs, const SizeBindings& sizes,
                                            Float32Numerics numerics, std::vector<UpdatedInput>* updated) {
  Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto& slot = entries_[{problem.id, numerics}];
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
