// The closed set of ATen ops a library step may be (library_step.hpp). It was drawn from what the
// KernelBench references run (every level-1..3 model traced under a dispatch mode) and what recorded
// solutions call, grouped by family with their obvious neighbours (a family's 1d/3d forms, in-place
// and out= variants share the name without overload). Adding an op is adding its name here and a case
// to tests/evaluator/candidate/test_library_step.cpp; no op that draws random numbers, reads a file or a
// device value on the host, or reinterprets memory belongs here.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/library_step.hpp"

namespace cuset {
namespace {

// One line per family: names without the "aten::" namespace.
constexpr std::string_view kLibraryOpTable[] = {
    // matrix products and convolutions
    "mm bmm addmm addmm_ addbmm baddbmm matmul mv addmv dot linear einsum tensordot outer "
    "convolution _convolution conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d im2col col2im",
    // pooling and resampling
    "max_pool1d max_pool2d max_pool3d max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices avg_pool1d avg_pool2d "
    "avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d _adaptive_avg_pool2d _adaptive_avg_pool3d adaptive_max_pool1d "
    "adaptive_max_pool2d adaptive_max_pool3d upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_bilinear2d upsample_bicubic2d "
    "upsample_trilinear3d upsample_linear1d pixel_shuffle pixel_unshuffle",
    // normalisation
    "native_batch_norm _native_batch_norm_legit _native_batch_norm_legit_no_training batch_norm native_group_norm group_norm "
    "native_layer_norm layer_norm instance_norm rms_norm _fused_rms_norm local_response_norm",
    // activations
    "relu relu_ relu6 gelu gelu_ silu silu_ mish mish_ elu elu_ selu selu_ celu celu_ leaky_relu leaky_relu_ hardswish hardswish_ "
    "hardsigmoid hardsigmoid_ hardtanh hardtanh_ softplus softshrink hardshrink threshold threshold_ prelu _prelu_kernel glu "
    "log_sigmoid_forward sigmoid sigmoid_ tanh tanh_ logit",
    // elementwise arithmetic and comparisons
    "add add_ sub sub_ rsub mul mul_ div div_ remainder fmod pow pow_ addcmul addcmul_ addcdiv addcdiv_ lerp lerp_ clamp clamp_ clamp_min "
    "clamp_min_ clamp_max clamp_max_ minimum maximum fmin fmax where masked_fill masked_fill_ eq ne lt le gt ge logical_and logical_or "
    "logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not isnan isinf nan_to_num xlogy copysign sign signbit "
    "abs abs_ neg neg_ reciprocal reciprocal_ exp exp_ exp2 expm1 log log_ log2 log10 log1p sqrt sqrt_ rsqrt rsqrt_ square "
    "sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh erf erfc erfinv floor ceil round trunc frac",
    // reductions, scans and softmax
    "sum mean prod amax amin max min argmax argmin aminmax var std var_mean std_mean norm linalg_vector_norm linalg_norm frobenius_norm "
    "logsumexp all any count_nonzero cumsum cumsum_ cumprod cumprod_ cummax cummin logcumsumexp sort topk kthvalue median "
    "_softmax softmax _log_softmax log_softmax _safe_softmax",
    // attention
    "scaled_dot_product_attention _scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_efficient_attention "
    "_scaled_dot_product_flash_attention _scaled_dot_product_cudnn_attention _scaled_dot_product_attention_math",
    // losses
    "smooth_l1_loss huber_loss mse_loss l1_loss nll_loss_forward nll_loss2d_forward nll_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits kl_div cross_entropy_loss soft_margin_loss hinge_embedding_loss margin_ranking_loss "
    "cosine_similarity cosine_embedding_loss triplet_margin_loss",
    // copies, layout and indexing (views are the recording's own and never steps; these compute or copy)
    "copy_ clone _to_copy to contiguous fill_ zero_ _unsafe_view view reshape permute transpose t expand select slice squeeze "
    "unsqueeze unfold alias detach lift_fresh cat stack hstack vstack split split_with_sizes unsafe_split unbind chunk flip roll "
    "repeat repeat_interleave tile tril triu diag diagonal gather scatter scatter_ scatter_add scatter_add_ index_select "
    "index_add index_add_ index_copy take_along_dim embedding constant_pad_nd pad reflection_pad1d reflection_pad2d reflection_pad3d "
    "replication_pad1d replication_pad2d replication_pad3d narrow movedim flatten",
    // creation (a constant the step computes into its own buffer)
    "ones ones_like full full_like zeros zeros_like arange eye scalar_tensor linspace",
};

std::vector<std::string_view> buildOps() {
  std::vector<std::string_view> ops;
  for (const std::string_view line : kLibraryOpTable) {
    std::size_t start = 0;
    while (start < line.size()) {
      const std::size_t end = std::min(line.find(' ', start), line.size());
      if (end > start) ops.push_back(line.substr(start, end - start));
      start = end + 1;
    }
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

const std::vector<std::string_view>& ops() {
  static const std::vector<std::string_view> table = buildOps();
  return table;
}

}  // namespace

bool isLibraryOp(std::string_view op) {
  if (!op.starts_with("aten::")) return false;
  return std::binary_search(ops().begin(), ops().end(), op.substr(6));
}

std::vector<std::string_view> libraryOps() { return ops(); }

}  // namespace cuset
