// The checker must reject deliberately wrong kernels: a test that passes them proves nothing.
#include "check.h"
#include "wrong_kernels.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"

#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

namespace {
template <typename T>
bool passes(const check::ForwardRun<T>& run, const std::vector<T>& x, int64_t rows, int64_t cols,
            check::Placement placement = {}) {
  return check::check_forward(run, check::Op::Softmax, x, rows, cols, placement).ok;
}
}  // namespace

TEST_CASE("the checker rejects a kernel that writes zero", "[ch10_softmax][checker]") {
  // The tolerances are relative with a tiny atol: zeros fail even on the longest rows, where
  // every probability is small.
  for (int64_t cols : {int64_t{1}, int64_t{1000}, int64_t{131072}}) {
    INFO("cols = " << cols);
    REQUIRE_FALSE(passes(wrong::writes_zero(), check::logits<float>(2, cols, 1), 2, cols));
  }
}

TEST_CASE("the checker rejects softmax without the max subtraction", "[ch10_softmax][checker]") {
  // Plain logits stay below 88 and the naive formula is right; the same logits shifted by 100,
  // which leaves softmax unchanged, overflow exp (e^88.7 is float's largest).
  std::vector<float> x = check::logits<float>(3, 100, 2);
  REQUIRE(passes(wrong::skips_max_subtraction(), x, 3, 100));
  for (float& v : x)
    v += 100.0f;
  REQUIRE_FALSE(passes(wrong::skips_max_subtraction(), x, 3, 100));
}

TEST_CASE("the checker rejects a missing cross-warp merge", "[ch10_softmax][checker]") {
  REQUIRE_FALSE(
      passes(wrong::misses_cross_warp_merge(), check::logits<float>(3, 4096, 3), 3, 4096));
}

TEST_CASE("the checker rejects an off-by-one last column", "[ch10_softmax][checker]") {
  REQUIRE_FALSE(passes(wrong::drops_last_column(), check::logits<float>(3, 1025, 4), 3, 1025));
}

TEST_CASE("the checker rejects a (max, sum) that leaves out one column of a long row",
          "[ch10_softmax][checker]") {
  // Every element is written, and each is off by the left-out element's share of its row's sum:
  // on flat rows whose last element is the largest, 1 part in about 5.7e4 at 131077 columns,
  // beyond both the elementwise tolerance and the L2 bound of fp32.
  for (int64_t cols : {int64_t{4096}, int64_t{131072 + 5}}) {
    INFO("cols = " << cols);
    std::vector<float> x = check::flat<float>(3, cols, 6);
    for (int64_t r = 0; r < 3; ++r)
      x[static_cast<size_t>(r * cols + cols - 1)] = 1.0f;
    REQUIRE_FALSE(passes(wrong::stats_miss_last_column(), x, 3, cols));
  }
}

TEST_CASE("the checker rejects a write past the matrix (guard canaries)",
          "[ch10_softmax][checker]") {
  const auto result = check::check_forward(wrong::writes_past_row(), check::Op::Softmax,
                                           check::logits<float>(3, 100, 5), 3, 100);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find("canary") != std::string::npos);
}

TEST_CASE("the checker rejects NaN from merging empty pairs", "[ch10_softmax][checker]") {
  // Row 1 of the special rows has -inf entries; with 33 columns most of the 256 threads see
  // nothing, and merging two empty pairs without the guard gives NaN.
  REQUIRE_FALSE(passes(wrong::merge_without_empty_guard(), check::special_rows<float>(33, 6),
                       check::kSpecialRows, 33));
}

TEST_CASE("the checker rejects a sum accumulated in bf16", "[ch10_softmax][checker]") {
  // Each of the 256 threads adds 512 terms exp(x - max) between 1/e and 1. Once its bf16 sum
  // reaches 256, where an ulp is 2, every such term rounds away: the sum stalls at 256 of about
  // 324, whatever values are drawn. On logits a few terms carry the sum, and what bf16 loses can
  // hide within the tolerance of bf16 outputs.
  const int64_t rows = 3, cols = 512 * 256 + 5;
  const auto x = common::convert<__nv_bfloat16>(
      common::gen::uniform(static_cast<size_t>(rows * cols), 7, -0.5f, 0.5f));
  REQUIRE_FALSE(passes(wrong::sums_in_bf16(), x, rows, cols));
}

TEST_CASE("the backward checker accepts a correct backward and rejects wrong ones",
          "[ch10_softmax][checker]") {
  // The backward's bound is the loosest of the chapter (check.h): the control shows it passes a
  // right kernel, the bugs that it is tight enough to matter.
  const int64_t rows = 3, cols = 4096;
  std::vector<float> y, dy;
  check::backward_inputs<float>(rows, cols, 11, y, dy);
  for (const check::Placement& at :
       {check::Placement{}, check::Placement{1, 2}, check::Placement{0, 3, true}}) {
    INFO("misalign " << at.in_misalign << ", " << at.out_misalign
                     << (at.in_place ? ", dx on dy" : ""));
    const auto control = check::check_backward(wrong::backward_control(), y, dy, rows, cols, at);
    INFO("control: " << control.message);
    REQUIRE(control.ok);
    REQUIRE_FALSE(
        check::check_backward(wrong::backward_misses_cross_warp_dot(), y, dy, rows, cols, at).ok);
    REQUIRE_FALSE(
        check::check_backward(wrong::backward_dot_not_scaled(), y, dy, rows, cols, at).ok);
    // In place the unwritten column still holds dy: only the values can tell.
    REQUIRE_FALSE(
        check::check_backward(wrong::backward_drops_last_column(), y, dy, rows, cols, at).ok);
  }
}

TEST_CASE("the checker rejects 32-bit row offsets", "[ch10_softmax][checker][large]") {
  // rows * cols > 2^31: the last rows' offsets wrap.
  const int64_t cols = 1 << 16, rows = (int64_t{1} << 31) / cols + 2;
  SKIP_UNLESS_FREE_GPU_MEMORY(2 * rows * cols * sizeof(float));  // x and y
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-2f;
  REQUIRE_FALSE(check::check_forward(wrong::wraps_offsets_at_32_bits(), check::Op::Softmax, x, rows,
                                     cols, {}, {rows - 1})
                    .ok);
}
