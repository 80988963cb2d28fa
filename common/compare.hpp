// Comparing GPU results with a double-precision CPU reference. Every check returns a CheckResult
// whose message names the first offending elements, so a failing test says what went wrong.
#pragma once

#include "device_buffer.hpp"
#include "dtype.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace common {

struct CheckResult {
  bool ok = true;
  std::string message;  // empty when ok

  static CheckResult pass() { return {}; }
  static CheckResult fail(std::string why) { return {false, std::move(why)}; }
  // The first failure wins; `and_then` chains checks.
  CheckResult& and_then(const CheckResult& next) {
    if (ok && !next.ok) *this = next;
    return *this;
  }
};

// NaN equals NaN, an infinity equals the same infinity; finite values must be close.
inline bool close_or_same_special(double got, double want, double tolerance) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tolerance;
}

// ‖got − ref‖₂ / ‖ref‖₂ over the finite reference values (NaN/inf are checked elementwise), over
// the elements both hold (callers compare the sizes first). With no finite non-zero reference
// value it is the absolute ‖got − ref‖₂. NaN in got gives NaN: test it with !(error <= bound).
template <typename T>
double relative_l2_error(const std::vector<T>& got, const std::vector<double>& ref) {
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    if (!std::isfinite(ref[i])) continue;
    const double d = static_cast<double>(to_float(got[i])) - ref[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
  }
  return ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
}

// Any element type, or an already-double reference value, as double.
inline double to_double(double v) {
  return v;
}
template <typename T>
double to_double(T v) {
  return static_cast<double>(to_float(v));
}

// max |got − ref| over the finite reference values (NaN/inf references are checked elementwise);
// NaN if got is NaN where the reference is finite.
template <typename T>
double max_abs_error(const std::vector<T>& got, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    if (!std::isfinite(ref[i])) continue;
    const double d = std::fabs(to_double(got[i]) - ref[i]);
    if (std::isnan(d)) return d;  // NaN where the reference is finite
    worst = std::fmax(worst, d);
  }
  return worst;
}

// Elementwise |got − ref| ≤ atol + rtol·|ref|, after checking that every element was written
// (no poison left) and that the sizes agree. `what` names the output in messages.
template <typename T>
CheckResult check_close(const std::vector<T>& got, const std::vector<double>& ref, double atol,
                        double rtol, const std::string& what) {
  if (got.size() != ref.size())
    return CheckResult::fail(what + ": " + std::to_string(got.size()) + " elements, expected " +
                             std::to_string(ref.size()));
  const int64_t unwritten = first_unwritten(got);
  if (unwritten >= 0)
    return CheckResult::fail(what + ": element " + std::to_string(unwritten) +
                             " was never written (still holds the poison pattern)");
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = to_double(got[i]);
    if (close_or_same_special(g, ref[i], atol + rtol * std::fabs(ref[i]))) continue;
    if (bad < 5)
      first << "\n  [" << i << "] got " << g << ", expected " << ref[i] << " (tolerance "
            << atol + rtol * std::fabs(ref[i]) << ")";
    ++bad;
  }
  if (bad == 0) return CheckResult::pass();
  std::ostringstream msg;
  msg << what << ": " << bad << " of " << ref.size()
      << " elements out of tolerance (max abs error " << max_abs_error(got, ref)
      << "); first:" << first.str();
  return CheckResult::fail(msg.str());
}

// Bit for bit: got[i] must hold want[i]'s very bits (a -0.0 is not +0.0, a NaN keeps its sign
// and payload), for outputs that copy input elements. A slot that differs and still holds the
// poison is reported as never written. Where want[i] has the poison's bits itself (an all-ones
// NaN) a slot left unwritten cannot be told from a copy, and it holds the right bits either way.
template <typename T>
CheckResult check_same_bits(const std::vector<T>& got, const std::vector<T>& want,
                            const std::string& what) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "bits are shown as one 64-bit word");
  if (got.size() != want.size())
    return CheckResult::fail(what + ": " + std::to_string(got.size()) + " elements, expected " +
                             std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) == 0) continue;
    if (is_poison(got[i]))
      return CheckResult::fail(what + ": element " + std::to_string(i) +
                               " was never written (still holds the poison pattern)");
    uint64_t got_bits = 0, want_bits = 0;
    std::memcpy(&got_bits, &got[i], sizeof(T));
    std::memcpy(&want_bits, &want[i], sizeof(T));
    std::ostringstream msg;
    msg << what << ": element " << i << " is " << to_double(got[i]) << " (bits 0x" << std::hex
        << got_bits << "), expected " << to_double(want[i]) << " (0x" << want_bits << ")";
    return CheckResult::fail(msg.str());
  }
  return CheckResult::pass();
}

// Exact comparison of indices (top-k and friends), after the poison check.
template <typename I>
CheckResult check_indices(const std::vector<I>& got, const std::vector<int64_t>& want,
                          const std::string& what) {
  if (got.size() != want.size())
    return CheckResult::fail(what + ": " + std::to_string(got.size()) + " indices, expected " +
                             std::to_string(want.size()));
  const int64_t unwritten = first_unwritten(got);
  if (unwritten >= 0)
    return CheckResult::fail(what + ": index " + std::to_string(unwritten) + " was never written");
  for (size_t i = 0; i < want.size(); ++i) {
    if (static_cast<int64_t>(got[i]) != want[i]) {
      std::ostringstream msg;
      msg << what << ": position " << i << " holds index " << static_cast<int64_t>(got[i])
          << ", expected " << want[i];
      return CheckResult::fail(msg.str());
    }
  }
  return CheckResult::pass();
}

// Guard zones of a GuardedBuffer: a failure means a write past either end of the buffer.
template <typename T>
CheckResult check_guards(const GuardedBuffer<T>& buffer, const std::string& what) {
  if (buffer.guards_intact()) return CheckResult::pass();
  return CheckResult::fail(what + ": a guard canary changed: something wrote outside the buffer");
}

// An input after the run: its guard zones intact and every element as uploaded, byte for byte.
template <typename T>
CheckResult check_unchanged(const GuardedBuffer<T>& buffer, const std::vector<T>& uploaded,
                            const std::string& what) {
  CheckResult result = check_guards(buffer, what);
  const std::vector<T> after = buffer.download();
  if (after.size() != uploaded.size() ||
      (!after.empty() && std::memcmp(after.data(), uploaded.data(), after.size() * sizeof(T)) != 0))
    result.and_then(CheckResult::fail(what + " was modified"));
  return result;
}

}  // namespace common
