// Chapter 11's internal interface: the launcher of each version, taking `who`, the public
// function the user called, which every refusal names. The public launchers of topk.h pass their
// own name; topk(Version, ...) and the dispatcher (dispatch.cu) pass theirs. Not part of the
// public API.
#pragma once

#include "topk.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace topk::detail {

template <typename T>
void topk_thread_queue(const char* who, const T* x, int64_t M, int64_t N, int k, T* values,
                       int64_t* indices, cudaStream_t stream);
template <typename T>
void topk_warp_merge(const char* who, const T* x, int64_t M, int64_t N, int k, T* values,
                     int64_t* indices, cudaStream_t stream);
template <typename T>
void topk_filtered(const char* who, const T* x, int64_t M, int64_t N, int k, int chunks, T* values,
                   int64_t* indices, void* workspace, size_t workspace_size, cudaStream_t stream);
template <typename T>
void topk_cluster_row(const char* who, const T* x, int64_t M, int64_t N, int k, T* values,
                      int64_t* indices, cudaStream_t stream);

}  // namespace topk::detail
