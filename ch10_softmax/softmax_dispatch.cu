// Chapter 10, version 7: the public API. Validates every call, then runs the version asked for;
// Version::Final (what softmax(x, y, rows, cols) runs) picks one from the shape.
//
//   7_final  rows of at most 2 KiB: version 4, a warp or less per row; rows of 8 KiB and more
//            whose rows in flight fit in L2: version 5b, a block per row reading it twice;
//            rows that fit a block: version 5, a block per row; few rows, or rows too long for
//            a block: version 6 (the row split over a cluster of blocks keeps every SM busy);
//            each where it was measured fastest (the README's table; the sweeps behind each
//            rule are in TUNING.md). Rows too long for any register cache: version 5b; beyond
//            2^30 elements, version 3.
// Test it:  ./ch10_softmax/ch10_softmax_student_tests "[final]"
#include "softmax.h"
#include "softmax_launch.h"

#include "common/errors.hpp"
#include "common/gpu_info.hpp"
#include "common/overlap.hpp"

#include <cstdint>
#include <stdexcept>

namespace softmax {

const char* version_name(Version v) {
  switch (v) {
    case Version::ThreePass:
      return "1_three_pass";
    case Version::Online:
      return "2_online";
    case Version::TwoLevelMerge:
      return "3_two_level_merge";
    case Version::WarpPerRow:
      return "4_warp_per_row";
    case Version::BlockCached:
      return "5_block_cached";
    case Version::BlockReread:
      return "5b_block_reread";
    case Version::SplitRow:
      return "6_split_row";
    case Version::Final:
      return "7_final";
  }
  return "unknown";
}

namespace detail {

// The version the dispatcher runs for a shape (never Final itself). x: the alignment decides
// whether a row just fits one block.
template <typename T>
Version choose_version(const T* x, int64_t rows, int64_t cols) {
  // TODO 7 (about 9 lines; checked by [ch10_softmax][final]):
  //   Pick by the shape, the fastest kernel that fits (TUNING.md says why):
  //   - rows of at most 2 KiB (cols * sizeof(T) <= 2048): Version::WarpPerRow;
  //   - else, with fewer than two rows per SM where a block per row was measured faster than
  //     the other versions (detail::block_per_row_pays(x, rows, cols)): Version::BlockCached;
  //   - else, where version 5b was measured fastest (detail::prefers_reread(x, rows, cols):
  //     rows of 8 KiB and more, many of them, whose rows in flight fit in L2, and the few-row
  //     shapes of detail::reread_few_rows_pays): Version::BlockReread;
  //   - else, with many rows (rows >= 2 * common::device_properties().multiProcessorCount)
  //     and a row that fits one block of the preferred size (detail::fits_preferred_chunk(x,
  //     cols)): Version::BlockCached;
  //   - else, when detail::clusters_supported() and the row fits a cluster
  //     (detail::cached_fits(x, cols, detail::kMaxCluster)): Version::SplitRow;
  //   - else Version::BlockCached if it fits one block; else Version::BlockReread for rows of
  //     up to detail::kRereadRowCapacity elements, Version::TwoLevelMerge beyond (any length).
  // BEGIN TODO 7
  (void)x;
  (void)rows;
  (void)cols;
  throw std::logic_error("TODO 7 (softmax_dispatch.cu): the dispatcher chooses no version yet");
  // END TODO 7
}

template Version choose_version(const float*, int64_t, int64_t);
template Version choose_version(const __half*, int64_t, int64_t);
template Version choose_version(const __nv_bfloat16*, int64_t, int64_t);

}  // namespace detail

namespace {

using detail::Epilogue;

// `who`: the public function called, which the messages name.
template <typename T>
void validate(const char* who, const T* x, const T* y, int64_t rows, int64_t cols) {
  CHECK_ARG_FOR(who, rows >= 0, "rows must be >= 0, got " << rows);
  CHECK_ARG_FOR(who, cols >= 1, "cols must be >= 1, got " << cols);
  CHECK_ARG_FOR(who, common::matrix_bytes_fit<T>(rows, cols),
                "rows * cols elements overflow 64 bits of bytes: " << rows << " x " << cols);
  if (rows == 0) return;
  CHECK_ARG_FOR(who, x != nullptr && y != nullptr, "x and y must be device pointers, got null");
  CHECK_ARG_FOR(who, common::elements_aligned(x, y),
                "x and y must be aligned to their element size (" << alignof(T) << " bytes)");
  CHECK_ARG_FOR(
      who, x == y || !common::buffers_overlap(x, y, static_cast<size_t>(rows * cols) * sizeof(T)),
      "x and y overlap without being equal: in place (y == x) is supported, partial "
      "overlap is not (a row would be overwritten before it is read)");
}

// The limits of the specialised versions, exactly for x's alignment (supports() assumes the
// worst), checked here so that the message names the public function called.
template <typename T>
void check_limits(const char* who, Version v, const T* x, int64_t cols) {
  switch (v) {
    case Version::WarpPerRow:
      CHECK_ARG_FOR(who, cols <= detail::warp_row_capacity<T>(),
                    "version 4 keeps a row in one warp's registers: at most "
                        << detail::warp_row_capacity<T>()
                        << " elements of this type, got cols = " << cols);
      return;
    case Version::BlockCached:
      CHECK_ARG_FOR(who, detail::cached_fits(x, cols, 1),
                    "version 5: a row of " << cols << " elements at this alignment does not fit "
                                           << "in one block's registers: at most "
                                           << detail::cached_row_capacity<T>(1)
                                           << " at any alignment");
      return;
    case Version::BlockReread:
      CHECK_ARG_FOR(who, cols <= detail::kRereadRowCapacity,
                    "version 5b takes rows of at most " << detail::kRereadRowCapacity
                                                        << " elements, got " << cols);
      return;
    case Version::SplitRow:
      CHECK_ARG_FOR(who, detail::clusters_supported(),
                    "version 6 splits a row across a cluster of blocks, which needs sm_90 or "
                    "newer; "
                        << common::sm90_features_missing());
      CHECK_ARG_FOR(who, detail::cached_fits(x, cols, detail::kMaxCluster),
                    "version 6: a row of " << cols << " elements at this alignment does not fit "
                                           << "in the registers of " << detail::kMaxCluster
                                           << " blocks: at most "
                                           << detail::cached_row_capacity<T>(detail::kMaxCluster)
                                           << " at any alignment");
      return;
    case Version::ThreePass:
    case Version::Online:
    case Version::TwoLevelMerge:
    case Version::Final:
      return;
  }
  CHECK_ARG_FOR(who, false, "unknown version " << static_cast<int>(v));
}

// `who`: the public function called. The launchers check their limits too, for their other
// callers; with check_limits first, their messages never reach the public API.
template <typename T>
void run(const char* who, Version v, const T* x, T* y, int64_t rows, int64_t cols,
         Epilogue epilogue, cudaStream_t stream) {
  check_limits(who, v, x, cols);
  switch (v) {
    case Version::ThreePass:
      return detail::launch_three_pass(x, y, rows, cols, epilogue, stream);
    case Version::Online:
      return detail::launch_online(x, y, rows, cols, epilogue, stream);
    case Version::TwoLevelMerge:
      return detail::launch_two_level_merge(x, y, rows, cols, epilogue, stream);
    case Version::WarpPerRow:
      return detail::launch_warp_per_row(x, y, rows, cols, epilogue, stream);
    case Version::BlockCached:
      return detail::launch_cached(x, y, rows, cols, 1, epilogue, stream);
    case Version::BlockReread:
      return detail::launch_reread(x, y, rows, cols, epilogue, stream);
    case Version::SplitRow:
      return detail::launch_cached(x, y, rows, cols, detail::split_row_cluster(x, rows, cols),
                                   epilogue, stream);
    case Version::Final:
      return run(who, detail::choose_version(x, rows, cols), x, y, rows, cols, epilogue, stream);
  }
}

}  // namespace

template <typename T>
bool supports(Version v, int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 1 || !common::matrix_bytes_fit<T>(rows, cols)) return false;
  switch (v) {
    case Version::WarpPerRow:
      return cols <= detail::warp_row_capacity<T>();
    case Version::BlockCached:
      return cols <= detail::cached_row_capacity<T>(1);
    case Version::BlockReread:
      return cols <= detail::kRereadRowCapacity;
    case Version::SplitRow:
      return detail::clusters_supported() &&
             cols <= detail::cached_row_capacity<T>(detail::kMaxCluster);
    case Version::ThreePass:
    case Version::Online:
    case Version::TwoLevelMerge:
    case Version::Final:
      return true;
  }
  return false;  // not a version
}

template <typename T>
void softmax(Version v, const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  validate(__func__, x, y, rows, cols);
  if (rows == 0) return;
  run(__func__, v, x, y, rows, cols, Epilogue::Softmax, stream);
}

template <typename T>
void log_softmax(Version v, const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  validate(__func__, x, y, rows, cols);
  if (rows == 0) return;
  run(__func__, v, x, y, rows, cols, Epilogue::LogSoftmax, stream);
}

#define INSTANTIATE(T)                                                             \
  template bool supports<T>(Version, int64_t, int64_t);                            \
  template void softmax<T>(Version, const T*, T*, int64_t, int64_t, cudaStream_t); \
  template void log_softmax<T>(Version, const T*, T*, int64_t, int64_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax
