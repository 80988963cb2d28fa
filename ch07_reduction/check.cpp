#include "check.h"

#include "cpu_ref.h"

#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"
#include "common/gpu_info.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

namespace check {

double sum_error_bound(int64_t n, double sum_abs, Accumulation accumulation, int64_t run_threads) {
  const double u = 0x1p-24;
  const double nd = static_cast<double>(n);
  if (accumulation == Accumulation::Serial) return 6.0 * std::sqrt(nd) * u * sum_abs;
  const double run = std::ceil(nd / static_cast<double>(std::max<int64_t>(run_threads, 1)));
  const double depth = std::ceil(std::log2(nd + 1.0)) + run + 8.0;
  return depth * u * sum_abs;
}

int64_t tree_run_threads() {
  return int64_t{1024} * common::device_properties().multiProcessorCount;
}

namespace {

struct Run {
  float value = 0;
  common::CheckResult integrity;  // written, guards intact, input unchanged
};

// Exactly reduction.workspace_bytes(n) between guard zones, zero-filled as reduction.h asks: a
// kernel that writes past the scratch memory it asked for changes a guard.
using Workspace = common::GuardedBuffer<unsigned char>;
template <typename T>
Workspace zeroed_workspace(const Reduction<T>& reduction, size_t n) {
  Workspace workspace(reduction.workspace_bytes(static_cast<int64_t>(n)));
  workspace.fill_bytes(0);
  return workspace;
}

// workspace: one that an earlier run used, or nullptr for a new one.
template <typename T>
Run run_once(const Reduction<T>& reduction, const std::vector<T>& x, size_t misalign,
             Workspace* workspace = nullptr) {
  const auto n = static_cast<int64_t>(x.size());
  common::GuardedBuffer<T> in(x.size(), misalign);
  in.upload(x);
  common::GuardedBuffer<float> out(1);
  out.poison();
  std::optional<Workspace> fresh;
  if (workspace == nullptr) workspace = &fresh.emplace(zeroed_workspace(reduction, x.size()));

  reduction.run(in.data(), n, out.data(), workspace->data(), workspace->size());
  CUDA_CHECK(cudaDeviceSynchronize());  // errors raised while the kernel ran surface here

  Run result;
  result.value = out.download()[0];
  if (common::is_poison(result.value))
    result.integrity = common::CheckResult::fail(reduction.name + ": the output was never written");
  result.integrity.and_then(common::check_guards(out, reduction.name + " output"))
      .and_then(common::check_guards(*workspace, reduction.name + " workspace"))
      .and_then(common::check_unchanged(in, x, reduction.name + " input"));
  return result;
}

// Whether every partial sum, in any order, is exact in float: integers whose absolute values
// total at most 2^24. Every partial sum is then an integer no larger than 2^24.
template <typename T>
bool exactly_summable(const std::vector<T>& x, double sum_abs) {
  if (sum_abs > 0x1p24) return false;
  return std::all_of(x.begin(), x.end(), [](const T& v) {
    const double d = common::to_float(v);
    return d == std::floor(d);
  });
}

}  // namespace

template <typename T>
common::CheckResult check_reduction(const Reduction<T>& reduction, const std::vector<T>& x,
                                    size_t misalign) {
  const Run run = run_once(reduction, x, misalign);
  if (!run.integrity.ok) return run.integrity;

  std::ostringstream what;
  what << reduction.name << " (n = " << x.size() << ", input " << misalign
       << " elements past alignment)";
  if (reduction.op == Op::Max) {
    if constexpr (std::is_same_v<T, float>) {
      return common::check_close(std::vector<float>{run.value}, {cpu_ref::max(x)}, 0.0, 0.0,
                                 what.str() + " max");
    } else {
      return common::CheckResult::fail("max is defined for float input only");
    }
  }
  const double exact = cpu_ref::sum(x);
  const double sum_abs = cpu_ref::sum_abs(x);
  // An exact sum leaves no room: one element dropped or added twice anywhere shows.
  const double bound = exactly_summable(x, sum_abs)
                           ? 0.0
                           : sum_error_bound(static_cast<int64_t>(x.size()), sum_abs,
                                             reduction.accumulation, tree_run_threads());
  return common::check_close(std::vector<float>{run.value}, {exact}, bound, 0.0, what.str() + " sum");
}

template <typename T>
common::CheckResult check_deterministic(const Reduction<T>& reduction, const std::vector<T>& x,
                                        int runs) {
  // One workspace for every run, zero-filled once: reduction.h lets a caller reuse it, so each
  // launch must leave it as it found it (the final version's counter back at zero).
  Workspace workspace = zeroed_workspace(reduction, x.size());
  const Run first = run_once(reduction, x, 0, &workspace);
  if (!first.integrity.ok) return first.integrity;
  for (int i = 1; i < runs; ++i) {
    Run again = run_once(reduction, x, 0, &workspace);
    if (!again.integrity.ok) {
      again.integrity.message += " (run " + std::to_string(i) +
                                 ", on the workspace the runs before it used: a launch must leave "
                                 "it as it found it, the counter of TODO 7c back at zero)";
      return again.integrity;
    }
    if (std::memcmp(&again.value, &first.value, sizeof(float)) != 0) {
      std::ostringstream msg;
      msg.precision(9);
      msg << reduction.name << ": run " << i << " gave " << again.value << ", run 0 gave "
          << first.value << ": the result depends on the order in which blocks finish";
      return common::CheckResult::fail(msg.str());
    }
  }
  return common::CheckResult::pass();
}

#define CH07_INSTANTIATE(T)                                                                   \
  template common::CheckResult check_reduction(const Reduction<T>&, const std::vector<T>&,    \
                                               size_t);                                        \
  template common::CheckResult check_deterministic(const Reduction<T>&, const std::vector<T>&, \
                                                   int);
CH07_INSTANTIATE(float)
CH07_INSTANTIATE(__half)
CH07_INSTANTIATE(__nv_bfloat16)
#undef CH07_INSTANTIATE

}  // namespace check
