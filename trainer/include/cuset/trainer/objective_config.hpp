#pragma once
// The training objective, as selected in the training YAML's `objective:` block (docs/cuset.md lists
// every knob, its default and how to run ablations). No LibTorch here.
#include <string>
#include <string_view>

namespace cuset {

enum class ObjectiveKind { sft, cuset, cusetMaskOnly, cusetReweightOnly, dft, rho1, profit };
std::string_view objectiveName(ObjectiveKind kind);  // "sft", "cuset", "cuset-mask-only", ...
bool parseObjectiveName(std::string_view name, ObjectiveKind& kind);

struct ObjectiveConfig {
  ObjectiveKind kind = ObjectiveKind::sft;
  // Where token confidence c_t comes from: the model being trained ("self", free) or a frozen copy of
  // the starting model ("reference", one extra forward per micro-batch). rho1 always uses the reference.
  std::string confidence = "self";
  // The frozen reference (rho1, `confidence: reference`): an HF folder with the same vocabulary, e.g.
  // a model trained on curated data as in Rho-1; empty: the starting weights of this run.
  std::string referenceModel;
  // Adaptive masking of non-sensitive tokens: the threshold is the `maskQuantile` quantile of the batch's
  // non-sensitive response-token confidences, ramped in linearly over `maskWarmupSteps`.
  // maskMode "low" masks those below it; "high" masks those above the (1 - q) quantile instead.
  double maskQuantile = 0.2;
  std::string maskMode = "low";
  long maskWarmupSteps = 0;
  // Regions: sensitive tokens with c_t < regionThreshold, merged across gaps of at most regionGap
  // tokens, kept when they hold at least regionMinTokens such tokens.
  double regionThreshold = 0.5;
  long regionGap = 2;
  long regionMinTokens = 2;
  // Sample weights w = 1 + alpha * rho / mean(rho), clipped to [weightMin, weightMax], renormalised to mean 1.
  double alpha = 1.0;
  double weightMin = 0.5;
  double weightMax = 3.0;
  // Baselines.
  double rho1TopFraction = 0.6;  // rho1: keep this share of response tokens, by excess loss over the reference
  double profitTau = 0.1;        // profit: mask tokens whose probability is below tau

  bool masks() const { return kind == ObjectiveKind::cuset || kind == ObjectiveKind::cusetMaskOnly; }
  bool reweights() const { return kind == ObjectiveKind::cuset || kind == ObjectiveKind::cusetReweightOnly; }
  bool isCuset() const { return masks() || reweights(); }
  bool needsReference() const { return kind == ObjectiveKind::rho1 || (isCuset() && confidence == "reference"); }
  bool needsSensitivity() const { return isCuset(); }
};

}  // namespace cuset
