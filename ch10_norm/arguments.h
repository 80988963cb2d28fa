// Chapter 10 norm: the checks every entry point makes before it launches anything (norm.h states
// the rules they enforce). `who` is the public function called: its name leads every message.
#pragma once

#include "common/errors.hpp"
#include "common/overlap.hpp"

#include <cmath>
#include <cstdint>

namespace normalization::detail {

// The sizes, and that a matrix of rows x n elements of T has a byte count that fits 64 bits (so
// that rows * n and the address arithmetic below cannot overflow).
template <typename T>
void check_sizes(const char* who, int64_t rows, int64_t n, float eps) {
  CHECK_ARG_FOR(who, rows >= 0, "rows must be >= 0, got " << rows);
  CHECK_ARG_FOR(who, n >= 1, "n must be >= 1, got " << n);
  CHECK_ARG_FOR(who, common::matrix_bytes_fit<T>(rows, n),
                "a matrix of " << rows << " x " << n << " elements overflows 64 bits of bytes");
  CHECK_ARG_FOR(who, std::isfinite(eps) && eps > 0.0f,
                "eps must be finite and > 0 (a constant row has variance 0), got " << eps);
}

// Every pointer at an address its element type allows (any element offset is fine: the vector
// paths peel a head); a pointer between two elements would fault inside a kernel instead.
template <typename... Elements>
void check_element_alignment(const char* who, const Elements*... pointers) {
  CHECK_ARG_FOR(who, common::elements_aligned(pointers...),
                "every pointer must be aligned to the size of its element (2 bytes for half and "
                "bf16, 4 for float)");
}

// Whether the matrices of `elements` elements at a and b share any byte (check_sizes bounds the
// byte count).
template <typename T>
bool matrices_overlap(const T* a, const T* b, int64_t elements) {
  return common::buffers_overlap(a, b, static_cast<size_t>(elements) * sizeof(T));
}

// In place, y == x, works in every version: each element of a row is read, once or twice, and
// then written by the thread that reads it, and nothing reads it afterwards. So the read-only
// path (__ldg) that some versions take for x never meets an element the kernel has written. A y
// that overlaps x without being x would overwrite elements of a row, or of the next one, before
// they are read.
template <typename T>
void check_output_placement(const char* who, const T* x, const T* y, int64_t elements) {
  CHECK_ARG_FOR(who, y == x || !matrices_overlap(x, y, elements),
                "y overlaps x without being equal to it: in place (y == x) is supported, partial "
                "overlap is not");
}

// The fused add's residual is an output of its own (x + residual, written back): sharing memory
// with x, a row's sum would overwrite elements of x not yet read; sharing it with y, the output
// would overwrite the sum. y == x is fine, as above.
template <typename T>
void check_residual_placement(const char* who, const T* x, const T* residual, const T* y,
                              int64_t elements) {
  CHECK_ARG_FOR(
      who, !matrices_overlap(residual, x, elements) && !matrices_overlap(residual, y, elements),
      "the residual must not overlap x or y: x + residual is written back to it, and y is "
      "written too");
}

// The per-row statistics are outputs of their own, and γ and β are read by every row: mean and
// rstd sharing memory with any other buffer (or with each other) would be overwritten or
// overwrite it, and γ or β sharing memory with y or the residual would change while later rows
// still read them. Absent buffers (nullptr) share nothing.
template <typename T>
void check_side_buffer_placement(const char* who, const T* x, const T* residual, const T* gamma,
                                 const T* beta, const T* y, const float* mean, const float* rstd,
                                 int64_t rows, int64_t n) {
  const auto matrix = static_cast<size_t>(rows * n) * sizeof(T);
  const auto params = static_cast<size_t>(n) * sizeof(T);
  const auto stats = static_cast<size_t>(rows) * sizeof(float);
  const common::Span xs{x, matrix}, ys{y, matrix}, rs{residual, matrix}, gs{gamma, params},
      bs{beta, params}, ms{mean, stats}, ss{rstd, stats};
  CHECK_ARG_FOR(who,
                !common::overlaps_any(ms, {xs, ys, rs, gs, bs, ss}) &&
                    !common::overlaps_any(ss, {xs, ys, rs, gs, bs}),
                "mean and rstd must not overlap each other or any other buffer (they are written)");
  CHECK_ARG_FOR(
      who, !common::overlaps_any(gs, {ys, rs}) && !common::overlaps_any(bs, {ys, rs}),
      "gamma and beta must not overlap y or the residual (every row reads them while rows "
      "are written)");
}

// Every check of an entry point, in this order; false when there are no rows (nothing to do, and
// no pointer is looked at). The buffers an operation lacks are nullptr: the residual outside the
// fused add (`fused`, which requires it), β and mean outside LayerNorm.
template <typename T>
bool check_arguments(const char* who, bool fused, const T* x, const T* residual, const T* gamma,
                     const T* beta, const T* y, const float* mean, const float* rstd, int64_t rows,
                     int64_t n, float eps) {
  check_sizes<T>(who, rows, n, eps);
  if (rows == 0) return false;
  if (fused) {
    CHECK_ARG_FOR(who, x != nullptr && residual != nullptr && y != nullptr,
                  "x, residual and y must not be null");
  } else {
    CHECK_ARG_FOR(who, x != nullptr && y != nullptr, "x and y must not be null");
  }
  check_element_alignment(who, x, residual, gamma, beta, y, mean, rstd);
  check_output_placement(who, x, y, rows * n);
  if (fused) check_residual_placement(who, x, residual, y, rows * n);
  check_side_buffer_placement<T>(who, x, residual, gamma, beta, y, mean, rstd, rows, n);
  return true;
}

}  // namespace normalization::detail
