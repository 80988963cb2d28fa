// bench_norm: every LayerNorm and RMSNorm version and the dispatchers, fp32 and bf16 (fp16 on
// request), on the shapes of a transformer: M tokens × N hidden units.
//
//   bench_norm                                   all versions, all shapes, fp32 and bf16
//   bench_norm --versions=dispatch --dtypes=bf16 the dispatchers only, bf16 only
//   bench_norm --sizes=4096x4096,1x8192          other shapes (M x N)
//   bench_norm --csv
//
// GB/s counts the bytes an operation cannot avoid: x read and y written once (LayerNorm, RMSNorm),
// x and residual read, residual and y written (fused add), plus γ, β and the statistics. The
// "% copy" column compares that with a device-to-device copy measured in the same process.
// Before a version is timed, it runs once on poisoned outputs and its first and last rows are
// checked against cpu_ref with the tests' bounds; a wrong one prints WRONG RESULT instead of a
// time, and the exit status is 1.
#include "check.h"
#include "norm.h"

#include "common/bench_table.hpp"
#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Times nothing but a launch: the floor under every small-problem time in the table (event
// timestamps around one kernel on an otherwise idle stream).
__global__ void empty_kernel() {}

struct Shape {
  int64_t rows, n;
  std::string text() const { return std::to_string(rows) + "x" + std::to_string(n); }
};

const std::vector<Shape> kDefaultShapes = {
    {4096, 4096}, {16384, 1024}, {4096, 8192}, {1024, 16384}, {16384, 4096}, {1, 8192}, {32, 8192}};

std::vector<Shape> parse_shapes(const std::vector<std::string>& sizes) {
  if (sizes.empty()) return kDefaultShapes;
  std::vector<Shape> shapes;
  for (const auto& s : sizes) {
    const common::MatrixSize size = common::parse_matrix_size(s);
    shapes.push_back({size.rows, size.cols});
  }
  return shapes;
}

template <typename T>
void bench_dtype(const common::BenchArgs& args, common::BenchTable& table, const Shape& shape) {
  const char* dtype = common::DType<T>::name;
  if (!args.wants_dtype(dtype)) return;
  const auto count = static_cast<size_t>(shape.rows * shape.n);
  const auto n = static_cast<size_t>(shape.n);
  common::DeviceBuffer<T> x(common::gen::uniform_as<T>(count, 1, -2.0f, 3.0f));
  common::DeviceBuffer<T> residual(common::gen::uniform_as<T>(count, 2, -1.0f, 1.0f));
  common::DeviceBuffer<T> gamma(common::gen::uniform_as<T>(n, 3, 0.5f, 1.5f));
  common::DeviceBuffer<T> beta(common::gen::uniform_as<T>(n, 4, -0.5f, 0.5f));
  common::DeviceBuffer<T> y(count);
  common::DeviceBuffer<float> mean(static_cast<size_t>(shape.rows)),
      rstd(static_cast<size_t>(shape.rows));
  const double s = sizeof(T);
  const double rows = static_cast<double>(shape.rows), cols = static_cast<double>(shape.n);
  const double layernorm_bytes = 2 * rows * cols * s + 2 * cols * s + 8 * rows;
  const double rmsnorm_bytes = 2 * rows * cols * s + cols * s + 4 * rows;
  const double fused_bytes = 4 * rows * cols * s + cols * s + 4 * rows;

  const std::vector<T> gamma_h = gamma.download(), beta_h = beta.download();

  // Each version is checked, then timed (common::BenchTable::check_then_time): one run on
  // poisoned outputs, then the first and the last row (a wrong row offset or grid tail shows
  // there) against cpu_ref in double with the tests' element-wise bounds (check.h): a few
  // roundings to T plus the error of float statistics over n terms. Only those rows are copied
  // back.
  auto run = [&](const std::string& version, normalization::NormOp op, double bytes,
                 const std::function<void(cudaStream_t)>& launch) {
    if (!args.wants_version(version)) return;
    const bool fused = op == normalization::NormOp::AddRmsNorm;
    const std::vector<int64_t> checked = common::checked_rows(shape.rows);
    // The fused add reads the residual and overwrites it (earlier runs have changed it): keep
    // what this run reads.
    std::vector<std::vector<T>> residual_in;
    if (fused)
      for (int64_t r : checked)
        residual_in.push_back(residual.download(static_cast<size_t>(r) * n, n));
    y.fill_bytes(common::kPoisonByte);
    mean.fill_bytes(common::kPoisonByte);
    rstd.fill_bytes(common::kPoisonByte);
    auto compare = [&] {
      common::CheckResult result;
      for (size_t i = 0; i < checked.size(); ++i) {
        const int64_t r = checked[i];
        const size_t at = static_cast<size_t>(r) * n;
        check::Problem<T> p;
        p.rows = 1;
        p.n = shape.n;
        p.x = x.download(at, n);
        p.gamma = gamma_h;
        check::Expected e;
        if (op == normalization::NormOp::LayerNorm) {
          p.beta = beta_h;
          e = check::expect_layernorm(p);
        } else if (fused) {
          p.residual = residual_in[i];
          e = check::expect_add_rmsnorm(p);
        } else {
          e = check::expect_rmsnorm(p);
        }
        result.and_then(check::compare_outputs(
            e, y.download(at, n), mean.download(static_cast<size_t>(r), 1),
            rstd.download(static_cast<size_t>(r), 1),
            fused ? residual.download(at, n) : std::vector<T>{}, shape.n, r, "against cpu_ref:"));
      }
      return result;
    };
    table.check_then_time({version, shape.text(), dtype, {}, bytes, std::nullopt}, launch, compare);
  };

  // A version the GPU or the row length rules out gets no row in the table.
  auto version_runs = [&](bool registers, bool pipelined, bool fused) {
    if (registers) return shape.n <= normalization::max_registers_n<T>();
    if (pipelined) return normalization::pipelined_available<T>(shape.n, fused);
    return true;
  };
  for (normalization::LayerNormVersion v : normalization::kLayerNormVersions) {
    if (!version_runs(v == normalization::LayerNormVersion::Registers,
                      v == normalization::LayerNormVersion::Pipelined, false))
      continue;
    run(normalization::version_name(v), normalization::NormOp::LayerNorm, layernorm_bytes,
        [&](cudaStream_t stream) {
          normalization::layernorm(v, x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                                   rstd.data(), shape.rows, shape.n, 1e-5f, stream);
        });
  }
  auto rmsnorm_runs = [&](normalization::RmsNormVersion v, bool fused) {
    return version_runs(v == normalization::RmsNormVersion::Registers,
                        v == normalization::RmsNormVersion::Pipelined, fused);
  };
  for (normalization::RmsNormVersion v : normalization::kRmsNormVersions) {
    if (!rmsnorm_runs(v, false)) continue;
    run(std::string("rmsnorm_") + normalization::version_name(v), normalization::NormOp::RmsNorm,
        rmsnorm_bytes, [&](cudaStream_t stream) {
          normalization::rmsnorm(v, x.data(), gamma.data(), y.data(), rstd.data(), shape.rows,
                                 shape.n, 1e-5f, stream);
        });
  }
  for (normalization::RmsNormVersion v : normalization::kRmsNormVersions) {
    if (!rmsnorm_runs(v, true)) continue;
    // The residual changes in place on every run; its values stay bounded (it grows by x each
    // time, a few hundred runs at most), which does not change the time.
    run(std::string("add_rmsnorm_") + normalization::version_name(v),
        normalization::NormOp::AddRmsNorm, fused_bytes, [&](cudaStream_t stream) {
          normalization::add_rmsnorm(v, x.data(), residual.data(), gamma.data(), y.data(),
                                     rstd.data(), shape.rows, shape.n, 1e-5f, stream);
        });
  }
}

}  // namespace

int main(int argc, char** argv) {
  const common::BenchArgs args = common::parse_bench_args(
      argc, argv,
      "bench_norm: LayerNorm, RMSNorm and fused add+RMSNorm, every version and the dispatchers.\n"
      "Sizes are MxN (rows x row length); default: 4096x4096,16384x1024,4096x8192,1024x16384,\n"
      "16384x4096,1x8192,32x8192. Dtypes: fp32, bf16, fp16 (default: fp32,bf16).");
  const std::vector<Shape> shapes = parse_shapes(args.sizes);  // a bad entry exits before the table
  common::BenchArgs selected = args;
  if (selected.dtypes.empty()) selected.dtypes = {"fp32", "bf16"};
  common::BenchTable table("bench_norm", selected);
  return table.run([&] {
    const std::string launch_floor = "launch_floor (empty kernel)";
    if (args.wants_version(launch_floor)) {  // --versions matches the names printed
      common::BenchRow floor;
      floor.version = launch_floor;
      floor.shape = "-";
      floor.dtype = "-";
      floor.bytes = 0;
      floor.timing = common::time_gpu([](cudaStream_t stream) {
        empty_kernel<<<1, 32, 0, stream>>>();
        CUDA_CHECK_LAUNCH();
      });
      table.add(floor);
    }
    for (const Shape& shape : shapes) {
      bench_dtype<float>(selected, table, shape);
      bench_dtype<__nv_bfloat16>(selected, table, shape);
      bench_dtype<__half>(selected, table, shape);
    }
  });
}
