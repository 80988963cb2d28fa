// Benchmark of chapter 7: every version and cub::DeviceReduce, float sums over N = 2^16 .. 2^28,
// then the final version's bf16 sum and float max next to CUB's.
//   bench_reduction                      all versions, N = 2^16, 2^18, ..., 2^28
//   bench_reduction --sizes=24,28        N = 2^24 and 2^28 only
//   bench_reduction --versions=final --csv
//   bench_reduction --versions=final,read_floor,launch_floor   the final version over its floors
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
#include <string>
#include <vector>

namespace {

using reduction::Version;

__global__ void empty_kernel() {}

// What the final version costs before it reduces anything: the same 16-byte loads, four in
// flight per thread, a grid sized by the same rule, and no reduction, no finish. The gap between this row and
// 7_final is the price of combining the blocks' results.
constexpr int kReadThreads = 256;
constexpr int kReadLoadsInFlight = 4;
__global__ void __launch_bounds__(kReadThreads)
    read_only_kernel(const int4* x, int64_t packs, int* sink) {
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  int acc = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < packs;
       i += kReadLoadsInFlight * threads) {
    int4 v[kReadLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kReadLoadsInFlight; ++k)
      if (i + k * threads < packs) v[k] = __ldcs(x + i + k * threads);
#pragma unroll
    for (int k = 0; k < kReadLoadsInFlight; ++k)
      if (i + k * threads < packs) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // never true for the benchmark's data; keeps the loads
}

common::Timing time_read_only(const float* x, int64_t n, int* sink) {
  const int64_t packs = n / 4;
  int per_sm = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_only_kernel, kReadThreads, 0));
  const int64_t wave = int64_t{common::device_properties().multiProcessorCount} * per_sm;
  const int blocks = static_cast<int>(std::clamp<int64_t>(
      (packs + kReadThreads * kReadLoadsInFlight - 1) / (kReadThreads * kReadLoadsInFlight), 1,
      wave));
  return common::time_gpu([&](cudaStream_t s) {
    read_only_kernel<<<blocks, kReadThreads, 0, s>>>(reinterpret_cast<const int4*>(x), packs, sink);
    CUDA_CHECK_LAUNCH();
  });
}

std::string shape_of(int64_t n) {
  for (int p = 0; p < 63; ++p)
    if (n == (int64_t{1} << p)) return "2^" + std::to_string(p);
  return std::to_string(n);
}

// CUB's time for the same input: its temporary storage is allocated outside the timed region.
template <typename T, typename Launch>
double time_cub(const T* x, int64_t n, float* out, Launch cub_call) {
  const size_t temp_bytes = cub_call(x, n, out, nullptr, 0, nullptr);
  common::DeviceBuffer<unsigned char> temp(temp_bytes);
  return common::time_gpu([&](cudaStream_t s) { cub_call(x, n, out, temp.data(), temp_bytes, s); })
      .median_us;
}

// The rows "7_final <op>" and "cub <op>", each where --versions asks for it.
template <typename T>
void bench_final(const common::BenchArgs& args, common::BenchTable& table, const char* op,
                 int64_t n, const T* x, float* out, void* ws, bool is_max) {
  const std::string final_row = std::string("7_final ") + op, cub_row = std::string("cub ") + op;
  const bool wants_final = args.wants_version(final_row), wants_cub = args.wants_version(cub_row);
  if (!wants_final && !wants_cub) return;
  const double vendor_us = time_cub(
      x, n, out, [&](const T* d_x, int64_t m, float* o, void* t, size_t b, cudaStream_t s) {
        if constexpr (std::is_same_v<T, float>) {
          return is_max ? cub_baseline::max(d_x, m, o, t, b, s)
                        : cub_baseline::sum(d_x, m, o, t, b, s);
        } else {
          return cub_baseline::sum(d_x, m, o, t, b, s);
        }
      });
  if (wants_final) {
    const common::Timing t = common::time_gpu([&](cudaStream_t s) {
      if constexpr (std::is_same_v<T, float>) {
        if (is_max)
          reduction::max(x, n, out, ws, s);
        else
          reduction::sum(Version::Final, x, n, out, ws, s);
      } else {
        reduction::sum(x, n, out, ws, s);
      }
    });
    table.add({final_row, shape_of(n), common::DType<T>::name, t,
               static_cast<double>(n) * sizeof(T), vendor_us});
  }
  if (wants_cub)
    table.add({cub_row, shape_of(n), common::DType<T>::name,
               common::Timing{vendor_us, vendor_us, vendor_us, 0},
               static_cast<double>(n) * sizeof(T), vendor_us});
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
  const int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  common::DeviceBuffer<float> x(common::gen::uniform(static_cast<size_t>(max_n), 1, 0.0f, 1.0f));
  common::DeviceBuffer<__nv_bfloat16> x_bf16(
      common::gen::uniform_as<__nv_bfloat16>(static_cast<size_t>(max_n), 2, 0.0f, 1.0f));
  common::DeviceBuffer<float> out(1);
  common::DeviceBuffer<int> sink(1);

  // The floor under every small-n time: a launch that does nothing, timed the same way.
  if (args.wants_version("launch_floor")) {
    const common::Timing t = common::time_gpu([](cudaStream_t s) {
      empty_kernel<<<1, 32, 0, s>>>();
      CUDA_CHECK_LAUNCH();
    });
    table.add({"launch_floor (empty kernel)", "-", "-", t, 0.0, std::nullopt});
  }

  for (int64_t n : sizes) {
    if (args.wants_dtype("fp32")) {
      const double vendor_us =
          time_cub(x.data(), n, out.data(), [](auto... a) { return cub_baseline::sum(a...); });
      for (Version v : reduction::kAllVersions) {
        if (!args.wants_version(reduction::version_name(v))) continue;
        common::DeviceBuffer<unsigned char> ws(reduction::workspace_bytes(v, n));
        ws.fill_bytes(0);
        const common::Timing t = common::time_gpu(
            [&](cudaStream_t s) { reduction::sum(v, x.data(), n, out.data(), ws.data(), s); });
        table.add({std::string(reduction::version_name(v)) + " sum", shape_of(n), "fp32", t,
                   static_cast<double>(n) * sizeof(float), vendor_us});
      }
      if (args.wants_version("cub"))
        table.add({"cub sum", shape_of(n), "fp32",
                   common::Timing{vendor_us, vendor_us, vendor_us, 0},
                   static_cast<double>(n) * sizeof(float), vendor_us});
      if (args.wants_version("read_floor"))
        table.add({"read_floor (loads only)", shape_of(n), "fp32",
                   time_read_only(x.data(), n, sink.data()), static_cast<double>(n) * sizeof(float),
                   std::nullopt});
    }
  }
  // The final version on its other operations.
  common::DeviceBuffer<unsigned char> ws(reduction::workspace_bytes(Version::Final, max_n));
  ws.fill_bytes(0);
  for (int64_t n : sizes) {
    if (args.wants_dtype("bf16"))
      bench_final(args, table, "sum", n, x_bf16.data(), out.data(), ws.data(), false);
    if (args.wants_dtype("fp32"))
      bench_final(args, table, "max", n, x.data(), out.data(), ws.data(), true);
  }
  return 0;
}
