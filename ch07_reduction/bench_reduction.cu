// Benchmark of chapter 7: every version and cub::DeviceReduce, float sums over N = 2^16 .. 2^28,
// then the final version's bf16 sum and float max next to CUB's. Each version's result, and
// CUB's, is checked before it is timed; a wrong one is reported, not timed, and the exit status
// is 1. --versions matches the names printed ("1_atomic sum", "cub max", "read_floor ...").
//   bench_reduction                      all versions, N = 2^16, 2^18, ..., 2^28
//   bench_reduction --sizes=24,28        N = 2^24 and 2^28 only
//   bench_reduction --versions=final --csv
//   bench_reduction --versions=final,read_floor,launch_floor   the final version over its floors
#include "check.h"
#include "cub_reduce.h"
#include "reduction.h"

#include "common/bench_table.hpp"
#include "common/errors.hpp"
#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/gpu_info.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using reduction::Version;

__global__ void empty_kernel() {}

// What the final version costs before it reduces anything: the same 16-byte loads, as many in
// flight per thread, in the same grid (reduction::final_float_sum_launch), and no reduction, no
// finish. The gap between this row and 7_final is the price of combining the
// blocks' results.
constexpr int kReadThreads = 256;
template <int kLoadsInFlight>
__global__ void __launch_bounds__(kReadThreads)
    read_only_kernel(const int4* x, int64_t packs, int* sink) {
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  int acc = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < packs;
       i += kLoadsInFlight * threads) {
    int4 v[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * threads < packs) v[k] = __ldcs(x + i + k * threads);
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * threads < packs) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // never true for the benchmark's data; keeps the loads
}

template <int kLoadsInFlight>
common::Timing time_read_only(const float* x, int64_t n, int blocks, int* sink) {
  return common::time_gpu([&](cudaStream_t s) {
    read_only_kernel<kLoadsInFlight>
        <<<blocks, kReadThreads, 0, s>>>(reinterpret_cast<const int4*>(x), n / 4, sink);
    CUDA_CHECK_LAUNCH();
  });
}

common::Timing time_read_floor(const float* x, int64_t n, int* sink) {
  const reduction::FinalLaunch launch = reduction::final_float_sum_launch(n);
  return launch.loads_in_flight == 8 ? time_read_only<8>(x, n, launch.blocks, sink)
                                     : time_read_only<4>(x, n, launch.blocks, sink);
}

std::string shape_of(int64_t n) {
  for (int p = 0; p < 63; ++p)
    if (n == (int64_t{1} << p)) return "2^" + std::to_string(p);
  return std::to_string(n);
}

// What a run must return for the first n inputs, computed in double on the host.
struct Expected {
  double sum = 0;  // the inputs are >= 0, so this is also the sum of their absolute values
  float max = -INFINITY;
};

// One pass over the inputs, read off at every size.
template <typename T>
std::vector<Expected> expected_for(const std::vector<T>& host, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> sorted = sizes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Expected> at_sorted;
  Expected running;
  int64_t i = 0;
  for (int64_t n : sorted) {
    for (; i < n; ++i) {
      const float v = static_cast<float>(host[static_cast<size_t>(i)]);
      running.sum += v;
      running.max = std::max(running.max, v);
    }
    at_sorted.push_back(running);
  }
  std::vector<Expected> result;
  for (int64_t n : sizes)
    result.push_back(at_sorted[static_cast<size_t>(
        std::lower_bound(sorted.begin(), sorted.end(), n) - sorted.begin())]);
  return result;
}

// The check a run goes through before it is timed (common::BenchTable::check_then_time): out is
// poisoned (NaN) now, before the run; then out[0] is compared with the exact result, a sum
// within the chapter's error bound (check.h), a maximum exactly.
std::function<common::CheckResult()> poison_then_check(float* out, double exact, double bound) {
  CUDA_CHECK(cudaMemset(out, 0xFF, sizeof(float)));
  return [=] {
    float got = 0;
    CUDA_CHECK(cudaMemcpy(&got, out, sizeof(float), cudaMemcpyDeviceToHost));
    if (std::fabs(static_cast<double>(got) - exact) <= bound)  // false for NaN
      return common::CheckResult::pass();
    char why[128];
    std::snprintf(why, sizeof(why), "%.9g, expected %.9g within %.3g", static_cast<double>(got),
                  exact, bound);
    return common::CheckResult::fail(why);
  };
}

// Version 1 adds every input into one float. With inputs in [0, 1) its running sum passes 2^24
// after about 2^25 of them, and from there each add rounds to nothing. Up to 2^25 inputs its
// result is checked like the others; beyond, only that it reached 2^23 (an unfinished kernel
// returns 0) and stayed under the larger of 2^24 and the exact sum by the serial bound, and it
// is timed to show what atomics cost.
constexpr int64_t kAtomicRightUpTo = int64_t{1} << 25;

double tree_bound(int64_t n, double sum) {
  return check::sum_error_bound(n, sum, check::Accumulation::Tree, check::tree_run_threads());
}

// CUB on the same input, checked like the versions (`row` names it), then timed: its time is
// what every row's "vs vendor" divides, whether or not its own row is shown. Nothing when its
// result was wrong. Its temporary storage is allocated outside the timed region.
template <typename T, typename CubCall>
std::optional<common::Timing> cub_timing(common::BenchTable& table, const common::BenchRow& row,
                                         const T* x, int64_t n, float* out, double exact,
                                         double bound, CubCall cub_call) {
  const size_t temp_bytes = cub_call(x, n, out, nullptr, 0, nullptr);
  common::DeviceBuffer<unsigned char> temp(temp_bytes);
  return table.checked_timing(
      row, [&](cudaStream_t s) { cub_call(x, n, out, temp.data(), temp_bytes, s); },
      poison_then_check(out, exact, bound));
}

// The rows "7_final <op>" and "cub <op>", each where --versions asks for it.
template <typename T>
void bench_final(const common::BenchArgs& args, common::BenchTable& table, const char* op,
                 int64_t n, const T* x, float* out, void* ws, size_t ws_size, bool is_max,
                 const Expected& expected) {
  const std::string final_row = std::string("7_final ") + op, cub_name = std::string("cub ") + op;
  const bool wants_final = args.wants_version(final_row), wants_cub = args.wants_version(cub_name);
  if (!wants_final && !wants_cub) return;
  const char* dtype = common::DType<T>::name;
  const double exact = is_max ? expected.max : expected.sum;
  const double bound = is_max ? 0.0 : tree_bound(n, expected.sum);
  const double bytes = static_cast<double>(n) * sizeof(T);
  const common::BenchRow cub_row{cub_name, shape_of(n), dtype, {}, bytes, {}};
  const std::optional<common::Timing> cub = cub_timing(
      table, cub_row, x, n, out, exact, bound,
      [&](const T* d_x, int64_t m, float* o, void* t, size_t b, cudaStream_t s) {
        if constexpr (std::is_same_v<T, float>) {
          return is_max ? cub_baseline::max(d_x, m, o, t, b, s)
                        : cub_baseline::sum(d_x, m, o, t, b, s);
        } else {
          return cub_baseline::sum(d_x, m, o, t, b, s);
        }
      });
  auto launch = [&](cudaStream_t s) {
    if constexpr (std::is_same_v<T, float>) {
      if (is_max)
        reduction::max(x, n, out, ws, ws_size, s);
      else
        reduction::sum(Version::Final, x, n, out, ws, ws_size, s);
    } else {
      reduction::sum(x, n, out, ws, ws_size, s);
    }
  };
  if (wants_final)
    table.check_then_time({final_row, shape_of(n), dtype, {}, bytes, common::median_us(cub)},
                          launch, poison_then_check(out, exact, bound));
  table.add_vendor_row(cub_row, cub);
}

}  // namespace

int main(int argc, char** argv) {
  const common::BenchArgs args = common::parse_bench_args(
      argc, argv,
      "bench_reduction: chapter 7's reduction versions next to cub::DeviceReduce.\n"
      "  --sizes=16,20,24   log2 of the element counts, 0 to 32 (default 16,18,20,22,24,26,28)");
  std::vector<int64_t> sizes;
  for (const std::string& s : args.sizes)
    sizes.push_back(int64_t{1} << common::parse_size_in_range(s, 0, 32));
  if (sizes.empty())
    for (int p = 16; p <= 28; p += 2)
      sizes.push_back(int64_t{1} << p);

  common::BenchTable table("bench_reduction", args);
  return table.run([&] {
    const int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
    const std::vector<float> x_host =
        common::gen::uniform(static_cast<size_t>(max_n), 1, 0.0f, 1.0f);
    const std::vector<__nv_bfloat16> x_bf16_host =
        common::gen::uniform_as<__nv_bfloat16>(static_cast<size_t>(max_n), 2, 0.0f, 1.0f);
    common::DeviceBuffer<float> x(x_host);
    common::DeviceBuffer<__nv_bfloat16> x_bf16(x_bf16_host);
    const std::vector<Expected> expected = expected_for(x_host, sizes);
    const std::vector<Expected> expected_bf16 = expected_for(x_bf16_host, sizes);
    common::DeviceBuffer<float> out(1);
    common::DeviceBuffer<int> sink(1);

    // The floor under every small-n time: a launch that does nothing, timed the same way.
    const std::string launch_floor = "launch_floor (empty kernel)";
    if (args.wants_version(launch_floor)) {
      const common::Timing t = common::time_gpu([](cudaStream_t s) {
        empty_kernel<<<1, 32, 0, s>>>();
        CUDA_CHECK_LAUNCH();
      });
      table.add({launch_floor, "-", "-", t, 0.0, std::nullopt});
    }

    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t n = sizes[i];
      if (args.wants_dtype("fp32")) {
        const double bytes = static_cast<double>(n) * sizeof(float);
        const common::BenchRow cub_row{"cub sum", shape_of(n), "fp32", {}, bytes, {}};
        const std::optional<common::Timing> cub = cub_timing(
            table, cub_row, x.data(), n, out.data(), expected[i].sum,
            tree_bound(n, expected[i].sum), [](auto... a) { return cub_baseline::sum(a...); });
        for (Version v : reduction::kAllVersions) {
          // --versions matches the names printed.
          const std::string row = std::string(reduction::version_name(v)) + " sum";
          if (!args.wants_version(row)) continue;
          common::DeviceBuffer<unsigned char> ws(reduction::workspace_bytes(v, n));
          ws.fill_bytes(0);
          auto launch = [&](cudaStream_t s) {
            reduction::sum(v, x.data(), n, out.data(), ws.data(), ws.size(), s);
          };
          double exact = expected[i].sum, bound = tree_bound(n, exact);
          if (v == Version::Atomic && n <= kAtomicRightUpTo) {
            bound = check::sum_error_bound(n, exact, check::Accumulation::Serial, 0);
          } else if (v == Version::Atomic) {  // anywhere in [low, high]
            constexpr double kLow = 1 << 23;
            const double high = std::max(exact, double{1 << 24}) +
                                check::sum_error_bound(n, exact, check::Accumulation::Serial, 0);
            bound = (high - kLow) / 2;
            exact = (high + kLow) / 2;
            if (!args.csv)
              std::printf(
                  "(%s %s: its one float stops growing once it reaches 2^24, where adding\n"
                  " a value below 1 rounds to nothing: this sum is wrong, and only checked\n"
                  " to lie between 2^23 and the larger of 2^24 and the exact sum)\n",
                  row.c_str(), shape_of(n).c_str());
          }
          table.check_then_time({row, shape_of(n), "fp32", {}, bytes, common::median_us(cub)},
                                launch, poison_then_check(out.data(), exact, bound));
        }
        table.add_vendor_row(cub_row, cub);
        const std::string read_floor = "read_floor (loads only)";
        if (args.wants_version(read_floor))
          table.add({read_floor, shape_of(n), "fp32", time_read_floor(x.data(), n, sink.data()),
                     bytes, std::nullopt});
      }
    }
    // The final version on its other operations.
    common::DeviceBuffer<unsigned char> ws(reduction::workspace_bytes(Version::Final, max_n));
    ws.fill_bytes(0);
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (args.wants_dtype("bf16"))
        bench_final(args, table, "sum", sizes[i], x_bf16.data(), out.data(), ws.data(), ws.size(),
                    false, expected_bf16[i]);
      if (args.wants_dtype("fp32"))
        bench_final(args, table, "max", sizes[i], x.data(), out.data(), ws.data(), ws.size(), true,
                    expected[i]);
    }
  });
}
