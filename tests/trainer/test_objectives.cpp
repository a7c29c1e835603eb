// The objectives on hand-built batches: exact masks, regions, weights and losses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>

#include "cuset/trainer/objectives.hpp"

namespace cuset {
namespace {

torch::Tensor row(std::vector<float> v) { return torch::tensor(v).unsqueeze(0); }

// Per-token losses whose confidences exp(-loss) are exactly `p`.
torch::Tensor lossesFor(std::vector<float> p) {
  for (float& x : p) x = -std::log(x);
  return row(p).requires_grad_(true);
}

ObjectiveConfig config(ObjectiveKind kind) {
  ObjectiveConfig c;
  c.kind = kind;
  return c;
}

TEST(Objectives, SftIsTheMeanOverResponseTokens) {
  const auto losses = row({1, 2, 3, 4}).requires_grad_(true);
  const auto r = computeObjective(config(ObjectiveKind::sft), {losses, row({0, 1, 1, 1}), row({0, 0, 0, 0}), {}, 0});
  EXPECT_NEAR(r.loss.item<double>(), 3.0, 1e-6);
  EXPECT_DOUBLE_EQ(r.stats.maskedFraction, 0.0);
}

TEST(Objectives, CusetMasksLowConfidenceNonSensitiveTokensAtTheBatchQuantile) {
  // Non-sensitive confidences 0.9, 0.1, 0.5, 0.3: their 0.25-quantile (linear) is 0.25, so only the
  // 0.1 token goes; sensitive tokens stay whatever their confidence.
  ObjectiveConfig c = config(ObjectiveKind::cusetMaskOnly);
  c.maskQuantile = 0.25;
  const auto losses = lossesFor({0.05f, 0.9f, 0.1f, 0.2f, 0.5f, 0.3f});
  const auto r = computeObjective(c, {losses, row({1, 1, 1, 1, 1, 1}), row({1, 0, 0, 1, 0, 0}), {}, 0});
  EXPECT_TRUE(torch::equal(r.tokenMask, row({1, 1, 0, 1, 1, 1})));
  EXPECT_NEAR(r.stats.maskedFraction, 1.0 / 6, 1e-9);
  EXPECT_NEAR(r.stats.sensitiveShare, 2.0 / 6, 1e-9);
  // mode high masks the confident end instead (above the 0.75-quantile, 0.6).
  c.maskMode = "high";
  EXPECT_TRUE(
      torch::equal(computeObjective(c, {losses, row({1, 1, 1, 1, 1, 1}), row({1, 0, 0, 1, 0, 0}), {}, 0}).tokenMask, row({1, 0, 1, 1, 1, 1})));
  // Warm-up ramps the quantile in linearly from 0: at step 0 of 100 nothing is masked yet.
  c.maskMode = "low";
  c.maskWarmupSteps = 100;
  EXPECT_TRUE(
      torch::equal(computeObjective(c, {losses, row({1, 1, 1, 1, 1, 1}), row({1, 0, 0, 1, 0, 0}), {}, 0}).tokenMask, row({1, 1, 1, 1, 1, 1})));
}

TEST(Objectives, MaskedTokensGetExactlyZeroGradient) {
  ObjectiveConfig c = config(ObjectiveKind::cuset);
  c.maskQuantile = 0.5;
  auto logits = torch::randn({1, 6, 11}, torch::TensorOptions().requires_grad(true));
  const auto targets = torch::tensor({{1, 2, 3, 4, 5, 6}});
  const auto losses = torch::nn::functional::cross_entropy(logits.reshape({-1, 11}), targets.reshape({-1}),
                                                           torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
                          .view({1, 6});
  const auto r = computeObjective(c, {losses, row({1, 1, 1, 1, 1, 0}), row({0, 0, 0, 1, 0, 0}), {}, 0});
  r.loss.backward();
  const auto grad = logits.grad()[0];
  for (int t = 0; t < 6; ++t) {
    const bool kept = r.tokenMask[0][t].item<float>() > 0.5f;
    EXPECT_EQ(grad[t].abs().sum().item<float>() == 0.0f, !kept) << "token " << t;
  }
  EXPECT_LT(r.tokenMask.sum().item<float>(), 5.0f);  // something was masked
}

TEST(Objectives, CusetWithEverythingOffIsSft) {
  ObjectiveConfig off = config(ObjectiveKind::cuset);
  off.maskQuantile = 0.0;
  off.alpha = 0.0;
  auto a = torch::rand({3, 5}).add(0.1).requires_grad_(true);
  auto b = a.detach().clone().requires_grad_(true);
  const auto mask = torch::tensor({{1.f, 1.f, 0.f, 1.f, 1.f}, {0.f, 1.f, 1.f, 1.f, 0.f}, {1.f, 1.f, 1.f, 1.f, 1.f}});
  const auto sensitive = torch::tensor({{1.f, 0.f, 0.f, 1.f, 1.f}, {0.f, 0.f, 1.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 0.f, 1.f}});
  const auto cuset = computeObjective(off, {a, mask, sensitive, {}, 0});
  const auto sft = computeObjective(config(ObjectiveKind::sft), {b, mask, sensitive, {}, 0});
  EXPECT_EQ(cuset.loss.item<double>(), sft.loss.item<double>());
  cuset.loss.backward();
  sft.loss.backward();
  EXPECT_TRUE(torch::equal(a.grad(), b.grad()));
}

TEST(Objectives, RegionsMergeAcrossSmallGapsAndNeedMinimumTokens) {
  const std::vector<bool> low = {true, true, false, false, true, false, true, true, true};
  const std::vector<double> c = {0.1, 0.2, 0.9, 0.9, 0.3, 0.9, 0.4, 0.1, 0.2};
  auto regions = findRegions(low, c, 1, 2);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].first, 0);
  EXPECT_EQ(regions[0].last, 1);
  EXPECT_EQ(regions[0].tokens, 2);
  EXPECT_NEAR(regions[0].mass, 0.9 + 0.8, 1e-12);
  EXPECT_EQ(regions[1].first, 4);
  EXPECT_EQ(regions[1].last, 8);
  EXPECT_EQ(regions[1].tokens, 4);
  EXPECT_EQ(findRegions(low, c, 1, 3).size(), 1u);  // the two-token run is too short
  EXPECT_EQ(findRegions(low, c, 2, 2).size(), 1u);  // a gap of 2 joins everything
}

TEST(Objectives, WeightsAreClippedAndAverageToOne) {
  auto w = regionWeights({0.0, 1.0, 2.0}, 1.0, 0.5, 3.0);  // 1 + rho/mean = 1, 2, 3 -> / 2
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0], 0.5, 1e-12);
  EXPECT_NEAR(w[1], 1.0, 1e-12);
  EXPECT_NEAR(w[2], 1.5, 1e-12);
  w = regionWeights({0.0, 0.0, 10.0}, 2.0, 0.5, 2.0);  // 1, 1, 7 -> clipped 1, 1, 2 -> mean 4/3
  EXPECT_NEAR(w[0], 0.75, 1e-12);
  EXPECT_NEAR(w[2], 1.5, 1e-12);
  EXPECT_NEAR((w[0] + w[1] + w[2]) / 3, 1.0, 1e-12);
  EXPECT_EQ(regionWeights({0.0, 0.0}, 1.0, 0.5, 3.0), (std::vector<double>{1.0, 1.0}));
}

TEST(Objectives, CusetReweightsSamplesWithLowConfidenceSensitiveRegions) {
  ObjectiveConfig c = config(ObjectiveKind::cusetReweightOnly);
  c.regionThreshold = 0.5;
  c.regionGap = 0;
  c.regionMinTokens = 2;
  // Sample 0: a two-token region of confidences 0.2, 0.4 (mass 1.4) over 4 response tokens: rho 0.35.
  // Sample 1: none. Weights 1 + rho/mean(rho) = 3 and 1 (max 3), renormalised: 1.5 and 0.5.
  std::vector<float> p0 = {0.9f, 0.2f, 0.4f, 0.9f}, p1 = {0.9f, 0.9f, 0.3f, 0.9f};
  std::vector<float> l;
  for (float x : p0) l.push_back(-std::log(x));
  for (float x : p1) l.push_back(-std::log(x));
  const auto losses = torch::tensor(l).view({2, 4}).requires_grad_(true);
  const auto mask = torch::ones({2, 4});
  const auto sensitive = torch::tensor({{0.f, 1.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 0.f}});
  const auto r = computeObjective(c, {losses, mask, sensitive, {}, 0});
  EXPECT_NEAR(r.weights[0].item<double>(), 1.5, 1e-6);
  EXPECT_NEAR(r.weights[1].item<double>(), 0.5, 1e-6);
  EXPECT_EQ(r.stats.regions, 1);
  EXPECT_NEAR(r.loss.item<double>(), (1.5 * losses[0].sum() + 0.5 * losses[1].sum()).item<double>() / 8, 1e-5);
}

TEST(Objectives, Baselines) {
  const auto losses = lossesFor({0.9f, 0.05f, 0.6f, 0.3f});
  const auto mask = row({1, 1, 1, 1});
  // dft: each loss scaled by its (detached) probability.
  const auto dft = computeObjective(config(ObjectiveKind::dft), {losses, mask, row({0, 0, 0, 0}), {}, 0});
  double want = 0;
  for (float p : {0.9f, 0.05f, 0.6f, 0.3f}) want += p * -std::log(p);
  EXPECT_NEAR(dft.loss.item<double>(), want / 4, 1e-5);
  // profit: tokens below tau are out.
  ObjectiveConfig profit = config(ObjectiveKind::profit);
  profit.profitTau = 0.5;
  EXPECT_TRUE(torch::equal(computeObjective(profit, {losses, mask, row({0, 0, 0, 0}), {}, 0}).tokenMask, row({1, 0, 1, 0})));
  // rho1: the top half of tokens by excess loss over the reference.
  ObjectiveConfig rho1 = config(ObjectiveKind::rho1);
  rho1.rho1TopFraction = 0.5;
  const auto reference = losses.detach() - row({0.1f, 2.0f, -1.0f, 0.5f});  // excess 0.1, 2.0, -1.0, 0.5
  EXPECT_TRUE(torch::equal(computeObjective(rho1, {losses, mask, row({0, 0, 0, 0}), reference, 0}).tokenMask, row({0, 1, 0, 1})));
}

// Data parallelism: a plan made on the whole batch, and each slice of rows' loss under it, add up to
// computeObjective's loss and gradient for every objective (batch quantiles, sample weights renormalised
// over the batch, the token-count normaliser), even when a slice is narrower, as a rank's own padding is.
TEST(Objectives, SlicesOfRowsUnderOnePlanAddUpToTheWholeBatch) {
  torch::manual_seed(7);
  const std::int64_t B = 4, T = 12;
  const auto mask = (torch::rand({B, T}) > 0.2).to(torch::kFloat32);
  mask.narrow(0, 2, 2).narrow(1, 9, 3).zero_();  // rows 2-3 are padding from position 9 on
  const auto sensitive = (torch::rand({B, T}) > 0.5).to(torch::kFloat32) * mask;
  const auto base = torch::rand({B, T}) * 3 + 0.01;
  const auto reference = base.detach() * torch::rand({B, T});
  std::vector<ObjectiveConfig> configs;
  for (auto kind : {ObjectiveKind::sft, ObjectiveKind::dft, ObjectiveKind::profit, ObjectiveKind::rho1, ObjectiveKind::cuset,
                    ObjectiveKind::cusetMaskOnly, ObjectiveKind::cusetReweightOnly}) {
    ObjectiveConfig c = config(kind);
    c.maskQuantile = 0.3;
    c.regionThreshold = 0.6;
    c.regionGap = 1;
    c.regionMinTokens = 1;
    c.profitTau = 0.3;
    configs.push_back(c);
  }
  for (const auto& c : configs) {
    const auto whole = base.clone().requires_grad_(true);
    const auto r = computeObjective(c, {whole, mask, sensitive, reference, 5});
    r.loss.backward();

    const auto split = base.clone().requires_grad_(true);
    const ObjectivePlan plan = planObjective(c, {split.detach(), mask, sensitive, reference, 5});
    const auto first = objectiveLoss(c, split.narrow(0, 0, 2), plan, 0);
    const auto second = objectiveLoss(c, split.narrow(0, 2, 2).narrow(1, 0, 9), plan, 2);
    const auto total = first + second;
    total.backward();
    EXPECT_NEAR(total.item<double>(), r.loss.item<double>(), 1e-6) << objectiveName(c.kind);
    EXPECT_TRUE(torch::allclose(split.grad(), whole.grad(), 1e-6, 1e-7)) << objectiveName(c.kind);
    EXPECT_TRUE(torch::equal(plan.tokenMask, r.tokenMask)) << objectiveName(c.kind);
    // The naive alternative, each slice normalised by its own tokens, is not the same loss.
    const auto alone = computeObjective(c, {base.narrow(0, 0, 2), mask.narrow(0, 0, 2), sensitive.narrow(0, 0, 2), reference.narrow(0, 0, 2), 5});
    EXPECT_GT(std::abs(alone.loss.item<double>() - first.item<double>()), 1e-4) << objectiveName(c.kind);
  }
}

}  // namespace
}  // namespace cuset
