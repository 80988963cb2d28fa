#include "check.h"

#include "cpu_ref.h"

#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <memory>
#include <sstream>
#include <type_traits>

namespace check {
namespace {

constexpr double kFloatRoundoff = 0x1p-24;

// The floor of every bound of y and of the residual: half's smallest subnormal, one step of its
// grid near zero; for float and bf16 the smallest normal float, below which a result may come out
// flushed to zero.
template <typename T>
double tiny() {
  return std::is_same_v<T, __half> ? 0x1p-24 : 0x1p-126;
}

bool is_finite(double v) {
  return std::isfinite(v);
}

enum class NonFinite {
  Exact,     // NaN where the reference is NaN, the same infinity where it is infinite
  AnyOfThem  // any non-finite value where the reference is non-finite
};

// got[i] against ref[i] ± tol[i] for i < count; element i is (row, col) = i / n + first_row,
// i % n in messages.
template <typename G>
common::CheckResult compare(const G* got, const double* ref, const double* tol, size_t count,
                            int64_t n, int64_t first_row, const std::string& what,
                            NonFinite non_finite = NonFinite::Exact) {
  auto where = [&](size_t i) {
    std::ostringstream s;
    s << "row " << first_row + static_cast<int64_t>(i) / n << ", column "
      << static_cast<int64_t>(i) % n;
    return s.str();
  };
  for (size_t i = 0; i < count; ++i)
    if (common::is_poison(got[i]))
      return common::CheckResult::fail(what + ": element at " + where(i) +
                                       " was never written (still holds the poison pattern)");
  size_t bad = 0;
  std::ostringstream first;
  first.precision(9);
  for (size_t i = 0; i < count; ++i) {
    const double g = common::to_double(got[i]);
    bool ok;
    if (non_finite == NonFinite::AnyOfThem && !is_finite(ref[i]))
      ok = !is_finite(g);
    else
      ok = common::close_or_same_special(g, ref[i], tol[i]);
    if (ok) continue;
    if (bad < 5)
      first << "\n  " << where(i) << ": got " << g << ", expected " << ref[i] << " (tolerance "
            << tol[i] << ")";
    ++bad;
  }
  if (bad == 0) return common::CheckResult::pass();
  std::ostringstream msg;
  msg << what << ": " << bad << " of " << count
      << " elements out of tolerance; first:" << first.str();
  return common::CheckResult::fail(msg.str());
}

template <typename T>
double param(const std::vector<T>& p, int64_t j, double absent) {
  return p.empty() ? absent : static_cast<double>(common::to_float(p[static_cast<size_t>(j)]));
}

// Device copies of a problem's buffers at the given misalignments, outputs poisoned.
template <typename T>
struct DeviceProblem {
  common::GuardedBuffer<T> x, y, residual, gamma, beta;
  common::GuardedBuffer<float> mean, rstd;
  DeviceProblem(const Problem<T>& p, const Placement& at)
      : x(p.x.size(), at.x),
        y(p.x.size(), at.y),
        residual(p.residual.size(), at.residual),
        gamma(p.gamma.size(), at.params),
        beta(p.beta.size(), at.params),
        mean(static_cast<size_t>(p.rows)),
        rstd(static_cast<size_t>(p.rows)) {
    x.upload(p.x);
    residual.upload(p.residual);
    gamma.upload(p.gamma);
    beta.upload(p.beta);
    y.poison();
    mean.poison();
    rstd.poison();
  }
  // The output buffer: x's own when the run is in place.
  common::GuardedBuffer<T>& out(const Placement& at) { return at.in_place ? x : y; }
  const T* gamma_or_null() const { return gamma.size() ? gamma.data() : nullptr; }
  const T* beta_or_null() const { return beta.size() ? beta.data() : nullptr; }
  float* mean_or_null(const Placement& at) { return at.statistics ? mean.data() : nullptr; }
  float* rstd_or_null(const Placement& at) { return at.statistics ? rstd.data() : nullptr; }
  // A statistic as the kernel left it, or nothing to compare when it was not asked for.
  static std::vector<float> statistics(const common::GuardedBuffer<float>& buffer,
                                       const Placement& at) {
    return at.statistics ? buffer.download() : std::vector<float>{};
  }
};

// x after the run: unchanged, or (in place) overwritten by y, whose comparison checks it.
template <typename T>
common::CheckResult input_x_kept(const common::GuardedBuffer<T>& x, const std::vector<T>& want,
                                 const Placement& at, const std::string& what) {
  return at.in_place ? common::check_guards(x, what + " x (holding y)")
                     : common::check_unchanged(x, want, what + " input x");
}

std::string label(const std::string& name, const std::string& problem, const Placement& at) {
  return name + " (" + problem + ", " + describe(at) + ")";
}

}  // namespace

const char* data_name(Data data) {
  switch (data) {
    case Data::Normal:
      return "normal data";
    case Data::LargeMean:
      return "large-mean data";
    case Data::HugeMean:
      return "huge-mean data";
    case Data::ConstantRows:
      return "constant rows";
    case Data::NonFinite:
      return "NaN/inf rows";
  }
  return "?";
}

std::string describe(const Placement& p) {
  std::ostringstream s;
  s << "misaligned by x " << p.x;
  if (p.in_place)
    s << ", y in place of x";
  else
    s << ", y " << p.y;
  s << ", residual " << p.residual << ", params " << p.params << " elements";
  if (!p.statistics) s << "; mean and rstd not asked for";
  return s.str();
}

template <typename T>
std::string Problem<T>::describe() const {
  std::ostringstream s;
  s << common::DType<T>::name << " M = " << rows << ", N = " << n << ", " << data_name(data)
    << (gamma.empty() ? ", no gamma" : "") << (beta.empty() ? ", no beta" : "")
    << ", eps = " << eps;
  return s.str();
}

template <typename T>
Problem<T> make_problem(int64_t rows, int64_t n, Data data, bool with_gamma, bool with_beta,
                        bool with_residual, uint64_t seed) {
  Problem<T> p;
  p.rows = rows;
  p.n = n;
  p.data = data;
  const auto count = static_cast<size_t>(rows * n);
  std::vector<float> x;
  if (data == Data::LargeMean) {
    x = common::gen::normal(count, seed, std::is_same_v<T, float> ? 1e4f : 100.0f, 1.0f);
  } else if (data == Data::HugeMean) {
    if (!std::is_same_v<T, float>)
      throw std::invalid_argument("huge-mean data is float only: it does not fit in 16 bits");
    x = common::gen::normal(count, seed, 2e19f, 1e16f);
  } else {
    x = common::gen::normal(count, seed, 0.5f, 2.0f);
  }
  if (data == Data::ConstantRows) {
    // -0.75, 0, 0.75, 1.5, 2.25 in turn (0 in row 2, so that every test of three rows or more
    // has a row of zeros: its RMS is 0 and only eps keeps rstd finite). Multiples of 0.75 up to
    // 3, so that every partial sum, and every partial sum of squares, over a row of up to 2^16
    // + 3 of them is exact in float: the kernels' mean is exact and x − mean is exactly 0.
    for (int64_t r = 0; r < rows; r += 2) {
      const float c = 0.75f * static_cast<float>((r / 2) % 5) - 0.75f;
      std::fill(x.begin() + r * n, x.begin() + (r + 1) * n, c);
    }
  }
  if (data == Data::NonFinite) {
    if (rows > 0) x[static_cast<size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
    if (rows > 1) x[static_cast<size_t>(n + n - 1)] = std::numeric_limits<float>::infinity();
    if (rows > 2) x[static_cast<size_t>(2 * n)] = -std::numeric_limits<float>::infinity();
  }
  p.x = common::convert<T>(x);
  if (with_residual) {
    std::vector<float> residual = common::gen::normal(count, seed + 1, -0.25f, 1.0f);
    // The fused add normalizes r = x + residual: on the constant rows the residual adds 0.75, so
    // that r is constant too (0 in row 0, up to 3).
    if (data == Data::ConstantRows)
      for (int64_t r = 0; r < rows; r += 2)
        std::fill(residual.begin() + r * n, residual.begin() + (r + 1) * n, 0.75f);
    p.residual = common::convert<T>(residual);
  }
  if (with_gamma)
    p.gamma =
        common::convert<T>(common::gen::normal(static_cast<size_t>(n), seed + 2, 1.0f, 0.25f));
  if (with_beta)
    p.beta = common::convert<T>(common::gen::normal(static_cast<size_t>(n), seed + 3, 0.0f, 0.5f));
  return p;
}

double stats_error_factor(int64_t n) {
  const double nd = static_cast<double>(n);
  return 2.0 * (std::log2(nd + 1.0) + std::sqrt(nd / 32.0) + 8.0);
}

template <typename T>
Expected expect_layernorm(const Problem<T>& p) {
  const cpu_ref::NormOutput ref =
      cpu_ref::layernorm(p.x, p.gamma, p.beta, p.rows, p.n, static_cast<double>(p.eps));
  const double u_t = common::DType<T>::unit_roundoff;
  const double k = stats_error_factor(p.n) * kFloatRoundoff;
  Expected e;
  e.y = ref.y;
  e.y_tol.resize(ref.y.size());
  e.mean = ref.mean;
  e.mean_tol.resize(ref.mean.size());
  e.rstd = ref.rstd;
  e.rstd_tol.resize(ref.rstd.size());
  for (int64_t r = 0; r < p.rows; ++r) {
    const double mean_abs = cpu_ref::mean_abs(p.x.data() + r * p.n, p.n);
    const double rstd = ref.rstd[static_cast<size_t>(r)];
    const double eps_row = k * (1.0 + mean_abs * rstd);
    e.mean_tol[static_cast<size_t>(r)] = k * mean_abs + 0x1p-126;
    e.rstd_tol[static_cast<size_t>(r)] = 2.0 * eps_row * rstd;
    for (int64_t j = 0; j < p.n; ++j) {
      const auto i = static_cast<size_t>(r * p.n + j);
      const double x = static_cast<double>(common::to_float(p.x[i]));
      const double z = std::fabs((x - ref.mean[static_cast<size_t>(r)]) * rstd);
      e.y_tol[i] =
          u_t * std::fabs(ref.y[i]) +
          (1.0 + u_t) *
              (std::fabs(param(p.gamma, j, 1.0)) * (1.0 + z) + std::fabs(param(p.beta, j, 0.0))) *
              eps_row +
          tiny<T>();
    }
  }
  return e;
}

namespace {

Expected expect_rms_from(const cpu_ref::NormOutput& ref, int64_t n, double u_t, double tiny_t) {
  const double eps_row = stats_error_factor(n) * kFloatRoundoff;
  Expected e;
  e.y = ref.y;
  e.y_tol.resize(ref.y.size());
  for (size_t i = 0; i < ref.y.size(); ++i)
    e.y_tol[i] = (u_t + (1.0 + u_t) * eps_row) * std::fabs(ref.y[i]) + tiny_t;
  e.rstd = ref.rstd;
  e.rstd_tol.resize(ref.rstd.size());
  for (size_t r = 0; r < ref.rstd.size(); ++r)
    e.rstd_tol[r] = 2.0 * eps_row * ref.rstd[r];
  return e;
}

}  // namespace

template <typename T>
Expected expect_rmsnorm(const Problem<T>& p) {
  return expect_rms_from(cpu_ref::rmsnorm(p.x, p.gamma, p.rows, p.n, static_cast<double>(p.eps)),
                         p.n, common::DType<T>::unit_roundoff, tiny<T>());
}

template <typename T>
Expected expect_add_rmsnorm(const Problem<T>& p) {
  const auto ref =
      cpu_ref::add_rmsnorm(p.x, p.residual, p.gamma, p.rows, p.n, static_cast<double>(p.eps));
  const double u_t = common::DType<T>::unit_roundoff;
  Expected e = expect_rms_from(ref.norm, p.n, u_t, tiny<T>());
  e.residual = common::widen(ref.residual);
  e.residual_tol.resize(e.residual.size());
  for (size_t i = 0; i < e.residual.size(); ++i)
    e.residual_tol[i] = 0.5 * u_t * std::fabs(e.residual[i]) + tiny<T>();
  return e;
}

template <typename T>
common::CheckResult compare_outputs(const Expected& e, const std::vector<T>& y,
                                    const std::vector<float>& mean, const std::vector<float>& rstd,
                                    const std::vector<T>& residual, int64_t n, int64_t first_row,
                                    const std::string& what) {
  // LayerNorm's expectation is the one with a mean. Its statistics may be any non-finite value
  // where the reference's are (check.h); RMSNorm's rstd follows its formula exactly.
  const bool layernorm = !e.mean.empty();
  const NonFinite stats = layernorm ? NonFinite::AnyOfThem : NonFinite::Exact;
  common::CheckResult result;
  // The fused add's residual is not poisoned, since it is an input: a row the kernel skipped
  // still holds the residual, which differs from x + residual, so this comparison catches it.
  if (!e.residual.empty())
    result = compare(residual.data(), e.residual.data(), e.residual_tol.data(), residual.size(), n,
                     first_row, what + " residual (x + residual)");
  result.and_then(
      compare(y.data(), e.y.data(), e.y_tol.data(), y.size(), n, first_row, what + " y"));
  if (layernorm)
    result.and_then(compare(mean.data(), e.mean.data(), e.mean_tol.data(), mean.size(), 1,
                            first_row, what + " mean", stats));
  result.and_then(compare(rstd.data(), e.rstd.data(), e.rstd_tol.data(), rstd.size(), 1, first_row,
                          what + " rstd", stats));
  return result;
}

template <typename T>
common::CheckResult check_layernorm(const std::string& name, const LayerNormRun<T>& run,
                                    const Problem<T>& p, const Expected& e, const Placement& at) {
  DeviceProblem<T> d(p, at);
  run(d.x.data(), d.gamma_or_null(), d.beta_or_null(), d.out(at).data(), d.mean_or_null(at),
      d.rstd_or_null(at), p.rows, p.n, p.eps);
  CUDA_CHECK(cudaDeviceSynchronize());  // errors raised while the kernel ran surface here
  const std::string what = label(name, p.describe(), at);
  common::CheckResult result =
      compare_outputs(e, d.out(at).download(), d.statistics(d.mean, at), d.statistics(d.rstd, at),
                      std::vector<T>{}, p.n, 0, what);
  result.and_then(common::check_guards(d.y, what + " y"))
      .and_then(common::check_guards(d.mean, what + " mean"))
      .and_then(common::check_guards(d.rstd, what + " rstd"))
      .and_then(input_x_kept(d.x, p.x, at, what))
      .and_then(common::check_unchanged(d.gamma, p.gamma, what + " gamma"))
      .and_then(common::check_unchanged(d.beta, p.beta, what + " beta"));
  return result;
}

template <typename T>
common::CheckResult check_rmsnorm(const std::string& name, const RmsNormRun<T>& run,
                                  const Problem<T>& p, const Expected& e, const Placement& at) {
  DeviceProblem<T> d(p, at);
  run(d.x.data(), d.gamma_or_null(), d.out(at).data(), d.rstd_or_null(at), p.rows, p.n, p.eps);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string what = label(name, p.describe(), at);
  common::CheckResult result =
      compare_outputs(e, d.out(at).download(), std::vector<float>{}, d.statistics(d.rstd, at),
                      std::vector<T>{}, p.n, 0, what);
  result.and_then(common::check_guards(d.y, what + " y"))
      .and_then(common::check_guards(d.rstd, what + " rstd"))
      .and_then(input_x_kept(d.x, p.x, at, what))
      .and_then(common::check_unchanged(d.gamma, p.gamma, what + " gamma"));
  return result;
}

template <typename T>
common::CheckResult check_add_rmsnorm(const std::string& name, const AddRmsNormRun<T>& run,
                                      const Problem<T>& p, const Expected& e, const Placement& at) {
  DeviceProblem<T> d(p, at);
  run(d.x.data(), d.residual.data(), d.gamma_or_null(), d.out(at).data(), d.rstd_or_null(at),
      p.rows, p.n, p.eps);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string what = label(name, p.describe(), at);
  common::CheckResult result =
      compare_outputs(e, d.out(at).download(), std::vector<float>{}, d.statistics(d.rstd, at),
                      d.residual.download(), p.n, 0, what);
  result.and_then(common::check_guards(d.y, what + " y"))
      .and_then(common::check_guards(d.residual, what + " residual"))
      .and_then(common::check_guards(d.rstd, what + " rstd"))
      .and_then(input_x_kept(d.x, p.x, at, what))
      .and_then(common::check_unchanged(d.gamma, p.gamma, what + " gamma"));
  return result;
}

namespace {

// A device matrix of `rows` rows repeating the pool's rows cyclically: the pool is uploaded once,
// then the filled part is doubled with device-to-device copies (the filled row count stays a
// multiple of the pool's, so row r holds pool row r % pool_rows).
template <typename T>
void tile_rows(T* dst, const std::vector<T>& pool, int64_t pool_rows, int64_t rows, int64_t n) {
  CUDA_CHECK(cudaMemcpy(dst, pool.data(), pool.size() * sizeof(T), cudaMemcpyHostToDevice));
  int64_t filled = pool_rows;
  while (filled < rows) {
    const int64_t copy = std::min(filled, rows - filled);
    CUDA_CHECK(cudaMemcpy(dst + filled * n, dst, static_cast<size_t>(copy * n) * sizeof(T),
                          cudaMemcpyDeviceToDevice));
    filled += copy;
  }
}

std::vector<int64_t> sample_rows(int64_t rows, int64_t n) {
  const int64_t boundary = (int64_t{1} << 31) / n;  // the row holding element 2^31
  std::vector<int64_t> sample{0, 1, boundary - 1, boundary, boundary + 1, rows - 2, rows - 1};
  sample.erase(
      std::remove_if(sample.begin(), sample.end(), [&](int64_t r) { return r < 0 || r >= rows; }),
      sample.end());
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  return sample;
}

enum class HugeOp { LayerNorm, RmsNorm, AddRmsNorm };

template <typename T>
using HugeRun = std::function<void(const T* x, T* residual, const T* gamma, const T* beta, T* y,
                                   float* mean, float* rstd)>;

template <typename T>
common::CheckResult check_huge(const std::string& name, int64_t rows, int64_t n, HugeOp op,
                               const HugeRun<T>& run) {
  constexpr int64_t kPoolRows = 7;
  const bool layernorm = op == HugeOp::LayerNorm, fused = op == HugeOp::AddRmsNorm;
  const Problem<T> pool = make_problem<T>(kPoolRows, n, Data::Normal, true, layernorm, fused, 99);
  const Expected e = layernorm ? expect_layernorm(pool)
                     : fused   ? expect_add_rmsnorm(pool)
                               : expect_rmsnorm(pool);
  const auto count = static_cast<size_t>(rows * n);
  common::GuardedBuffer<T> x(count), y(count), residual(fused ? count : 0);
  common::GuardedBuffer<T> gamma(static_cast<size_t>(n)), beta(static_cast<size_t>(n));
  common::GuardedBuffer<float> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
  tile_rows(x.data(), pool.x, kPoolRows, rows, n);
  if (fused) tile_rows(residual.data(), pool.residual, kPoolRows, rows, n);
  gamma.upload(pool.gamma);
  if (layernorm) beta.upload(pool.beta);
  y.poison();
  mean.poison();
  rstd.poison();
  run(x.data(), fused ? residual.data() : nullptr, gamma.data(), layernorm ? beta.data() : nullptr,
      y.data(), layernorm ? mean.data() : nullptr, rstd.data());
  CUDA_CHECK(cudaDeviceSynchronize());

  std::ostringstream what_s;
  what_s << name << " (" << common::DType<T>::name << " M = " << rows << ", N = " << n
         << ", M·N = " << rows * n << ")";
  const std::string what = what_s.str();
  // The input first, row by row against the pool row it repeats (in a scope of its own, so that
  // only one matrix at a time is held on the host).
  common::CheckResult input = common::check_guards(x, what + " input x");
  {
    const std::vector<T> x_all = x.download();
    for (int64_t r = 0; r < rows; ++r)
      if (std::memcmp(x_all.data() + r * n, pool.x.data() + (r % kPoolRows) * n,
                      static_cast<size_t>(n) * sizeof(T)) != 0) {
        input.and_then(common::CheckResult::fail(what + " input x: row " + std::to_string(r) +
                                                 " was modified"));
        break;
      }
  }
  // The fused add's residual (x + residual, written back), every row: it held its input before
  // the run, so a row the kernel skipped differs from x + residual where it is not poisoned.
  common::CheckResult written_back;
  if (fused) {
    written_back = common::check_guards(residual, what + " residual");
    const std::vector<T> r_all = residual.download();
    for (int64_t r = 0; r < rows && written_back.ok; ++r) {
      const int64_t pr = r % kPoolRows;
      written_back.and_then(compare(r_all.data() + r * n, e.residual.data() + pr * n,
                                    e.residual_tol.data() + pr * n, static_cast<size_t>(n), n, r,
                                    what + " residual (x + residual)"));
    }
  }
  // Every element written (a kernel whose offsets wrap at 2^31 may leave rows untouched), then
  // the sampled rows compared with the pool's reference.
  const std::vector<T> y_all = y.download();
  const std::vector<float> mean_all = mean.download(), rstd_all = rstd.download();
  common::CheckResult result;
  const auto unwritten = [&](int64_t at, int64_t per_row, const std::string& output) {
    if (at >= 0)
      result.and_then(common::CheckResult::fail(
          what + " " + output + ": element " + std::to_string(at) + " (row " +
          std::to_string(at / per_row) + ") was never written"));
  };
  unwritten(common::first_unwritten(y_all), n, "y");
  if (layernorm) unwritten(common::first_unwritten(mean_all), 1, "mean");
  unwritten(common::first_unwritten(rstd_all), 1, "rstd");
  for (int64_t r : sample_rows(rows, n)) {
    const int64_t pr = r % kPoolRows;
    result.and_then(compare(y_all.data() + r * n, e.y.data() + pr * n, e.y_tol.data() + pr * n,
                            static_cast<size_t>(n), n, r, what + " y"));
    if (layernorm)
      result.and_then(compare(mean_all.data() + r, e.mean.data() + pr, e.mean_tol.data() + pr, 1, 1,
                              r, what + " mean"));
    result.and_then(compare(rstd_all.data() + r, e.rstd.data() + pr, e.rstd_tol.data() + pr, 1, 1,
                            r, what + " rstd"));
  }
  result.and_then(common::check_guards(y, what + " y"))
      .and_then(common::check_guards(mean, what + " mean"))
      .and_then(common::check_guards(rstd, what + " rstd"))
      .and_then(input)
      .and_then(written_back)
      .and_then(common::check_unchanged(gamma, pool.gamma, what + " gamma"));
  if (layernorm) result.and_then(common::check_unchanged(beta, pool.beta, what + " beta"));
  return result;
}

}  // namespace

template <typename T>
common::CheckResult check_layernorm_huge(const std::string& name, const LayerNormRun<T>& run,
                                         int64_t rows, int64_t n) {
  return check_huge<T>(name, rows, n, HugeOp::LayerNorm,
                       [&](const T* x, T*, const T* g, const T* b, T* y, float* mean, float* rstd) {
                         run(x, g, b, y, mean, rstd, rows, n, 1e-5f);
                       });
}

template <typename T>
common::CheckResult check_rmsnorm_huge(const std::string& name, const RmsNormRun<T>& run,
                                       int64_t rows, int64_t n) {
  return check_huge<T>(name, rows, n, HugeOp::RmsNorm,
                       [&](const T* x, T*, const T* g, const T*, T* y, float*, float* rstd) {
                         run(x, g, y, rstd, rows, n, 1e-5f);
                       });
}

template <typename T>
common::CheckResult check_add_rmsnorm_huge(const std::string& name, const AddRmsNormRun<T>& run,
                                           int64_t rows, int64_t n) {
  return check_huge<T>(name, rows, n, HugeOp::AddRmsNorm,
                       [&](const T* x, T* r, const T* g, const T*, T* y, float*, float* rstd) {
                         run(x, r, g, y, rstd, rows, n, 1e-5f);
                       });
}

#define CH10_INSTANTIATE(T)                                                                        \
  template struct Problem<T>;                                                                      \
  template Problem<T> make_problem<T>(int64_t, int64_t, Data, bool, bool, bool, uint64_t);         \
  template Expected expect_layernorm(const Problem<T>&);                                           \
  template Expected expect_rmsnorm(const Problem<T>&);                                             \
  template Expected expect_add_rmsnorm(const Problem<T>&);                                         \
  template common::CheckResult compare_outputs(                                                    \
      const Expected&, const std::vector<T>&, const std::vector<float>&,                           \
      const std::vector<float>&, const std::vector<T>&, int64_t, int64_t, const std::string&);     \
  template common::CheckResult check_layernorm(const std::string&, const LayerNormRun<T>&,         \
                                               const Problem<T>&, const Expected&,                 \
                                               const Placement&);                                  \
  template common::CheckResult check_rmsnorm(const std::string&, const RmsNormRun<T>&,             \
                                             const Problem<T>&, const Expected&,                   \
                                             const Placement&);                                    \
  template common::CheckResult check_add_rmsnorm(const std::string&, const AddRmsNormRun<T>&,      \
                                                 const Problem<T>&, const Expected&,               \
                                                 const Placement&);                                \
  template common::CheckResult check_layernorm_huge(const std::string&, const LayerNormRun<T>&,    \
                                                    int64_t, int64_t);                             \
  template common::CheckResult check_rmsnorm_huge(const std::string&, const RmsNormRun<T>&,        \
                                                  int64_t, int64_t);                               \
  template common::CheckResult check_add_rmsnorm_huge(const std::string&, const AddRmsNormRun<T>&, \
                                                      int64_t, int64_t);
CH10_INSTANTIATE(float)
CH10_INSTANTIATE(__half)
CH10_INSTANTIATE(__nv_bfloat16)
#undef CH10_INSTANTIATE

}  // namespace check
