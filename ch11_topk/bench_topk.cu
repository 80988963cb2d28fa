// bench_topk: every version, the dispatcher, fused softmax + top-k and the CUB baseline on the
// chapter's LLM-logit shapes, fp32 and bf16, k in {1, 50, 1024}.
//   bench_topk [--sizes=1x128256,64x128256] [--versions=split,cub] [--dtypes=fp32] [--csv]
// GB/s counts the input read once plus the outputs written once; "vs vendor" is CUB's time
// over ours (its segmented sort does not depend on k; it is checked and timed at each k).
// Before a version or CUB is timed, it runs once on poisoned outputs and its first and last rows
// are compared with cpu_ref as the tests compare them; a wrong one prints WRONG RESULT instead
// of a time, and the exit status is 1.
#include "check.h"
#include "cub_topk.h"
#include "topk.h"

#include "common/bench_table.hpp"
#include "common/compare.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t M, N;
};

// Logit-like data generated on the device (the host would need seconds for 131M values):
// a normal body of standard deviation 2 from Box-Muller over a counter hash.
__device__ uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill_logits(T* x, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix(static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + seed);
    const float u1 = (static_cast<float>(h >> 40) + 0.5f) * 0x1p-24f;
    const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) * 0x1p-24f;
    const float v = 2.0f * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if constexpr (std::is_same_v<T, float>)
      x[i] = v;
    else
      x[i] = __float2bfloat16_rn(v);
  }
}

// A row the versions are checked on, with its references (computed once per k).
struct CheckedRow {
  int64_t row;
  cpu_ref::TopK topk;
  cpu_ref::SoftmaxTopK softmax_topk;
};

std::vector<Shape> parse_shapes(const std::vector<std::string>& sizes) {
  std::vector<Shape> shapes;
  for (const auto& s : sizes) {
    const common::MatrixSize size = common::parse_matrix_size(s);
    shapes.push_back({size.rows, size.cols});
  }
  return shapes;
}

template <typename T>
void bench_dtype(const common::BenchArgs& args, common::BenchTable& table,
                 const std::vector<Shape>& shapes) {
  const std::string dtype = common::DType<T>::name;
  if (!args.wants_dtype(dtype)) return;
  for (const Shape& s : shapes) {
    const int64_t M = s.M, N = s.N;
    common::DeviceBuffer<T> x(static_cast<size_t>(M * N));
    fill_logits<<<4096, 256>>>(x.data(), M * N, 1234);
    CUDA_CHECK_LAUNCH();
    const int max_k = 1024;
    common::DeviceBuffer<T> values(static_cast<size_t>(M * max_k));
    common::DeviceBuffer<int64_t> indices(static_cast<size_t>(M * max_k));
    common::DeviceBuffer<float> probs(static_cast<size_t>(M * max_k));
    common::DeviceBuffer<float> lse(static_cast<size_t>(M));

    // The baseline runs whatever --versions says: its time is what every row's "vs vendor"
    // divides.
    std::optional<common::DeviceBuffer<unsigned char>> cub_ws;
    size_t cub_bytes = 0;
    try {
      cub_bytes = cub_topk::workspace_bytes<T>(M, N);
      cub_ws.emplace(cub_bytes);
    } catch (const std::invalid_argument& e) {  // beyond the baseline's limits: no CUB row
      table.note("CUB baseline at " + std::to_string(M) + "x" + std::to_string(N) + ": " +
                 e.what());
    }
    for (int k : {1, 50, 1024}) {
      if (k > N) continue;
      const std::string shape =
          std::to_string(M) + "x" + std::to_string(N) + " k=" + std::to_string(k);
      const double bytes = static_cast<double>(M * N * sizeof(T)) +
                           static_cast<double>(M * k * (sizeof(T) + sizeof(int64_t)));
      common::DeviceBuffer<unsigned char> ws(std::max<size_t>(topk::workspace_bytes(M, N, k), 256));
      ws.fill_bytes(0);
      // The rows checked (common::checked_rows), copied back alone, with their references.
      std::vector<CheckedRow> checked;
      for (int64_t r : common::checked_rows(M)) {
        const std::vector<T> row = x.download(static_cast<size_t>(r * N), static_cast<size_t>(N));
        checked.push_back(
            {r, cpu_ref::topk(row, 1, N, k), cpu_ref::softmax_topk(row, 1, N, k, 1.0)});
      }
      // Each version, and CUB, is checked, then timed (common::BenchTable::check_then_time): one
      // run on outputs poisoned here, compared as the tests compare (check.h): indices exactly
      // (the order is total, ties to the lower index: one right answer), values exactly (copies
      // of input elements), probabilities and lse within the tests' float bounds.
      auto poison_then_check = [&](bool fused) -> std::function<common::CheckResult()> {
        values.fill_bytes(common::kPoisonByte);
        indices.fill_bytes(common::kPoisonByte);
        probs.fill_bytes(common::kPoisonByte);
        lse.fill_bytes(common::kPoisonByte);
        // Versions lay the workspace out differently, and one that was skipped as wrong may have
        // left its counters non-zero.
        ws.fill_bytes(0);
        return [&, fused] {
          common::CheckResult result;
          for (const CheckedRow& c : checked) {
            const auto at = static_cast<size_t>(c.row * k), kk = static_cast<size_t>(k);
            const std::string where = "row " + std::to_string(c.row) + " ";
            if (!fused) {
              result.and_then(topk_check::compare_topk(indices.download(at, kk),
                                                       values.download(at, kk), c.topk, where));
            } else {
              const std::vector<float> got_lse = lse.download(static_cast<size_t>(c.row), 1);
              result.and_then(topk_check::compare_softmax_topk(indices.download(at, kk),
                                                               probs.download(at, kk), &got_lse,
                                                               c.softmax_topk, where));
            }
          }
          return result;
        };
      };
      // CUB first: every row compares with its time. Its data has no NaN and no -0.0, where its
      // order differs from ours (cub_topk.h).
      const common::BenchRow cub_row{"cub_segmented_sort", shape, dtype, {}, bytes, {}};
      std::optional<common::Timing> cub;
      if (cub_ws)
        cub = table.checked_timing(
            cub_row,
            [&](cudaStream_t st) {
              cub_topk::topk(x.data(), M, N, k, values.data(), indices.data(), cub_ws->data(),
                             cub_bytes, st);
            },
            poison_then_check(false));
      auto add = [&](const std::string& name, bool fused,
                     const std::function<void(cudaStream_t)>& launch, double moved) {
        if (!args.wants_version(name)) return;
        table.check_then_time({name, shape, dtype, {}, moved, common::median_us(cub)}, launch,
                              poison_then_check(fused));
      };
      for (topk::Version v : topk::kAllVersions) {
        if (!topk::supports(v, M, N, k, static_cast<int>(sizeof(T)))) continue;
        add(
            topk::version_name(v), false,
            [&](cudaStream_t st) {
              topk::topk(v, x.data(), M, N, k, values.data(), indices.data(), ws.data(), ws.size(),
                         st);
            },
            bytes);
      }
      add(
          "dispatch", false,
          [&](cudaStream_t st) {
            topk::topk(x.data(), M, N, k, values.data(), indices.data(), ws.data(), ws.size(), st);
          },
          bytes);
      add(
          "softmax_topk", true,
          [&](cudaStream_t st) {
            topk::softmax_topk(x.data(), M, N, k, 1.0f, 0, indices.data(), probs.data(), lse.data(),
                               ws.data(), ws.size(), st);
          },
          static_cast<double>(M * N * sizeof(T)) + static_cast<double>(M * k * 12 + M * 4));
      table.add_vendor_row(cub_row, cub);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const common::BenchArgs args = common::parse_bench_args(
      argc, argv,
      "bench_topk: top-k over [M, N] logits.\n"
      "  --sizes=MxN,...   default 1x128256,64x128256,1024x50257,1024x128256,4096x32000\n"
      "  versions: thread_queue warp_merge radix_select split_row cluster_row dispatch "
      "softmax_topk cub");
  std::vector<Shape> shapes = {
      {1, 128256}, {64, 128256}, {1024, 50257}, {1024, 128256}, {4096, 32000}};
  if (!args.sizes.empty()) shapes = parse_shapes(args.sizes);
  common::BenchTable table("bench_topk", args);
  return table.run([&] {
    bench_dtype<float>(args, table, shapes);
    bench_dtype<__nv_bfloat16>(args, table, shapes);
  });
}
