// Chapter 10's internal interface: the launchers of each version, called by the dispatcher
// (softmax_dispatch.cu) after it has validated the arguments. Not part of the public API.
#pragma once

#include "softmax.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace softmax::detail {

// The same reductions serve softmax and log_softmax; only the last step differs.
enum class Epilogue { Softmax, LogSoftmax };

// Versions 1-3 take any shape.
template <typename T>
void launch_three_pass(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                       cudaStream_t stream);
template <typename T>
void launch_online(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                   cudaStream_t stream);
template <typename T>
void launch_two_level_merge(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                            cudaStream_t stream);

// Version 4: rows of at most warp_row_capacity<T>() elements (1024 float, 2048 half/bf16).
template <typename T>
int64_t warp_row_capacity();
template <typename T>
void launch_warp_per_row(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                         cudaStream_t stream);

// Version 5b: a block per row that reads its row twice, the second time from L1/L2 (any row of
// up to kRereadRowCapacity elements). RereadShape: threads per block and windows per thread
// and batch (4 or 8); {0, 0} lets reread_shape choose from the row length.
constexpr int64_t kRereadRowCapacity = int64_t{1} << 30;
struct RereadShape {
  int threads = 0;
  int packs = 0;
};
template <typename T>
RereadShape reread_shape(const T* x, int64_t cols);
// Whether the rows that version 5b has in flight at once fit in L2, so that the second read of
// each comes from cache and not from memory.
template <typename T>
bool rereads_from_cache(const T* x, int64_t rows, int64_t cols);
// Whether reading each row twice, from cache, beat holding it in registers for this shape: row
// length, row count and rows in flight (the backward's rule starts from it).
template <typename T>
bool reread_shape_pays(const T* x, int64_t rows, int64_t cols);
// Whether version 5b beat versions 5 and 6 with fewer rows than reread_shape_pays asks for, where
// version 6's blocks would be one per SM, or for rows too long for a cluster's registers (the
// forward's rule only).
template <typename T>
bool reread_few_rows_pays(const T* x, int64_t rows, int64_t cols);
// Whether the dispatcher should run version 5b for this shape (the measured rule): the few-row
// shapes above, and where reread_shape_pays except where version 5 fills its blocks better or
// 5b's second wave of rows would be mostly idle.
template <typename T>
bool prefers_reread(const T* x, int64_t rows, int64_t cols);
template <typename T>
void launch_reread(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                   cudaStream_t stream, RereadShape shape = {});

// Versions 5 and 6: one kernel, a row cut into `cluster` chunks held in the registers of the
// blocks of one thread-block cluster (cluster 1: version 5, a block per row).
// cached_row_capacity: the longest row a cluster of that size can hold at any alignment.
template <typename T>
int64_t cached_row_capacity(int cluster);
// Whether this row length at this alignment of x fits a cluster of that size: an aligned row
// of 16384 floats fits one block, the same row one element off does not.
template <typename T>
bool cached_fits(const T* x, int64_t cols, int cluster);
// The most windows a block takes where the launcher can choose (2048: 256 threads x 8 windows,
// or 512 x 4). A larger block is alone on its SM, and nothing overlaps its loads with another
// block's reductions and stores: with at least two rows per SM a longer row goes to version 5b
// or is split over a cluster instead (fewer rows may take blocks of up to 4096 windows, see
// block_per_row_pays).
constexpr int64_t kPreferredChunkWindows = 2048;
// Whether the row fits one block of at most kPreferredChunkWindows windows.
template <typename T>
bool fits_preferred_chunk(const T* x, int64_t cols);
// Whether a block per row (version 5) beat the other versions with fewer than two rows per SM
// (H200, 2026-11-26, 1 to 256 rows): rows of up to kBlockPerRowElements at every count measured
// (fp32 64x8192: 5.5 us against 6.6 for version 6; 170 rows 7.1 against 7.3 for version 5b);
// longer rows that one block holds with at most one row per SM, from a quarter of the SMs'
// worth of rows on for rows of one preferred chunk (bf16 48x16384: 5.9 against 6.4) and from
// 3/8 for longer ones (bf16 64x32768: 7.8 against 8.3). Fewer, longer rows gain from being
// spread over more SMs (bf16 32x32768: 6.7 against 7.5), and so do rows of 16384 elements, whose
// exponentials one SM computes alone (bf16 8x16384: 5.3 against 5.7).
constexpr int64_t kBlockPerRowElements = 8192;
template <typename T>
bool block_per_row_pays(const T* x, int64_t rows, int64_t cols);
// Cluster sizes up to 8 are portable; 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed,
// which sm_90 grants.
constexpr int kMaxPortableCluster = 8;
constexpr int kMaxCluster = 16;
bool clusters_supported();  // common::has_sm90_features(): an sm_90 GPU and a build for it
// Version 6's cluster size for a shape (and x's alignment): enough blocks to hold the row, and
// enough rows times blocks to give every SM work.
template <typename T>
int split_row_cluster(const T* x, int64_t rows, int64_t cols);
// How many of version 6's blocks share an SM for this shape (the block that split_row_cluster's
// chunk needs, at its register cap).
template <typename T>
int split_row_blocks_per_sm(const T* x, int64_t rows, int64_t cols);
template <typename T>
void launch_cached(const T* x, T* y, int64_t rows, int64_t cols, int cluster, Epilogue epilogue,
                   cudaStream_t stream);

// The version the dispatcher (Version::Final) runs for a shape and x's alignment: 3, 4, 5, 5b or
// 6 (TODO 7, softmax_dispatch.cu). It reads nothing at x.
template <typename T>
Version choose_version(const T* x, int64_t rows, int64_t cols);

}  // namespace softmax::detail
