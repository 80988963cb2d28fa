#include "check.h"

#include "cpu_ref.h"

#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>

namespace check {
namespace {

// The rows of a matrix listed in `rows_wanted` (all rows when it is empty).
template <typename V>
std::vector<V> pick_rows(const std::vector<V>& all, int64_t rows, int64_t cols,
                         const std::vector<int64_t>& rows_wanted) {
  if (rows_wanted.empty()) return all;
  std::vector<V> picked;
  picked.reserve(rows_wanted.size() * cols);
  for (int64_t r : rows_wanted) {
    // A row that is not there would compare nothing and pass: a mistake in the caller.
    if (r < 0 || r >= rows)
      throw std::invalid_argument("sample row " + std::to_string(r) + " outside [0, " +
                                  std::to_string(rows) + ")");
    picked.insert(picked.end(), all.begin() + r * cols, all.begin() + (r + 1) * cols);
  }
  return picked;
}

// Runs `launch`, turning exceptions and asynchronous CUDA errors into a failed result.
template <typename F>
common::CheckResult run_guarded(F&& launch) {
  try {
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    return common::CheckResult::fail(std::string("the kernel threw: ") + e.what());
  }
  return common::CheckResult::pass();
}

common::CheckResult check_row_sums(const std::vector<double>& got_widened,
                                   const std::vector<double>& ref, int64_t cols, double tolerance) {
  const int64_t rows = cols > 0 ? static_cast<int64_t>(ref.size()) / cols : 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (std::isnan(ref[r * cols])) continue;
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      sum += got_widened[r * cols + j];
    if (!(std::fabs(sum - 1.0) <= tolerance)) {
      std::ostringstream msg;
      msg << "row " << r << " (of the rows compared) sums to " << sum << ", not 1 (tolerance "
          << tolerance << ")";
      return common::CheckResult::fail(msg.str());
    }
  }
  return common::CheckResult::pass();
}

}  // namespace

template <typename T>
Tolerance forward_tolerance(Op op, int roundings) {
  const double u = roundings * common::DType<T>::unit_roundoff;
  if (op == Op::LogSoftmax) return {0x1p-18, u + 0x1p-21};
  const double atol = std::is_same_v<T, __half> ? 0x1p-24 : 1e-30;
  return {atol, u + 0x1p-17};
}

template <typename T>
common::CheckResult check_forward(const ForwardRun<T>& run, Op op, const std::vector<T>& x,
                                  int64_t rows, int64_t cols, Placement placement,
                                  const std::vector<int64_t>& sample_rows) {
  const size_t n = x.size();
  common::GuardedBuffer<T> in(n, placement.in_misalign);
  in.upload(x);
  std::vector<T> got;
  common::CheckResult result;
  if (placement.in_place) {
    result = run_guarded([&] { run(in.data(), in.data(), rows, cols); });
    if (!result.ok) return result;
    got = in.download();
    result.and_then(common::check_guards(in, "y (in place)"));
  } else {
    common::GuardedBuffer<T> out(n, placement.out_misalign);
    out.poison();
    result = run_guarded([&] { run(in.data(), out.data(), rows, cols); });
    if (!result.ok) return result;
    got = out.download();
    result.and_then(common::check_guards(out, "y"));
    result.and_then(common::check_unchanged(in, x, "the input x"));
  }
  if (!result.ok) return result;
  // Every element written, including the rows not compared.
  const int64_t unwritten = common::first_unwritten(got);
  if (unwritten >= 0)
    return common::CheckResult::fail("y: element " + std::to_string(unwritten) + " (row " +
                                     std::to_string(unwritten / cols) +
                                     ") was never written (still holds the poison pattern)");

  const std::vector<T> x_rows = pick_rows(x, rows, cols, sample_rows);
  result.and_then(compare_forward(x_rows, pick_rows(got, rows, cols, sample_rows), op,
                                  static_cast<int64_t>(x_rows.size()) / cols, cols));
  return result;
}

template <typename T>
common::CheckResult compare_forward(const std::vector<T>& x, const std::vector<T>& got, Op op,
                                    int64_t rows, int64_t cols, int roundings) {
  common::CheckResult result;
  const std::vector<double> x_widened = common::widen(x);
  std::vector<double> ref = op == Op::Softmax ? cpu_ref::softmax(x_widened, rows, cols)
                                              : cpu_ref::log_softmax(x_widened, rows, cols);
  // Half's range ends at 65504: a log_softmax below -65520 correctly rounds to -inf.
  if (std::is_same_v<T, __half>)
    for (double& r : ref)
      if (std::fabs(r) >= 65520.0) r = std::copysign(INFINITY, r);
  const Tolerance tol = forward_tolerance<T>(op, roundings);
  result.and_then(common::check_close(got, ref, tol.atol, tol.rtol,
                                      op == Op::Softmax ? "softmax" : "log_softmax"));
  if (op == Op::Softmax) {
    // A -inf entry of a row that is not NaN gives an exact zero (softmax.h), not merely one
    // within atol: a clamp such as exp(max(x - m, -80)) would pass the tolerance above.
    for (size_t i = 0; i < x.size(); ++i) {
      if (x_widened[i] == -INFINITY && !std::isnan(ref[i]) && common::to_float(got[i]) != 0.0f) {
        std::ostringstream msg;
        msg << "softmax: element " << i % static_cast<size_t>(cols) << " of row "
            << i / static_cast<size_t>(cols) << " (of the rows compared) is -inf in x, so its "
            << "probability is exactly 0, got " << common::to_float(got[i]);
        result.and_then(common::CheckResult::fail(msg.str()));
        break;
      }
    }
    result.and_then(check_row_sums(common::widen(got), ref, cols,
                                   tol.rtol + static_cast<double>(cols) * tol.atol));
    if (std::is_same_v<T, float>) {
      const double rel_l2 = common::relative_l2_error(got, ref);
      if (!(rel_l2 <= 0x1p-18)) {
        std::ostringstream msg;
        msg << "softmax: relative L2 error " << rel_l2 << " over 2^-18";
        result.and_then(common::CheckResult::fail(msg.str()));
      }
    }
  }
  return result;
}

template <typename T>
common::CheckResult check_backward(const BackwardRun<T>& run, const std::vector<T>& y,
                                   const std::vector<T>& dy, int64_t rows, int64_t cols,
                                   Placement placement) {
  const size_t n = y.size();
  common::GuardedBuffer<T> y_dev(n, placement.in_misalign);
  common::GuardedBuffer<T> dy_dev(n, placement.out_misalign);
  y_dev.upload(y);
  dy_dev.upload(dy);
  std::vector<T> got;
  common::CheckResult result;
  if (placement.in_place) {
    common::GuardedBuffer<T>& dx_dev = placement.dx_on_y ? y_dev : dy_dev;
    result = run_guarded([&] { run(y_dev.data(), dy_dev.data(), dx_dev.data(), rows, cols); });
    if (!result.ok) return result;
    got = dx_dev.download();
    result.and_then(common::check_guards(
        dx_dev, placement.dx_on_y ? "dx (in place on y)" : "dx (in place on dy)"));
    if (placement.dx_on_y) result.and_then(common::check_unchanged(dy_dev, dy, "the input dy"));
  } else {
    const size_t dx_misalign = placement.dx_misalign >= 0
                                   ? static_cast<size_t>(placement.dx_misalign)
                                   : (placement.in_misalign + placement.out_misalign + 1) % 8;
    common::GuardedBuffer<T> dx_dev(n, dx_misalign);
    dx_dev.poison();
    result = run_guarded([&] { run(y_dev.data(), dy_dev.data(), dx_dev.data(), rows, cols); });
    if (!result.ok) return result;
    got = dx_dev.download();
    result.and_then(common::check_guards(dx_dev, "dx"));
    result.and_then(common::check_unchanged(dy_dev, dy, "the input dy"));
  }
  if (!(placement.in_place && placement.dx_on_y))
    result.and_then(common::check_unchanged(y_dev, y, "the input y"));
  if (!result.ok) return result;
  return compare_backward(y, dy, got, rows, cols);
}

template <typename T>
common::CheckResult compare_backward(const std::vector<T>& y, const std::vector<T>& dy,
                                     const std::vector<T>& got, int64_t rows, int64_t cols) {
  common::CheckResult result;
  const std::vector<double> yw = common::widen(y), dyw = common::widen(dy);
  const std::vector<double> ref = cpu_ref::softmax_backward(yw, dyw, rows, cols);
  const double u = common::DType<T>::unit_roundoff;
  if (got.size() != ref.size())
    return common::CheckResult::fail("dx: " + std::to_string(got.size()) + " elements, expected " +
                                     std::to_string(ref.size()));
  // Each row against its own bound: a row with a dominant entry (max|y| near 1) allows more.
  for (int64_t r = 0; r < rows && result.ok; ++r) {
    const size_t begin = static_cast<size_t>(r * cols), end = begin + static_cast<size_t>(cols);
    double max_y = 0, max_dy = 0, sum_abs = 0, dot = 0;
    for (size_t j = begin; j < end; ++j) {
      max_y = std::max(max_y, std::fabs(yw[j]));
      max_dy = std::max(max_dy, std::fabs(dyw[j]));
      sum_abs += std::fabs(yw[j] * dyw[j]);
      dot += yw[j] * dyw[j];
    }
    const double atol = max_y * (0x1p-16 * sum_abs + 0x1p-21 * (max_dy + std::fabs(dot)));
    result.and_then(common::check_close(std::vector<T>(got.begin() + begin, got.begin() + end),
                                        std::vector<double>(ref.begin() + begin, ref.begin() + end),
                                        atol, u + 0x1p-21, "dx, row " + std::to_string(r)));
  }
  return result;
}

template <typename T>
std::vector<T> logits(int64_t rows, int64_t cols, uint64_t seed) {
  return common::convert<T>(common::gen::logits(static_cast<size_t>(rows * cols), seed));
}

template <typename T>
std::vector<T> flat(int64_t rows, int64_t cols, uint64_t seed) {
  return common::convert<T>(common::gen::uniform(static_cast<size_t>(rows * cols), seed));
}

template <typename T>
std::vector<T> special_rows(int64_t cols, uint64_t seed) {
  const size_t c = static_cast<size_t>(cols);
  std::vector<float> all;
  auto add_row = [&](std::vector<float> row) { all.insert(all.end(), row.begin(), row.end()); };
  common::gen::Rng rng(seed);
  add_row(std::vector<float>(c, -INFINITY));
  {
    auto row = common::gen::logits(c, seed + 1);
    common::gen::sprinkle(row, -INFINITY, c / 4, seed + 2);
    row[rng.below(c)] = 3.0f;  // at least one finite entry
    add_row(row);
  }
  {
    auto row = common::gen::logits(c, seed + 3);
    row[rng.below(c)] = NAN;
    add_row(row);
  }
  {
    auto row = common::gen::logits(c, seed + 4);
    row[rng.below(c)] = INFINITY;
    add_row(row);
  }
  const float huge = std::is_same_v<T, __half> ? 6.0e4f : 1.0e30f;
  add_row(common::gen::uniform(c, seed + 5, -huge, huge));
  add_row(std::vector<float>(c, 0.75f));
  {
    std::vector<float> row(c, -INFINITY);
    row[rng.below(c)] = -5.0f;
    add_row(row);
  }
  {  // a NaN among -inf, the finite entries 16 elements away: the thread that reads the NaN
     // reads no finite value, and a maximum taken with fmaxf skips the NaN
    std::vector<float> row(c, -INFINITY);
    const size_t nan_at = rng.below(c);
    row[(nan_at + 16) % c] = 2.0f;
    row[(nan_at + c - 16 % c) % c] = -1.0f;
    row[nan_at] = NAN;
    add_row(row);
  }
  add_row(common::gen::logits(c, seed + 6));
  return common::convert<T>(all);
}

template <typename T>
void backward_inputs(int64_t rows, int64_t cols, uint64_t seed, std::vector<T>& y,
                     std::vector<T>& dy) {
  const auto x = common::gen::logits(static_cast<size_t>(rows * cols), seed);
  std::vector<float> probabilities(x.size());
  const auto ref = cpu_ref::softmax(common::widen(x), rows, cols);
  for (size_t i = 0; i < x.size(); ++i)
    probabilities[i] = static_cast<float>(ref[i]);
  y = common::convert<T>(probabilities);
  dy = common::convert<T>(common::gen::normal(x.size(), seed + 1));
}

#define INSTANTIATE(T)                                                                           \
  template Tolerance forward_tolerance<T>(Op, int);                                              \
  template common::CheckResult check_forward<T>(const ForwardRun<T>&, Op, const std::vector<T>&, \
                                                int64_t, int64_t, Placement,                     \
                                                const std::vector<int64_t>&);                    \
  template common::CheckResult check_backward<T>(const BackwardRun<T>&, const std::vector<T>&,   \
                                                 const std::vector<T>&, int64_t, int64_t,        \
                                                 Placement);                                     \
  template common::CheckResult compare_forward<T>(const std::vector<T>&, const std::vector<T>&,  \
                                                  Op, int64_t, int64_t, int);                    \
  template common::CheckResult compare_backward<T>(const std::vector<T>&, const std::vector<T>&, \
                                                   const std::vector<T>&, int64_t, int64_t);     \
  template std::vector<T> logits<T>(int64_t, int64_t, uint64_t);                                 \
  template std::vector<T> flat<T>(int64_t, int64_t, uint64_t);                                   \
  template std::vector<T> special_rows<T>(int64_t, uint64_t);                                    \
  template void backward_inputs<T>(int64_t, int64_t, uint64_t, std::vector<T>&, std::vector<T>&);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace check
