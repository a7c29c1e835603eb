#pragma once
// The objectives' arithmetic on one micro-batch (DESIGN §5). Only training.cpp and the tests include
// this header (it brings LibTorch's tensor type).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "cuset/trainer/objective_config.hpp"

namespace cuset {

struct ObjectiveBatch {
  at::Tensor losses;           // (B, T) per-token cross-entropy of the model being trained (with grad)
  at::Tensor mask;             // (B, T) float: 1 on response tokens
  at::Tensor sensitive;        // (B, T) float: 1 on CUDA-sensitive tokens (cuset objectives)
  at::Tensor referenceLosses;  // (B, T) per-token loss of the frozen reference, when needed
  std::int64_t step = 0;
};

struct ObjectiveStats {
  double maskedFraction = 0.0;  // share of response tokens taken out of the loss
  double sensitiveShare = 0.0;  // share of response tokens that are sensitive
  std::int64_t regions = 0;
  double weightMin = 1.0, weightMax = 1.0;
};

struct ObjectiveResult {
  at::Tensor loss;       // Σ_s w_s Σ_t m_t ℓ_t / Σ_s Σ_t m_t (dft: ℓ_t scaled by sg(p_t))
  at::Tensor tokenMask;  // (B, T) the final m_t
  at::Tensor weights;    // (B) the final w_s
  ObjectiveStats stats;
};

ObjectiveResult computeObjective(const ObjectiveConfig& config, const ObjectiveBatch& batch);

// computeObjective in two halves, for data parallelism: the plan is what the objective decides about a
// whole batch before any gradient (which tokens count, each sample's weight, the normaliser), computed
// from detached statistics; the loss is one slice of rows under that plan. A rank plans on the
// gathered global batch and takes the loss of its own rows, so the ranks' losses add up to the
// single-process loss exactly and their summed gradients equal its gradient.
struct ObjectivePlan {
  at::Tensor tokenMask;      // (B, T) the final m_t
  at::Tensor weights;        // (B) the final w_s
  double denominator = 1.0;  // Σ_s Σ_t m_t, at least 1
  ObjectiveStats stats;
};
ObjectivePlan planObjective(const ObjectiveConfig& config, const ObjectiveBatch& batch);
// Rows [firstRow, firstRow + losses.size(0)) of the planned batch; `losses` (b, t <= T) carries the grad.
at::Tensor objectiveLoss(const ObjectiveConfig& config, const at::Tensor& losses, const ObjectivePlan& plan, std::int64_t firstRow);

// A region of low-confidence sensitive tokens: [first, last] token positions of one sample.
struct ConfidenceRegion {
  std::int64_t first = 0, last = 0;
  std::int64_t tokens = 0;  // low-confidence sensitive tokens inside
  double mass = 0.0;        // Σ (1 - c_t) over them
};
// `lowSensitive[t]`: response token t is sensitive with confidence below the region threshold.
std::vector<ConfidenceRegion> findRegions(const std::vector<bool>& lowSensitive, const std::vector<double>& confidence, std::int64_t gap,
                                          std::int64_t minTokens);

// w_s = 1 + alpha * rho_s / mean(rho), clipped, renormalised to mean 1 (all ones when every rho is 0).
std::vector<double> regionWeights(const std::vector<double>& rho, double alpha, double weightMin, double weightMax);

}  // namespace cuset
