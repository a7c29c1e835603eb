// The family registry.
#include "cuset/synth/op_family.hpp"

namespace cuset::synth {

const std::vector<std::unique_ptr<OpFamily>>& allFamilies() {
  static const auto families = [] {
    std::vector<std::unique_ptr<OpFamily>> f;
    f.push_back(makeUnaryFamily());
    f.push_back(makeBinaryFamily());
    f.push_back(makeReduceFamily());
    f.push_back(makeSoftmaxFamily());
    f.push_back(makeTransposeFamily());
    f.push_back(makeMatmulFamily());
    f.push_back(makeNormFamily());
    f.push_back(makeScanFamily());
    return f;
  }();
  return families;
}

const OpFamily* findFamily(std::string_view name) {
  for (const auto& f : allFamilies()) {
    if (f->name() == name) return f.get();
  }
  return nullptr;
}

}  // namespace cuset::synth
