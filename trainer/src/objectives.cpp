#include "cuset/trainer/objectives.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

namespace cuset {
namespace {

// The q-quantile of the entries of `values` where `select` is set (nullopt-like: NaN when none).
double maskedQuantile(const torch::Tensor& values, const torch::Tensor& select, double q) {
  const torch::Tensor picked = values.masked_select(select);
  if (picked.numel() == 0) return std::nan("");
  return torch::quantile(picked.to(torch::kFloat64), std::clamp(q, 0.0, 1.0)).item<double>();
}

}  // namespace

std::vector<ConfidenceRegion> findRegions(const std::vector<bool>& lowSensitive, const std::vector<double>& confidence, std::int64_t gap,
                                          std::int64_t minTokens) {
  std::vector<ConfidenceRegion> regions;
  std::optional<ConfidenceRegion> open;
  std::int64_t lastHit = -1;
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(lowSensitive.size()); ++t) {
    if (!lowSensitive[static_cast<std::size_t>(t)]) continue;
    if (open && t - lastHit - 1 > gap) {
      if (open->tokens >= minTokens) regions.push_back(*open);
      open.reset();
    }
    if (!open) open = ConfidenceRegion{t, t, 0, 0.0};
    open->last = t;
    ++open->tokens;
    open->mass += 1.0 - confidence[static_cast<std::size_t>(t)];
    lastHit = t;
  }
  if (open && open->tokens >= minTokens) regions.push_back(*open);
  return regions;
}

std::vector<double> regionWeights(const std::vector<double>& rho, double alpha, double weightMin, double weightMax) {
  std::vector<double> w(rho.size(), 1.0);
  if (rho.empty()) return w;
  const double mean = std::accumulate(rho.begin(), rho.end(), 0.0) / static_cast<double>(rho.size());
  if (!(mean > 0.0)) return w;
  for (std::size_t i = 0; i < rho.size(); ++i) w[i] = std::clamp(1.0 + alpha * rho[i] / mean, weightMin, weightMax);
  const double wMean = std::accumulate(w.begin(), w.end(), 0.0) / static_cast<double>(w.size());
  for (double& x : w) x /= wMean;
  return w;
}

ObjectivePlan planObjective(const ObjectiveConfig& config, const ObjectiveBatch& batch) {
  torch::NoGradGuard noGrad;  // masks and weights are constants of the loss
  const torch::Tensor response = batch.mask > 0.5;
  const double responseTokens = std::max(1.0, batch.mask.sum().item<double>());
  torch::Tensor tokenMask = batch.mask.clone();
  const auto B = batch.losses.size(0);
  torch::Tensor weights = torch::ones({B}, batch.losses.options().requires_grad(false));
  ObjectiveStats stats;
  const torch::Tensor probability = torch::exp(-batch.losses.detach());

  if (config.kind == ObjectiveKind::profit) {
    tokenMask = tokenMask * (probability >= config.profitTau).to(tokenMask.dtype());
  } else if (config.kind == ObjectiveKind::rho1) {
    const torch::Tensor excess = batch.losses.detach() - batch.referenceLosses.detach();
    const double cut = maskedQuantile(excess, response, 1.0 - config.rho1TopFraction);
    if (!std::isnan(cut)) tokenMask = tokenMask * (excess >= cut).to(tokenMask.dtype());
  } else if (config.isCuset()) {
    const torch::Tensor confidence = config.confidence == "reference" ? torch::exp(-batch.referenceLosses.detach()) : probability;
    const torch::Tensor sensitive = (batch.sensitive > 0.5) & response;
    stats.sensitiveShare = sensitive.sum().item<double>() / responseTokens;
    if (config.masks()) {
      // Linear ramp: no masking at step 0, the full quantile from maskWarmupSteps on.
      const double ramp = config.maskWarmupSteps > 0 ? std::min(1.0, static_cast<double>(batch.step) / config.maskWarmupSteps) : 1.0;
      const double q = config.maskQuantile * ramp;
      const torch::Tensor other = response & ~sensitive;
      if (q > 0) {
        torch::Tensor drop;
        if (config.maskMode == "high") {
          const double cut = maskedQuantile(confidence, other, 1.0 - q);
          drop = other & (confidence > cut);
        } else {
          const double cut = maskedQuantile(confidence, other, q);
          drop = other & (confidence < cut);
        }
        tokenMask = tokenMask * (~drop).to(tokenMask.dtype());
      }
    }
    if (config.reweights()) {
      const torch::Tensor low = (sensitive & (confidence < config.regionThreshold)).to(torch::kCPU).contiguous();
      const torch::Tensor conf = confidence.to(torch::kCPU).to(torch::kFloat64).contiguous();
      const torch::Tensor perSample = batch.mask.to(torch::kCPU).to(torch::kFloat64).sum(1).contiguous();
      const auto lowAt = low.accessor<bool, 2>();
      const auto confAt = conf.accessor<double, 2>();
      const auto countAt = perSample.accessor<double, 1>();
      std::vector<double> rho(static_cast<std::size_t>(B), 0.0);
      const auto T = low.size(1);
      std::vector<bool> flags(static_cast<std::size_t>(T));
      std::vector<double> c(static_cast<std::size_t>(T));
      for (std::int64_t s = 0; s < B; ++s) {
        for (std::int64_t t = 0; t < T; ++t) {
          flags[static_cast<std::size_t>(t)] = lowAt[s][t];
          c[static_cast<std::size_t>(t)] = confAt[s][t];
        }
        const auto regions = findRegions(flags, c, config.regionGap, config.regionMinTokens);
        stats.regions += static_cast<std::int64_t>(regions.size());
        double mass = 0.0;
        for (const auto& r : regions) mass += r.mass;
        rho[static_cast<std::size_t>(s)] = mass / std::max(1.0, countAt[s]);
      }
      const auto w = regionWeights(rho, config.alpha, config.weightMin, config.weightMax);
      weights = torch::tensor(w, torch::TensorOptions().dtype(batch.losses.scalar_type())).to(batch.losses.device());
    }
  }
  const double kept = tokenMask.sum().item<double>();
  stats.maskedFraction = 1.0 - kept / responseTokens;
  stats.weightMin = weights.min().item<double>();
  stats.weightMax = weights.max().item<double>();

  ObjectivePlan plan;
  plan.denominator = std::max(1.0, kept);
  plan.tokenMask = std::move(tokenMask);
  plan.weights = std::move(weights);
  plan.stats = stats;
  return plan;
}

at::Tensor objectiveLoss(const ObjectiveConfig& config, const at::Tensor& losses, const ObjectivePlan& plan, std::int64_t firstRow) {
  const auto rows = losses.size(0);
  const torch::Tensor tokenMask = plan.tokenMask.narrow(0, firstRow, rows).narrow(1, 0, losses.size(1));
  const torch::Tensor weights = plan.weights.narrow(0, firstRow, rows);
  torch::AutoGradMode enableGrad(true);
  torch::Tensor perToken = losses;
  if (config.kind == ObjectiveKind::dft) perToken = perToken * torch::exp(-losses.detach());  // sg(p_t) * ℓ_t
  return (weights.unsqueeze(1) * tokenMask * perToken).sum() / plan.denominator;
}

ObjectiveResult computeObjective(const ObjectiveConfig& config, const ObjectiveBatch& batch) {
  ObjectivePlan plan = planObjective(config, batch);
  ObjectiveResult out;
  out.loss = objectiveLoss(config, batch.losses, plan, 0);
  out.tokenMask = std::move(plan.tokenMask);
  out.weights = std::move(plan.weights);
  out.stats = plan.stats;
  return out;
}

}  // namespace cuset
