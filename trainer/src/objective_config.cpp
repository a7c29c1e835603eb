// The objective's names, apart from objectives.cpp so that reading a config needs no LibTorch.
#include "cuset/trainer/objective_config.hpp"

namespace cuset {

std::string_view objectiveName(ObjectiveKind kind) {
  switch (kind) {
    case ObjectiveKind::sft:
      return "sft";
    case ObjectiveKind::cuset:
      return "cuset";
    case ObjectiveKind::cusetMaskOnly:
      return "cuset-mask-only";
    case ObjectiveKind::cusetReweightOnly:
      return "cuset-reweight-only";
    case ObjectiveKind::dft:
      return "dft";
    case ObjectiveKind::rho1:
      return "rho1";
    case ObjectiveKind::profit:
      return "profit";
  }
  return "?";
}

bool parseObjectiveName(std::string_view name, ObjectiveKind& kind) {
  for (auto k : {ObjectiveKind::sft, ObjectiveKind::cuset, ObjectiveKind::cusetMaskOnly, ObjectiveKind::cusetReweightOnly, ObjectiveKind::dft,
                 ObjectiveKind::rho1, ObjectiveKind::profit}) {
    if (objectiveName(k) == name) {
      kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace cuset
