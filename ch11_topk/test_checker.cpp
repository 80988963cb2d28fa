// The checker must reject each deliberately wrong kernel and accept the flawless one.
#include "check.h"
#include "wrong_kernels.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using wrong_kernels::Flaw;
using wrong_kernels::SoftmaxFlaw;

// Rows of values in {0, 1, 2, 3} (the top k are all ties), the row's largest value in its last
// column (the tail), and a NaN with a payload in row 0: every flaw shows.
std::vector<float> flaw_revealing_input(int64_t M, int64_t N) {
  std::vector<float> x = common::gen::ties(static_cast<size_t>(M * N), 11, 4);
  for (int64_t r = 0; r < M; ++r)
    x[static_cast<size_t>(r * N + N - 1)] = 10.0f;
  const uint32_t nan_with_payload = 0x7FC0ABCDu;
  std::memcpy(&x[5], &nan_with_payload, sizeof(float));
  return x;
}

// The same rows in half or bf16. The NaN gets a payload of the 16-bit type's own (converting a
// float NaN on the host gives the canonical one, the very NaN a decoded key gives back).
template <typename T>
std::vector<T> flaw_revealing_input_as(int64_t M, int64_t N) {
  std::vector<T> x = common::convert<T>(flaw_revealing_input(M, N));
  x[5] = common::from_bits16<T>(std::is_same_v<T, __half> ? 0x7E01 : 0x7FC1);
  return x;
}

template <typename T = float>
topk_check::TopKLauncher<T> launcher(Flaw flaw) {
  return [flaw](const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                cudaStream_t stream) {
    wrong_kernels::topk(flaw, x, M, N, k, values, indices, stream);
  };
}

template <typename T>
void check_rejects_each_flaw(const std::vector<T>& x, int64_t M, int64_t N) {
  for (Flaw flaw : wrong_kernels::kAllFlaws) {
    INFO("wrong kernel: " << wrong_kernels::flaw_name(flaw));
    const common::CheckResult result = topk_check::check_topk(launcher<T>(flaw), x, M, N, 20);
    INFO("checker said: " << result.message);
    CHECK_FALSE(result.ok);
  }
}

topk_check::SoftmaxTopKLauncher<float> softmax_launcher(SoftmaxFlaw flaw) {
  return [flaw](const float* x, int64_t M, int64_t N, int k, float temperature, int64_t* indices,
                float* probs, float* lse, cudaStream_t stream) {
    wrong_kernels::softmax_topk(flaw, x, M, N, k, temperature, indices, probs, lse, stream);
  };
}

}  // namespace

TEST_CASE("the checker accepts a correct top-k", "[checker]") {
  const int64_t M = 3, N = 300;
  REQUIRE_CHECK(topk_check::check_topk(launcher(Flaw::None), flaw_revealing_input(M, N), M, N, 20));
}

TEST_CASE("the checker rejects each wrong top-k", "[checker]") {
  const int64_t M = 3, N = 300;
  check_rejects_each_flaw(flaw_revealing_input(M, N), M, N);
}

TEST_CASE("the checks see a write past the workspace the launcher asked for", "[checker]") {
  // A correct top-k whose launcher asks topk_check::workspace for `bytes` and then stores one
  // byte past them (a memset standing in for a kernel's stray store): the right answer, and a
  // changed guard zone.
  const int64_t M = 3, N = 300;
  const std::vector<float> x = flaw_revealing_input(M, N);
  for (bool strays : {false, true}) {
    auto launch = [strays](const float* in, int64_t m, int64_t n, int k, float* values,
                           int64_t* indices, cudaStream_t stream) {
      const size_t bytes = 64;
      auto* ws = static_cast<unsigned char*>(topk_check::workspace(bytes).data);
      if (strays) CUDA_CHECK(cudaMemsetAsync(ws + bytes, 0, 1, stream));
      wrong_kernels::topk(Flaw::None, in, m, n, k, values, indices, stream);
    };
    const common::CheckResult result = topk_check::check_topk<float>(launch, x, M, N, 20);
    INFO("strays past the workspace: " << strays << "; checker said: " << result.message);
    CHECK(result.ok == !strays);
    if (strays)
      CHECK(result.message.find("workspace_bytes said): a guard canary changed") !=
            std::string::npos);
  }
}

TEST_CASE("the CUB comparison and the hashed check see a kernel that writes into its input",
          "[checker]") {
  // Both answers are right: only the input check can reject the second kernel.
  const int64_t M = 3, N = 300;
  const std::vector<float> x = flaw_revealing_input(M, N);
  REQUIRE_CHECK(topk_check::check_same_as(launcher(Flaw::None), launcher(Flaw::None), x, M, N, 20));
  const common::CheckResult same_as =
      topk_check::check_same_as(launcher(Flaw::ZeroesWinners), launcher(Flaw::None), x, M, N, 20);
  INFO("check_same_as said: " << same_as.message);
  CHECK_FALSE(same_as.ok);
  CHECK(same_as.message.find("input was modified") != std::string::npos);

  const std::vector<int64_t> rows = {0, 1, 2};
  REQUIRE_CHECK(topk_check::check_topk_hashed(launcher(Flaw::None), M, N, 20, 5, rows));
  const common::CheckResult hashed =
      topk_check::check_topk_hashed(launcher(Flaw::ZeroesWinners), M, N, 20, 5, rows);
  INFO("check_topk_hashed said: " << hashed.message);
  CHECK_FALSE(hashed.ok);
  CHECK(hashed.message.find("60 elements were modified") != std::string::npos);
}

namespace {

template <typename T>
void check_judges_16_bit() {
  const int64_t M = 3, N = 300;
  const std::vector<T> x = flaw_revealing_input_as<T>(M, N);
  INFO(common::DType<T>::name);
  REQUIRE_CHECK(topk_check::check_topk(launcher<T>(Flaw::None), x, M, N, 20));
  check_rejects_each_flaw(x, M, N);
}

}  // namespace

TEST_CASE("the checker judges half and bf16 top-k alike", "[checker]") {
  check_judges_16_bit<__half>();
  check_judges_16_bit<__nv_bfloat16>();
}

// Row 0: ordinary logits (a wrong normalization or temperature shows); row 1: one logit of 1000,
// so that exp without subtracting the maximum overflows; row 2: one NaN, which makes every
// probability of its row NaN.
constexpr int64_t kSoftmaxRows = 3;
std::vector<float> softmax_revealing_input(int64_t N) {
  std::vector<float> x = common::gen::logits(static_cast<size_t>(kSoftmaxRows * N), 12);
  x[static_cast<size_t>(N + 7)] = 1000.0f;
  x[static_cast<size_t>(2 * N + 11)] = NAN;
  return x;
}

TEST_CASE("the checker accepts a correct softmax + top-k", "[checker]") {
  const int64_t N = 500;
  REQUIRE_CHECK(topk_check::check_softmax_topk(softmax_launcher(SoftmaxFlaw::None),
                                               softmax_revealing_input(N), kSoftmaxRows, N, 16,
                                               2.0f, true));
}

TEST_CASE("the checker rejects each wrong softmax + top-k", "[checker]") {
  const int64_t N = 500;
  const std::vector<float> x = softmax_revealing_input(N);
  for (SoftmaxFlaw flaw : wrong_kernels::kAllSoftmaxFlaws) {
    INFO("wrong kernel: " << wrong_kernels::flaw_name(flaw));
    const common::CheckResult result =
        topk_check::check_softmax_topk(softmax_launcher(flaw), x, kSoftmaxRows, N, 16, 2.0f, true);
    INFO("checker said: " << result.message);
    CHECK_FALSE(result.ok);
  }
}
