// Chapter 7's GPU tests, built twice: against the skeleton (the student's build, ctest label
// student_ch07_reduction, selected by -L ch07_reduction) and against the solution (label
// solutions). Each TEST_CASE names the TODOs it checks; the argument test and the CUB test
// check code the chapter gives (tag [given]: they pass before the TODOs are filled).
#include "check.h"
#include "test_data.h"
#include "cpu_ref.h"
#include "cub_reduce.h"
#include "reduction.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"
#include "common/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using reduction::Version;

namespace {

// The sizes around the kernels' boundaries: a warp (31 to 33), the 16-byte packs of a block of
// 256 threads, 1024 floats (1023 to 1025), and two larger sizes: at 2^20 + 3 the grids of
// versions 5 and 6 loop (versions 1 to 4 give every element its own thread), at 2^24 the
// final version's too (at 2^20 + 3, on a GPU of 132 SMs, its threads take one step).
const std::vector<size_t> kSizes = {0, 1, 31, 32, 33, 1023, 1024, 1025, (1u << 20) + 3, 1u << 24};

std::string todo_of(Version v) {
  switch (v) {
    case Version::Atomic: return "TODO 1";
    case Version::Interleaved: return "TODO 2";
    case Version::InterleavedStrided: return "TODO 3";
    case Version::Sequential: return "TODO 4";
    case Version::FirstAdd: return "TODO 5 (it also uses TODO 4)";
    case Version::WarpShuffle: return "TODOs 6a and 6b (they also use TODO 5)";
    case Version::Final: return "TODOs 7a, 7b and 7c";
  }
  return "?";
}

check::Reduction<float> sum_version(Version v) {
  check::Reduction<float> r;
  r.name = reduction::version_name(v);
  r.accumulation = v == Version::Atomic ? check::Accumulation::Serial : check::Accumulation::Tree;
  r.workspace_bytes = [v](int64_t n) { return reduction::workspace_bytes(v, n); };
  r.run = [v](const float* x, int64_t n, float* out, void* ws, size_t ws_size) {
    reduction::sum(v, x, n, out, ws, ws_size);
  };
  return r;
}

template <typename T>
check::Reduction<T> final_sum() {
  check::Reduction<T> r;
  r.name = std::string("7_final sum ") + common::DType<T>::name;
  r.workspace_bytes = [](int64_t n) { return reduction::workspace_bytes(Version::Final, n); };
  r.run = [](const T* x, int64_t n, float* out, void* ws, size_t ws_size) {
    reduction::sum(x, n, out, ws, ws_size);
  };
  return r;
}

check::Reduction<float> final_max() {
  check::Reduction<float> r;
  r.name = "7_final max";
  r.op = check::Op::Max;
  r.workspace_bytes = [](int64_t n) { return reduction::workspace_bytes(Version::Final, n); };
  r.run = [](const float* x, int64_t n, float* out, void* ws, size_t ws_size) {
    reduction::max(x, n, out, ws, ws_size);
  };
  return r;
}

check::Reduction<float> cub_sum() {
  check::Reduction<float> r;
  r.name = "cub::DeviceReduce::Sum";
  r.workspace_bytes = [](int64_t n) {
    return cub_baseline::sum(static_cast<const float*>(nullptr), n, nullptr, nullptr, 0);
  };
  r.run = [](const float* x, int64_t n, float* out, void* ws, size_t ws_size) {
    cub_baseline::sum(x, n, out, ws, ws_size);
  };
  return r;
}

check::Reduction<float> cub_max() {
  check::Reduction<float> r = cub_sum();
  r.name = "cub::DeviceReduce::Max";
  r.op = check::Op::Max;
  r.workspace_bytes = [](int64_t n) {
    return cub_baseline::max(static_cast<const float*>(nullptr), n, nullptr, nullptr, 0);
  };
  r.run = [](const float* x, int64_t n, float* out, void* ws, size_t ws_size) {
    cub_baseline::max(x, n, out, ws, ws_size);
  };
  return r;
}

// out[0] of one run of r on x, already on the device, with the workspace given: NaN (the poison)
// if the run left out[0] unwritten.
float result_of(const check::Reduction<float>& r, const common::DeviceBuffer<float>& x,
                common::DeviceBuffer<unsigned char>& workspace) {
  common::DeviceBuffer<float> out(1);
  out.fill_bytes(0xFF);
  r.run(x.data(), static_cast<int64_t>(x.size()), out.data(), workspace.data(), workspace.size());
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

struct Distribution {
  const char* name;
  std::vector<float> (*make)(size_t n, uint64_t seed);
  bool cancelling;  // mean zero: sums much smaller than sum |x|
};
const Distribution kNormal01 = {
    "normal(0,1)", [](size_t n, uint64_t s) { return common::gen::normal(n, s, 0.0f, 1.0f); },
    true};
// Every partial sum is an integer of at most 2^24, exact in float in any order, so
// check_reduction allows no error and a single 1 dropped or added twice, anywhere in the array,
// fails.
const Distribution kZerosAndOnes = {
    "zeros and ones", [](size_t n, uint64_t s) { return common::gen::ties(n, s, 2); }, false};
const Distribution kDistributions[] = {
    {"uniform[0,1)", [](size_t n, uint64_t s) { return common::gen::uniform(n, s, 0.0f, 1.0f); },
     false},
    {"normal(1,1)", [](size_t n, uint64_t s) { return common::gen::normal(n, s, 1.0f, 1.0f); },
     false},
    kNormal01,
    {"logits", [](size_t n, uint64_t s) { return common::gen::logits(n, s); }, true},
    // Large values at both ends: a kernel that drops a head or tail element fails on these,
    // where one missing value in [0, 1) could hide inside the error bound.
    {"edges", [](size_t n, uint64_t s) { return data::with_large_edges(n, s); }, false},
    kZerosAndOnes,
};

// Every size, distribution and misalignment (1 to 3 elements past a 16-byte boundary).
void check_sum_everywhere(Version v) {
  const check::Reduction<float> r = sum_version(v);
  uint64_t seed = 100 * static_cast<uint64_t>(v);
  for (size_t n : kSizes) {
    for (const Distribution& d : kDistributions) {
      // The serial (atomic) bound is only meaningful where the data do not cancel.
      if (d.cancelling && r.accumulation == check::Accumulation::Serial) continue;
      const std::vector<float> x = d.make(n, ++seed);
      for (size_t misalign : {0, 1, 2, 3}) {
        if (n >= (1u << 24) && misalign == 2) continue;  // keep the largest size quick
        INFO("version " << r.name << " is implemented by " << todo_of(v)
                        << " in ch07_reduction/reduction.cu");
        INFO("n = " << n << ", data " << d.name << ", input " << misalign << " elements past alignment");
        REQUIRE_CHECK(check::check_reduction(r, x, misalign));
      }
    }
  }
}

}  // namespace

TEST_CASE("v1: one atomicAdd per element", "[ch07_reduction][atomic]") {
  check_sum_everywhere(Version::Atomic);
}

TEST_CASE("v2: shared-memory tree, interleaved addressing", "[ch07_reduction][interleaved]") {
  check_sum_everywhere(Version::Interleaved);
}

TEST_CASE("v3: interleaved addressing, strided index", "[ch07_reduction][strided]") {
  check_sum_everywhere(Version::InterleavedStrided);
}

TEST_CASE("v4: sequential addressing", "[ch07_reduction][sequential]") {
  check_sum_everywhere(Version::Sequential);
}

TEST_CASE("v5: first add during load", "[ch07_reduction][first_add]") {
  check_sum_everywhere(Version::FirstAdd);
}

TEST_CASE("v6: warp-shuffle reduction", "[ch07_reduction][warp_shuffle]") {
  check_sum_everywhere(Version::WarpShuffle);
}

TEST_CASE("v7: final version, float sum", "[ch07_reduction][final]") {
  check_sum_everywhere(Version::Final);
}

TEST_CASE("v7: final version, half and bf16 sums accumulate in float", "[ch07_reduction][final]") {
  const check::Reduction<__half> half_sum = final_sum<__half>();
  const check::Reduction<__nv_bfloat16> bf16_sum = final_sum<__nv_bfloat16>();
  // Values in [-2, 4): sums far beyond either format's range of exact integers, so a half or bf16
  // accumulator fails. normal(0,1) cancels: its sum is small beside the bound, which scales with
  // sum |x|. Zeros and ones: exact in any order, so one element dropped or added twice fails.
  const Distribution distributions[] = {
      {"uniform[-2,4)",
       [](size_t n, uint64_t s) { return common::gen::uniform(n, s, -2.0f, 4.0f); }, false},
      kNormal01,
      kZerosAndOnes,
  };
  uint64_t seed = 7000;
  for (size_t n : kSizes) {
    for (const Distribution& d : distributions) {
      const std::vector<float> x = d.make(n, ++seed);
      for (size_t misalign : {0, 1, 2, 3, 5, 7}) {
        INFO("implemented by TODOs 7a-7c in ch07_reduction/reduction.cu; n = "
             << n << ", data " << d.name << ", misalign " << misalign);
        // convert rounds to each format's grid here, so the CPU reference sums what the GPU reads.
        REQUIRE_CHECK(check::check_reduction(half_sum, common::convert<__half>(x), misalign));
        REQUIRE_CHECK(
            check::check_reduction(bf16_sum, common::convert<__nv_bfloat16>(x), misalign));
      }
    }
  }
}

TEST_CASE("v7: final version, max propagates NaN and handles infinities", "[ch07_reduction][final]") {
  const check::Reduction<float> r = final_max();
  uint64_t seed = 8000;
  for (size_t n : kSizes) {
    std::vector<float> x = common::gen::normal(n, ++seed);
    for (size_t misalign : {0, 1, 2, 3}) {
      INFO("implemented by TODOs 7a-7c in ch07_reduction/reduction.cu; n = " << n);
      REQUIRE_CHECK(check::check_reduction(r, x, misalign));
    }
    if (n == 0) continue;
    // The maximum sits in the head, the body or the tail depending on where it is sprinkled.
    std::vector<float> with_inf = x;
    common::gen::sprinkle(with_inf, INFINITY, 1, seed);
    std::vector<float> all_neg_inf(n, -INFINITY);
    std::vector<float> with_nan = x;
    common::gen::sprinkle(with_nan, NAN, 1, seed + 1);
    for (size_t misalign : {0, 3}) {
      INFO("n = " << n << ", misalign " << misalign);
      REQUIRE_CHECK(check::check_reduction(r, with_inf, misalign));
      REQUIRE_CHECK(check::check_reduction(r, all_neg_inf, misalign));
      REQUIRE_CHECK(check::check_reduction(r, with_nan, misalign));
    }
  }
}

TEST_CASE("v7: the result is bitwise identical on every run", "[ch07_reduction][final][determinism]") {
  // Large enough that every block of the wave takes part and blocks finish in varying order.
  const std::vector<float> x = common::gen::normal((1u << 24) + 5, 9000);
  INFO("TODO 7c: combine the block results in block order, not in the order blocks finish");
  REQUIRE_CHECK(check::check_deterministic(sum_version(Version::Final), x, 20));
  REQUIRE_CHECK(check::check_deterministic(final_max(), x, 5));
  REQUIRE_CHECK(check::check_deterministic(final_sum<__half>(), common::convert<__half>(x), 5));
  REQUIRE_CHECK(
      check::check_deterministic(final_sum<__nv_bfloat16>(), common::convert<__nv_bfloat16>(x), 5));
}

TEST_CASE("v7: a workspace shared with versions 2 to 6 keeps working", "[ch07_reduction][final]") {
  // reduction.h lets one zero-filled workspace serve calls of every version. Versions 2 to 6
  // write partials there; if one landed on the final version's counter, no block would see
  // itself last and out would never be written. Only the final version's results are checked
  // here: the other versions run to leave their partials behind, and their own tests check them.
  const size_t n = (size_t{1} << 20) + 3;
  const std::vector<float> x = common::gen::ties(n, 9250, 2);  // an exact sum: no tolerance
  const float exact = static_cast<float>(cpu_ref::sum(x));
  size_t bytes = 0;
  for (Version v : reduction::kAllVersions)
    bytes = std::max(bytes, reduction::workspace_bytes(v, static_cast<int64_t>(n)));
  const common::DeviceBuffer<float> d_x(x);
  common::DeviceBuffer<unsigned char> workspace(bytes);
  workspace.fill_bytes(0);
  {
    INFO("final version on a fresh workspace (TODOs 7a-7c)");
    CHECK(result_of(sum_version(Version::Final), d_x, workspace) == exact);
  }
  for (Version v : {Version::Interleaved, Version::InterleavedStrided, Version::Sequential,
                    Version::FirstAdd, Version::WarpShuffle}) {
    result_of(sum_version(v), d_x, workspace);
    INFO("final version after itself and then " << reduction::version_name(v)
                                                << " used the workspace (TODO 7c returns the "
                                                   "counter to zero)");
    CHECK(result_of(sum_version(Version::Final), d_x, workspace) == exact);
  }
}

TEST_CASE("v7: agrees bit for bit with cub::DeviceReduce where both are exact",
          "[ch07_reduction][final]") {
  // CUB as a second reference on the GPU: a maximum is exact in any order, and so is a sum of
  // zeros and ones (integers below 2^24), so both must give the CPU reference's value.
  uint64_t seed = 9260;
  for (size_t n : kSizes) {
    if (n == 0) continue;  // CUB's empty maximum is its own convention, not the chapter's
    const std::vector<float> values = common::gen::normal(n, ++seed);
    std::vector<float> with_inf = values;
    common::gen::sprinkle(with_inf, INFINITY, 1, seed);
    const std::vector<float> ones = common::gen::ties(n, ++seed, 2);
    const common::DeviceBuffer<float> d_values(values), d_with_inf(with_inf), d_ones(ones);
    const struct {
      check::Reduction<float> ours, cub;
      const common::DeviceBuffer<float>& x;
      float exact;
    } cases[] = {
        {final_max(), cub_max(), d_values, static_cast<float>(cpu_ref::max(values))},
        {final_max(), cub_max(), d_with_inf, static_cast<float>(cpu_ref::max(with_inf))},
        {sum_version(Version::Final), cub_sum(), d_ones, static_cast<float>(cpu_ref::sum(ones))},
    };
    for (const auto& c : cases) {
      common::DeviceBuffer<unsigned char> ours_ws(c.ours.workspace_bytes(static_cast<int64_t>(n)));
      common::DeviceBuffer<unsigned char> cub_ws(
          std::max<size_t>(c.cub.workspace_bytes(static_cast<int64_t>(n)), 1));
      ours_ws.fill_bytes(0);
      INFO(c.ours.name << " against " << c.cub.name << ", n = " << n << " (TODOs 7a-7c)");
      CHECK(result_of(c.cub, c.x, cub_ws) == c.exact);
      CHECK(result_of(c.ours, c.x, ours_ws) == c.exact);
    }
  }
}

TEST_CASE("v7: more than 2^31 elements (bf16, 4 GiB)", "[ch07_reduction][final][large]") {
  const size_t n = (size_t{1} << 31) + 77;
  SKIP_UNLESS_FREE_GPU_MEMORY(n * sizeof(__nv_bfloat16));
  // Positive values, and 10^6 at the 77 indices from 2^31 on: together 7 % of the sum, far
  // beyond the bound (0.1 % of the sum on a GPU of 132 SMs), so that a kernel that skips or
  // repeats the elements past 2^31 fails, and so does one that skips or repeats a larger region.
  std::vector<__nv_bfloat16> x = common::gen::uniform_as<__nv_bfloat16>(n, 9100, 0.0f, 1.0f);
  for (size_t i = size_t{1} << 31; i < n; ++i)
    x[i] = __float2bfloat16(1.0e6f);
  INFO("64-bit sizes and offsets in TODOs 7a-7c");
  REQUIRE_CHECK(check::check_reduction(final_sum<__nv_bfloat16>(), x, 1));
}

TEST_CASE("v5, v6: more than 2^31 elements (float, 8 GiB)",
          "[ch07_reduction][first_add][warp_shuffle][large]") {
  const size_t n = (size_t{1} << 31) + 77;
  SKIP_UNLESS_FREE_GPU_MEMORY(n * sizeof(float));
  // As the test of the final version above: 10^6 at the 77 indices from 2^31 on, 7 % of the sum.
  // A signed 32-bit grid-stride index overflows before it gets there (an unsigned one would not
  // wrap below 2^32, which this size does not reach).
  std::vector<float> x = common::gen::uniform(n, 9150, 0.0f, 1.0f);
  for (size_t i = size_t{1} << 31; i < n; ++i)
    x[i] = 1.0e6f;
  for (Version v : {Version::FirstAdd, Version::WarpShuffle}) {
    INFO(reduction::version_name(v) << ": TODO 5's index is int64_t (n may exceed 2^31)");
    REQUIRE_CHECK(check::check_reduction(sum_version(v), x, 0));
  }
}

TEST_CASE("bad arguments are rejected with a clear error", "[ch07_reduction][arguments][given]") {
  // The message names the public function called and what is wrong.
  common::DeviceBuffer<float> x(16), out(1);
  common::DeviceBuffer<__nv_bfloat16> x16(16);
  common::DeviceBuffer<unsigned char> ws(reduction::workspace_bytes(Version::Final, 16));
  // Pointers between two elements would fault inside a kernel; they are refused before.
  const float* odd_x = common::offset_bytes(x.data(), 2);
  for (Version v : reduction::kAllVersions) {
    INFO(reduction::version_name(v));
    REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), -1, out.data(), ws.data(), ws.size()),
                             "sum: n must be >= 0");
    REQUIRE_INVALID_ARGUMENT(reduction::sum(v, nullptr, 16, out.data(), ws.data(), ws.size()),
                             "sum: x is null");
    REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 16, nullptr, ws.data(), ws.size()),
                             "sum: out is null");
    if (v != Version::Atomic) {
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 16, out.data(), nullptr, 0),
                               "sum: workspace is null");
      REQUIRE_INVALID_ARGUMENT(
          reduction::sum(v, x.data(), 16, out.data(), ws.data() + 2, ws.size() - 2),
          "sum: workspace must be 4-byte aligned");
    }
  }
  REQUIRE_INVALID_ARGUMENT(reduction::sum(x16.data(), 16, out.data(), ws.data() + 1, ws.size() - 1),
                           "sum: workspace must be 4-byte aligned");
  REQUIRE_INVALID_ARGUMENT(reduction::max(x.data(), -5, out.data(), ws.data(), ws.size()),
                           "max: n must be >= 0");
  REQUIRE_INVALID_ARGUMENT(reduction::sum(x16.data(), 16, nullptr, ws.data(), ws.size()),
                           "sum: out is null");
  {  // x, out and a 16-bit x each between two elements
    float* odd_out = common::offset_bytes(out.data(), 1);
    const __nv_bfloat16* odd_x16 = common::offset_bytes(x16.data(), 1);
    for (Version v : reduction::kAllVersions) {
      INFO(reduction::version_name(v));
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, odd_x, 8, out.data(), ws.data(), ws.size()),
                               "sum: x and out must be aligned");
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 8, odd_out, ws.data(), ws.size()),
                               "sum: x and out must be aligned");
    }
    REQUIRE_INVALID_ARGUMENT(reduction::sum(odd_x16, 8, out.data(), ws.data(), ws.size()),
                             "sum: x and out must be aligned");
    REQUIRE_INVALID_ARGUMENT(reduction::max(odd_x, 8, out.data(), ws.data(), ws.size()),
                             "max: x and out must be aligned");
  }
  {  // A workspace smaller than the call needs, or on top of x; out overlapping x
    for (Version v : reduction::kAllVersions) {
      INFO(reduction::version_name(v));
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 16, x.data() + 3, ws.data(), ws.size()),
                               "sum: out overlaps x");
      if (v == Version::Atomic) continue;
      const size_t needed = reduction::workspace_bytes(v, 16);
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 16, out.data(), ws.data(), needed - 4),
                               "sum: workspace_size is " + std::to_string(needed - 4) +
                                   " bytes; this call needs workspace_bytes(");
      REQUIRE_INVALID_ARGUMENT(reduction::sum(v, x.data(), 16, out.data(), x.data(), needed),
                               "sum: the workspace overlaps x or out");
    }
    const size_t needed = reduction::workspace_bytes(Version::Final, 16);
    REQUIRE_INVALID_ARGUMENT(reduction::sum(x16.data(), 16, out.data(), ws.data(), needed - 1),
                             "sum: workspace_size is");
    REQUIRE_INVALID_ARGUMENT(reduction::max(x.data(), 16, out.data(), out.data(), needed),
                             "max: the workspace overlaps x or out");
  }
  REQUIRE_INVALID_ARGUMENT(reduction::workspace_bytes(Version::Final, -1),
                           "workspace_bytes: n must be >= 0");
  REQUIRE_INVALID_ARGUMENT(reduction::final_float_sum_launch(-1),
                           "final_float_sum_launch: n must be >= 0");
  const auto not_a_version = static_cast<Version>(99);
  REQUIRE_INVALID_ARGUMENT(reduction::workspace_bytes(not_a_version, 16),
                           "workspace_bytes: unknown version 99");
  REQUIRE_INVALID_ARGUMENT(
      reduction::sum(not_a_version, x.data(), 16, out.data(), ws.data(), ws.size()),
      "sum: unknown version 99");
  // The vendor baseline checks its arguments as the chapter does (the size query takes nulls).
  const size_t cub_bytes =
      cub_baseline::sum(static_cast<const float*>(nullptr), 16, nullptr, nullptr, 0);
  common::DeviceBuffer<unsigned char> cub_ws(std::max<size_t>(cub_bytes, 1));
  REQUIRE_INVALID_ARGUMENT(cub_baseline::sum(static_cast<const float*>(nullptr), 16, out.data(),
                                             cub_ws.data(), cub_bytes),
                           "sum: x is null");
  REQUIRE_INVALID_ARGUMENT(cub_baseline::max(x.data(), 16, nullptr, cub_ws.data(), cub_bytes),
                           "max: out is null");
  REQUIRE_INVALID_ARGUMENT(cub_baseline::sum(x.data(), -1, out.data(), cub_ws.data(), cub_bytes),
                           "sum: n must be >= 0");
  if (cub_bytes > 0)
    REQUIRE_INVALID_ARGUMENT(
        cub_baseline::sum(x.data(), 16, out.data(), cub_ws.data(), cub_bytes - 1),
        "sum: CUB needs");
  REQUIRE_INVALID_ARGUMENT(cub_baseline::max(odd_x, 8, out.data(), cub_ws.data(), cub_bytes),
                           "max: x and out must be aligned");
}

TEST_CASE("CUB agrees with the CPU reference (the second reference)",
          "[ch07_reduction][cub][given]") {
  for (size_t n : {size_t{1}, size_t{1025}, (size_t{1} << 20) + 3}) {
    const std::vector<float> x = common::gen::normal(n, 9200 + n, 1.0f, 1.0f);
    REQUIRE_CHECK(check::check_reduction(cub_sum(), x, 0));
    REQUIRE_CHECK(check::check_reduction(cub_max(), x, 0));
  }
}
