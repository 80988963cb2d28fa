// bench_softmax: every version of chapter 10, the final dispatcher, log_softmax and the backward,
// in fp32 and bf16, against the copy bandwidth measured in the same run (and cuDNN's softmax
// when the build found it).
//
//   ./bench_softmax                          the chapter's benchmark shapes
//   ./bench_softmax --sizes=4096x8192,1x131072 --versions=final --dtypes=bf16 --csv
//
// GB/s counts each byte once: forward 2 * rows * cols * sizeof(T) (read x, write y), backward 3
// (read y and dy, write dx). Before a version (or cuDNN) is timed, its first and last output
// rows are compared with cpu_ref in double under the tests' tolerances (check.h); a wrong one is
// reported, not timed, and the exit status is 1.
#include "check.h"
#include "softmax.h"
#if CH10_HAVE_CUDNN
#include "cudnn_softmax.h"
#endif

#include "common/bench_table.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"
#include "common/timing.hpp"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* kUsage =
    "bench_softmax: row-wise softmax over [rows, cols] matrices\n"
    "  --sizes=ROWSxCOLS,...  (default: 4096x2048,32768x1024,4096x8192,1024x32768,256x131072,\n"
    "                          65536x128,1x131072)";

struct Shape {
  int64_t rows, cols;
  std::string name() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

std::vector<Shape> parse_shapes(const std::vector<std::string>& sizes) {
  if (sizes.empty())
    return {{4096, 2048},  {32768, 1024}, {4096, 8192}, {1024, 32768},
            {256, 131072}, {65536, 128},  {1, 131072}};
  std::vector<Shape> shapes;
  for (const auto& s : sizes) {
    const common::MatrixSize size = common::parse_matrix_size(s);
    shapes.push_back({size.rows, size.cols});
  }
  return shapes;
}

// Logit-like values from a hash of the index, generated on the device: no host staging of
// gigabytes, the same data in every run.
template <typename T>
__global__ void fill_logits(T* x, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    const float u = static_cast<float>(h & 0xffffff) * 0x1p-24f;  // [0, 1)
    float v = 8.0f * u - 4.0f;
    if ((h >> 24) == 0) v += 12.0f;  // a few large logits
    if constexpr (std::is_same_v<T, float>)
      x[i] = v;
    else
      x[i] = __float2bfloat16_rn(v);
  }
}

template <typename T>
void fill(common::DeviceBuffer<T>& buffer, uint32_t seed) {
  fill_logits<T><<<1024, 256>>>(buffer.data(), static_cast<int64_t>(buffer.size()), seed);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

// The rows common::checked_rows picks, copied back one after the other.
template <typename T>
std::vector<T> end_rows(const common::DeviceBuffer<T>& m, const Shape& shape) {
  const size_t cols = static_cast<size_t>(shape.cols);
  std::vector<T> rows;
  for (int64_t r : common::checked_rows(shape.rows)) {
    const std::vector<T> row = m.download(static_cast<size_t>(r) * cols, cols);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

int64_t end_row_count(const Shape& shape) {
  return static_cast<int64_t>(common::checked_rows(shape.rows).size());
}

template <typename T>
void bench_dtype(const common::BenchArgs& args, common::BenchTable& table,
                 const std::vector<Shape>& shapes) {
  const char* dtype = common::DType<T>::name;
  for (const Shape& shape : shapes) {
    const size_t n = static_cast<size_t>(shape.rows * shape.cols);
    const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
    common::DeviceBuffer<T> x(n), y(n);
    fill(x, 1);
    // One run on a poisoned output, its end rows compared with cpu_ref, then the timing. A
    // version with limits (`limited`: versions 1 to 6) is left out where it refuses the shape
    // (these buffers are 16-byte aligned); the dispatcher, log_softmax and the backward take
    // every shape.
    auto check_then_time = [&](const std::string& name, bool limited, common::DeviceBuffer<T>& out,
                               const std::function<void(cudaStream_t)>& launch,
                               const std::function<common::CheckResult()>& compare, double moved,
                               std::optional<double> vendor) {
      out.fill_bytes(common::kPoisonByte);
      table.check_then_time(
          {name, shape.name(), dtype, {}, moved, vendor}, launch, compare,
          limited ? common::BenchTable::IfRefused::Skip : common::BenchTable::IfRefused::Wrong);
    };
    auto forward_check = [&](check::Op op, int roundings = 1) {
      return [&, op, roundings] {
        return check::compare_forward(end_rows(x, shape), end_rows(y, shape), op,
                                      end_row_count(shape), shape.cols, roundings);
      };
    };
    // cuDNN's output is checked like the versions' (its time is what every row's "vs vendor"
    // divides), allowing it check::kVendorRoundings; it has no row of its own. A shape its int
    // sizes cannot describe is left out, with a note.
    std::optional<double> vendor_us;
#if CH10_HAVE_CUDNN
    try {
      y.fill_bytes(common::kPoisonByte);
      vendor_us = common::median_us(table.checked_timing(
          {"cudnn_softmax", shape.name(), dtype, {}, bytes, {}},
          [&](cudaStream_t s) {
            vendor::cudnn_softmax(x.data(), y.data(), shape.rows, shape.cols, s);
          },
          forward_check(check::Op::Softmax, check::kVendorRoundings),
          common::BenchTable::IfRefused::Note));
    } catch (const common::CudaError&) {
      throw;                                 // the GPU's error, not cuDNN's: nothing more can run
    } catch (const std::runtime_error& e) {  // a cuDNN call that failed
      table.note(std::string("cuDNN: ") + e.what());
    }
#endif
    for (softmax::Version v : softmax::kAllVersions) {
      const std::string name = softmax::version_name(v);
      if (!args.wants_version(name)) continue;
      check_then_time(
          name, v != softmax::Version::Final, y,
          [&](cudaStream_t s) {
            softmax::softmax(v, x.data(), y.data(), shape.rows, shape.cols, s);
          },
          forward_check(check::Op::Softmax), bytes, vendor_us);
    }
    // --versions matches the names printed: "7_final" keeps this row, "log_softmax" only it.
    if (args.wants_version("7_final log_softmax"))
      check_then_time(
          "7_final log_softmax", false, y,
          [&](cudaStream_t s) {
            softmax::log_softmax(x.data(), y.data(), shape.rows, shape.cols, s);
          },
          forward_check(check::Op::LogSoftmax), bytes, std::nullopt);
    if (args.wants_version("9_backward")) {
      common::DeviceBuffer<T> dy(n), dx(n);
      fill(dy, 2);
      // The backward's y is a softmax output, made by the dispatcher before the backward runs.
      bool have_y = true;
      try {
        softmax::softmax(x.data(), y.data(), shape.rows, shape.cols);
      } catch (const std::logic_error& e) {
        table.add_wrong(
            "9_backward", shape.name(), dtype,
            std::string("its input y comes from the dispatcher, which threw: ") + e.what());
        have_y = false;
      }
      if (have_y)
        check_then_time(
            "9_backward", false, dx,
            [&](cudaStream_t s) {
              softmax::softmax_backward(y.data(), dy.data(), dx.data(), shape.rows, shape.cols, s);
            },
            [&] {
              return check::compare_backward(end_rows(y, shape), end_rows(dy, shape),
                                             end_rows(dx, shape), end_row_count(shape), shape.cols);
            },
            1.5 * bytes, std::nullopt);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const common::BenchArgs args = common::parse_bench_args(argc, argv, kUsage);
  const std::vector<Shape> shapes = parse_shapes(args.sizes);
  common::BenchTable table("bench_softmax", args);
  return table.run([&] {
    if (args.wants_dtype("fp32")) bench_dtype<float>(args, table, shapes);
    if (args.wants_dtype("bf16")) bench_dtype<__nv_bfloat16>(args, table, shapes);
  });
}
