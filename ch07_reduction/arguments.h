// Chapter 7: the checks every entry point makes before it launches anything (reduction.h states
// the rules they enforce), shared by the chapter's functions and the CUB baseline. `who` is the
// public function called: its name leads every message.
#pragma once

#include "common/errors.hpp"
#include "common/overlap.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace reduction::detail {

inline void check_count(const char* who, int64_t n) {
  CHECK_ARG_FOR(who, n >= 0, "n must be >= 0, got " << n);
}

// The bytes of x (n >= 0), held below SIZE_MAX for any n.
template <typename T>
size_t input_bytes(const T*, int64_t n) {
  return static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(n), SIZE_MAX / sizeof(T))) *
         sizeof(T);
}

// The input and the one float of output. Any element offset is fine (the 16-byte loads peel a
// head); a pointer between two elements would fault inside a kernel instead. out must share no
// byte with x: version 1 zeroes it before it reads x, and every version writes it while others
// still read.
template <typename T>
void check_pointers(const char* who, const T* x, int64_t n, const float* out) {
  CHECK_ARG_FOR(who, x != nullptr || n == 0, "x is null but n = " << n);
  CHECK_ARG_FOR(who, out != nullptr, "out is null");
  CHECK_ARG_FOR(
      who, common::elements_aligned(x, out),
      "x and out must be aligned to the size of their elements (" << sizeof(T) << " and 4 bytes)");
  CHECK_ARG_FOR(who, !common::spans_overlap({x, input_bytes(x, n)}, {out, sizeof(float)}),
                "out overlaps x");
}

template <typename T>
void check_input(const char* who, const T* x, int64_t n, const float* out) {
  check_count(who, n);
  check_pointers(who, x, n, out);
}

// The workspace of versions 2 to 7: present, 4-byte aligned (it holds floats, and the final
// version's counter), as large as the call needs (`needed` bytes, `size` names the function that
// says so), and apart from x and out, which the kernels would otherwise overwrite.
template <typename T>
void check_workspace(const char* who, const void* workspace, size_t workspace_size, size_t needed,
                     const char* size, const T* x, int64_t n, const float* out) {
  CHECK_ARG_FOR(who, workspace != nullptr, "workspace is null: allocate " << size);
  CHECK_ARG_FOR(who, reinterpret_cast<uintptr_t>(workspace) % alignof(float) == 0,
                "workspace must be 4-byte aligned (it holds floats), got " << workspace);
  CHECK_ARG_FOR(who, workspace_size >= needed,
                "workspace_size is " << workspace_size << " bytes; this call needs " << size
                                     << " = " << needed);
  CHECK_ARG_FOR(
      who,
      !common::overlaps_any({workspace, needed}, {{x, input_bytes(x, n)}, {out, sizeof(float)}}),
      "the workspace overlaps x or out");
}

}  // namespace reduction::detail
