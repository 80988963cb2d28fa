// Chapter 10's GPU tests, built twice: against the skeleton (the student's build, ctest label
// student_ch10_softmax, selected by -L ch10_softmax) and against the solution (label
// solutions). Each TEST_CASE checks one TODO; INFO says which to fill when it fails, except the
// argument test, tagged [given], which checks code the chapter gives. [sm90]: before sm_90 the
// test only checks that the version refuses. One test, tagged [large], moves more than 2^31
// elements; the sanitizer runs skip it.
#include "check.h"
#include "softmax.h"
#include "softmax_launch.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/gpu_info.hpp"
#include "common/overlap.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using softmax::Version;

namespace {

// Every regime and its boundaries: warp (32), lanes per row and windows per lane (127, 384,
// 512, 1000), one warp's row (1024), block caches (4096, 8191), a cluster's row (32768), and a
// row longer than any block (131072 + 5).
const std::vector<int64_t> kCols = {1,    2,    31,   32,   33,   127,   384,       512,
                                    1000, 1024, 1025, 4096, 8191, 32768, 131072 + 5};
// Rows: one, a few, and many (many up to rows of 8191, where the CPU reference stays quick).
const std::vector<int64_t> kRows = {1, 3};
const std::vector<int64_t> kManyRowsCols = {1,   2,    31,   32,   33,   127,
                                            512, 1000, 1024, 1025, 4096, 8191};
constexpr int64_t kManyRows = 4096;

std::string todo_of(Version v) {
  switch (v) {
    case Version::ThreePass:
      return "TODO 1 in softmax_multipass.cu";
    case Version::Online:
      return "TODO 2 in softmax_multipass.cu";
    case Version::TwoLevelMerge:
      return "TODO 3 in softmax_multipass.cu";
    case Version::WarpPerRow:
      return "TODO 4 in softmax_warp.cu";
    case Version::BlockCached:
      return "TODO 5 in softmax_cached.cu";
    case Version::BlockReread:
      return "TODO 5b in softmax_reread.cu";
    case Version::SplitRow:
      return "TODO 6 in softmax_cluster.cuh (and TODO 5)";
    case Version::Final:
      return "TODO 7 in softmax_dispatch.cu (and TODOs 4, 5, 5b, 6)";
  }
  return "?";
}

template <typename T>
check::ForwardRun<T> forward(Version v, check::Op op) {
  return [v, op](const T* x, T* y, int64_t rows, int64_t cols) {
    if (op == check::Op::Softmax)
      softmax::softmax(v, x, y, rows, cols);
    else
      softmax::log_softmax(v, x, y, rows, cols);
  };
}

// Cycles through the alignments of input and output: both on 16 bytes, both off by the same
// amount (the vector path with a head), and out of phase (element-wise stores).
check::Placement placement_for(size_t i) {
  static const check::Placement kPlacements[] = {{0, 0}, {1, 1}, {0, 0}, {3, 1}, {2, 0}};
  return kPlacements[i % 5];
}

// The same for element type T. A 16-byte window holds eight 16-bit elements: every other shape
// moves on by four elements, so that 16-bit rows also start at phases 4 to 7 of a window.
template <typename T>
check::Placement placement_for_type(size_t i) {
  check::Placement p = placement_for(i);
  if (sizeof(T) == 2 && i % 2 == 1) {
    p.in_misalign += 4;
    p.out_misalign += 4;
  }
  return p;
}

// Shapes for version v: every column count it takes, with 1 and 3 rows, plus many rows for the
// shorter columns.
std::vector<std::pair<int64_t, int64_t>> shapes_for(Version v, bool many_rows, bool long_rows) {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t cols : kCols) {
    if (!long_rows && cols > 8191) continue;
    for (int64_t rows : kRows)
      shapes.push_back({rows, cols});
  }
  if (many_rows)
    for (int64_t cols : kManyRowsCols)
      shapes.push_back({kManyRows, cols});
  (void)v;
  return shapes;
}

template <typename T>
void check_version(Version v, bool many_rows, bool long_rows) {
  const auto shapes = shapes_for(v, many_rows, long_rows);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [rows, cols] = shapes[i];
    if (!softmax::supports<T>(v, rows, cols)) continue;
    const auto x = check::logits<T>(rows, cols, 1000 + i);
    for (check::Op op : {check::Op::Softmax, check::Op::LogSoftmax}) {
      if (op == check::Op::LogSoftmax && rows == kManyRows) continue;
      const check::Placement placement = placement_for_type<T>(i);
      INFO(softmax::version_name(v)
           << " " << common::DType<T>::name << " "
           << (op == check::Op::Softmax ? "softmax" : "log_softmax") << ", rows = " << rows
           << ", cols = " << cols << ", misalign x/y = " << placement.in_misalign << "/"
           << placement.out_misalign);
      REQUIRE_CHECK(check::check_forward(forward<T>(v, op), op, x, rows, cols, placement));
    }
    // Long rows again on flat data, where every element's share of the (max, sum) shows.
    if (cols >= 4096 && rows < kManyRows) {
      INFO(softmax::version_name(v) << " " << common::DType<T>::name
                                    << " softmax, flat rows = " << rows << ", cols = " << cols);
      REQUIRE_CHECK(check::check_forward(forward<T>(v, check::Op::Softmax), check::Op::Softmax,
                                         check::flat<T>(rows, cols, 3000 + i), rows, cols,
                                         placement_for_type<T>(i + 1)));
    }
  }
}

template <typename T>
void check_semantics(Version v) {
  size_t i = 0;
  for (int64_t cols :
       {int64_t{1}, int64_t{33}, int64_t{1025}, int64_t{8191}, int64_t{131072 + 5}}) {
    if (!softmax::supports<T>(v, check::kSpecialRows, cols)) continue;
    const auto x = check::special_rows<T>(cols, 77 + cols);
    for (check::Op op : {check::Op::Softmax, check::Op::LogSoftmax}) {
      INFO(softmax::version_name(v) << " " << common::DType<T>::name << ", special rows, cols = "
                                    << cols << " (fill " << todo_of(v) << ")");
      REQUIRE_CHECK(check::check_forward(forward<T>(v, op), op, x, check::kSpecialRows, cols,
                                         placement_for_type<T>(i++)));
    }
  }
}

// The largest blocks version 5 launches (about 1024 threads of 4 windows), for rows kCols skips:
// just past 3072 windows, and the longest row supports() promises, with the input misaligned.
template <typename T>
void check_largest_cached_blocks() {
  constexpr int64_t kWindow = 16 / sizeof(T);
  size_t i = 1;
  for (const auto& [rows, cols] :
       {std::pair<int64_t, int64_t>{2, 3072 * kWindow + 1}, {3, 4095 * kWindow}}) {
    REQUIRE(softmax::supports<T>(Version::BlockCached, rows, cols));
    INFO("fill TODO 5" << (sizeof(T) == 2 ? " and TODO 8 (softmax_precision.cuh)" : "") << ": "
                       << common::DType<T>::name << " rows = " << rows << ", cols = " << cols);
    REQUIRE_CHECK(check::check_forward(forward<T>(Version::BlockCached, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<T>(rows, cols, 50 + i),
                                       rows, cols, placement_for(i)));
    i += 2;
  }
}

void check_fp32(Version v) {
  INFO("fill " << todo_of(v));
  check_version<float>(v, /*many_rows=*/true, /*long_rows=*/true);
  check_semantics<float>(v);
}

// The version TODO 7 chooses for a shape (x 16-byte aligned), which the output checks cannot see:
// every version that takes a shape computes it right.
template <typename T>
void check_choice(int64_t rows, int64_t cols, Version expected) {
  const common::DeviceBuffer<T> at(8);  // an address for the rules, which only read its alignment
  INFO("fill TODO 7: " << common::DType<T>::name << " rows = " << rows << ", cols = " << cols
                       << " should run " << softmax::version_name(expected));
  Version chosen = Version::Final;
  try {
    chosen = softmax::detail::choose_version(at.data(), rows, cols);
  } catch (const std::logic_error& e) {
    FAIL(e.what());
  }
  CHECK(softmax::version_name(chosen) == std::string(softmax::version_name(expected)));
}

}  // namespace

TEST_CASE("version 1: three passes, block per row", "[ch10_softmax][three_pass]") {
  check_fp32(Version::ThreePass);
}

TEST_CASE("version 2: online (max, sum) pair", "[ch10_softmax][online]") {
  check_fp32(Version::Online);
}

TEST_CASE("version 3: two-level merge of the pair", "[ch10_softmax][two_level_merge]") {
  check_fp32(Version::TwoLevelMerge);
}

TEST_CASE("version 4: warp per row, row in registers", "[ch10_softmax][warp_per_row]") {
  check_fp32(Version::WarpPerRow);
  CHECK(softmax::supports<float>(Version::WarpPerRow, 1, 1024));
  CHECK(softmax::supports<__nv_bfloat16>(Version::WarpPerRow, 1, 2048));
}

TEST_CASE("version 5: block per row, row cached", "[ch10_softmax][block_cached]") {
  check_fp32(Version::BlockCached);
  check_largest_cached_blocks<float>();
}

TEST_CASE("version 5b: block per row, row read again from cache", "[ch10_softmax][block_reread]") {
  check_fp32(Version::BlockReread);
  // Every block shape the launcher has, fp32 and bf16: a row of fewer windows than one batch,
  // and rows of several batches with a partial last one, at the alignments of placement_for.
  auto run = [](auto tag) {
    using T = decltype(tag);
    size_t i = 0;
    for (int threads : {128, 256, 512, 1024}) {
      for (int packs : {4, 8}) {
        if (threads == 1024 && packs == 8 && sizeof(T) == 2) continue;  // beyond the registers
        for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{3, 1000}, {2, 65536 + 5}}) {
          INFO("fill TODO 5b (its bf16 cases also need TODO 8, softmax_precision.cuh): "
               << common::DType<T>::name << ", " << threads << " threads x "
                                << packs << " windows, rows = " << rows << ", cols = " << cols);
          const softmax::detail::RereadShape shape{threads, packs};
          auto launch = [shape](const T* x, T* y, int64_t r, int64_t c) {
            softmax::detail::launch_reread(x, y, r, c, softmax::detail::Epilogue::Softmax, nullptr,
                                           shape);
          };
          REQUIRE_CHECK(check::check_forward<T>(launch, check::Op::Softmax,
                                                check::logits<T>(rows, cols, 800 + i), rows, cols,
                                                placement_for(i)));
          if (cols > 1000)  // several batches: each one's share of the sum must count
            REQUIRE_CHECK(check::check_forward<T>(launch, check::Op::Softmax,
                                                  check::flat<T>(rows, cols, 900 + i), rows, cols,
                                                  placement_for(i + 2)));
          ++i;
        }
      }
    }
  };
  run(float{});
  run(__nv_bfloat16{});
}

TEST_CASE("version 6: row split across a cluster", "[ch10_softmax][split_row][sm90]") {
  if (!softmax::detail::clusters_supported()) {
    // Before sm_90 there are no clusters: the version must refuse, clearly.
    common::DeviceBuffer<float> x(1024), y(1024);
    REQUIRE_FALSE(softmax::supports<float>(Version::SplitRow, 1, 1024));
    REQUIRE_INVALID_ARGUMENT(softmax::softmax(Version::SplitRow, x.data(), y.data(), 1, 1024),
                             "softmax: version 6 splits a row across a cluster of blocks, which "
                             "needs sm_90");
    return;
  }
  REQUIRE(softmax::supports<float>(Version::SplitRow, 1, 131072 + 5));
  check_fp32(Version::SplitRow);
  // Few rows of long columns, the regime version 6 is for, at every alignment. A cluster holds
  // one row here and merges by pushing (given code, softmax_cluster.cuh).
  for (size_t i = 0; i < 5; ++i) {
    const int64_t rows = 2, cols = 65536 + 3 * static_cast<int64_t>(i);
    INFO("fill TODO 5: rows = " << rows << ", cols = " << cols);
    REQUIRE_CHECK(check::check_forward(forward<float>(Version::SplitRow, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<float>(rows, cols, i),
                                       rows, cols, placement_for(i)));
    REQUIRE_CHECK(check::check_forward(forward<float>(Version::SplitRow, check::Op::Softmax),
                                       check::Op::Softmax, check::flat<float>(rows, cols, 40 + i),
                                       rows, cols, placement_for(i + 1)));
  }
  // Many long rows: clusters of 4 blocks (the aligned row of 32768) or 8 (the rows a window
  // longer), more of them than SMs, merging with TODO 6's pull.
  for (size_t i = 0; i < 3; ++i) {
    const int64_t rows = 128, cols = 32768 + 3 * static_cast<int64_t>(i);
    INFO("fill TODO 6 (and TODO 5): rows = " << rows << ", cols = " << cols);
    REQUIRE_CHECK(check::check_forward(forward<float>(Version::SplitRow, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<float>(rows, cols, 20 + i),
                                       rows, cols, placement_for(i)));
  }
}

TEST_CASE("version 7: the dispatcher", "[ch10_softmax][final]") {
  check_fp32(Version::Final);
  // Many rows of the lengths where the dispatcher switches kernels.
  for (int64_t cols : {int64_t{4096}, int64_t{8192}, int64_t{8193}}) {
    INFO("fill TODO 7 (and TODOs 4, 5, 5b, 6): rows = 512, cols = " << cols);
    REQUIRE_CHECK(check::check_forward(forward<float>(Version::Final, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<float>(512, cols, cols),
                                       512, cols, placement_for(static_cast<size_t>(cols))));
  }
  // bf16 rows of 12 and 16 KiB, two per SM and more: aligned, 6144 goes to version 5 (version
  // 5b's batch would leave windows idle) and 8192 to 5b; misaligned, both go to 5b.
  using bf16 = __nv_bfloat16;
  const int64_t rows = 2 * common::device_properties().multiProcessorCount + 36;
  const common::DeviceBuffer<bf16> aligned(8);  // an address for the rule, which only reads it
  for (int64_t cols : {int64_t{6144}, int64_t{8192}}) {
    for (const check::Placement placement : {check::Placement{0, 0}, check::Placement{1, 1}}) {
      INFO("fill TODO 7 (and TODOs 5, 5b, 8): bf16 rows = "
           << rows << ", cols = " << cols << ", misaligned by " << placement.in_misalign);
      CHECK(softmax::detail::prefers_reread(aligned.data() + placement.in_misalign, rows, cols) ==
            (cols == 8192 || placement.in_misalign != 0));
      REQUIRE_CHECK(check::check_forward(forward<bf16>(Version::Final, check::Op::Softmax),
                                         check::Op::Softmax, check::logits<bf16>(rows, cols, cols),
                                         rows, cols, placement));
    }
  }
  // Fewer than two rows per SM: a block per row for rows of 8192 elements, and for longer rows
  // that one block holds from a quarter or 3/8 of the SMs on; version 5b for rows longer than a
  // block holds from half of the SMs on (16-bit), for rows too long for a cluster's registers,
  // and not where its blocks would leave a second wave mostly idle.
  // Row counts the rules compare with the SM count are given in SMs: `few` is 8 on 132 SMs.
  const int64_t sms = common::device_properties().multiProcessorCount;
  const int64_t few = std::max<int64_t>(1, sms / 16);
  const common::DeviceBuffer<float> aligned_f(8);
  CHECK(softmax::detail::block_per_row_pays(aligned_f.data(), few, 8192));
  CHECK_FALSE(softmax::detail::block_per_row_pays(aligned_f.data(), few, 16384));
  CHECK(softmax::detail::block_per_row_pays(aligned_f.data(), sms, 16384));
  CHECK_FALSE(softmax::detail::block_per_row_pays(aligned_f.data(), 2 * sms, 8192));
  CHECK(softmax::detail::reread_few_rows_pays(aligned.data(), sms, 65536));
  CHECK_FALSE(softmax::detail::reread_few_rows_pays(aligned.data(), sms / 4, 65536));
  CHECK_FALSE(softmax::detail::reread_few_rows_pays(aligned.data(), sms + 1, 65536));
  CHECK(softmax::detail::reread_few_rows_pays(aligned_f.data(), 1, 300000));
  CHECK_FALSE(softmax::detail::prefers_reread(aligned_f.data(), sms + sms / 4, 32768));
  if (softmax::detail::rereads_from_cache(aligned_f.data(), 2 * sms, 32768))  // L2 of 16+ MiB
    CHECK(softmax::detail::prefers_reread(aligned_f.data(), 2 * sms, 32768));
  struct FewRows {
    int64_t rows, cols;
  };
  for (const FewRows shape : {FewRows{sms, 8192}, FewRows{3, 300000}}) {
    INFO("fill TODO 7 (and TODOs 5, 5b): fp32 rows = " << shape.rows << ", cols = " << shape.cols);
    REQUIRE_CHECK(check::check_forward(
        forward<float>(Version::Final, check::Op::Softmax), check::Op::Softmax,
        check::logits<float>(shape.rows, shape.cols, 7), shape.rows, shape.cols, {1, 1}));
  }
  {
    INFO("fill TODO 7 (and TODOs 5b, 8): bf16 rows = " << sms << ", cols = 65536");
    REQUIRE_CHECK(check::check_forward(forward<bf16>(Version::Final, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<bf16>(sms, 65536, 8), sms,
                                       65536, placement_for(0)));
  }
  {  // One row per SM of 16384 floats: version 5's largest blocks (block_per_row_pays above).
    INFO("fill TODO 7 (and TODO 5): fp32 rows = " << sms << ", cols = 16384");
    REQUIRE_CHECK(check::check_forward(forward<float>(Version::Final, check::Op::Softmax),
                                       check::Op::Softmax, check::logits<float>(sms, 16384, 9), sms,
                                       16384, placement_for(0)));
  }
  // Many long rows, where the rules weigh the L2 and clusters merge by pulling: every element
  // is checked as written, eight rows against the reference (the first, last and middle ones).
  // 1024 rows of 131077 (512 MiB) keep the sanitizer runs short; 4096 add no new path.
  for (const auto& [many, cols] :
       {std::pair<int64_t, int64_t>{kManyRows, 32768}, {1024, 131072 + 5}}) {
    INFO("fill TODO 7 (and TODOs 5b, 6): fp32 rows = " << many << ", cols = " << cols);
    REQUIRE_CHECK(check::check_forward(
        forward<float>(Version::Final, check::Op::Softmax), check::Op::Softmax,
        check::logits<float>(many, cols, 10), many, cols, placement_for(1),
        {0, 1, many / 2 - 1, many / 2, many / 2 + 1, many - 3, many - 2, many - 1}));
  }

  // The choice itself, at shapes where the order of TODO 7's rules decides. Row counts that a
  // rule compares with the SM count are given in SMs; where a rule asks the GPU's L2 or its
  // clusters, the expected version asks the same.
  namespace detail = softmax::detail;
  const bool clusters = detail::clusters_supported();
  check_choice<float>(4096, 512, Version::WarpPerRow);
  check_choice<float>(1, 512, Version::WarpPerRow);  // before a block per row
  check_choice<bf16>(4096, 1024, Version::WarpPerRow);
  CHECK_FALSE(detail::prefers_reread(aligned.data(), 4096, 1025));
  check_choice<bf16>(4096, 1025, Version::BlockCached);
  check_choice<float>(few, 8192, Version::BlockCached);  // before the split row
  check_choice<float>(sms, 8192, Version::BlockCached);
  CHECK_FALSE(detail::prefers_reread(aligned_f.data(), few, 16384));
  check_choice<float>(few, 16384, clusters ? Version::SplitRow : Version::BlockCached);
  CHECK_FALSE(detail::prefers_reread(aligned_f.data(), 1, 131072));
  check_choice<float>(1, 131072, clusters ? Version::SplitRow : Version::BlockReread);
  check_choice<float>(3, 300000, Version::BlockReread);  // before the split row
  check_choice<bf16>(rows, 6144, Version::BlockCached);
  check_choice<bf16>(rows, 8192, Version::BlockReread);
  check_choice<float>(4096, 4096,
                      detail::prefers_reread(aligned_f.data(), 4096, 4096) ? Version::BlockReread
                                                                           : Version::BlockCached);
}

TEST_CASE("version 8: half and bf16 input and output", "[ch10_softmax][reduced_precision]") {
  INFO("fill TODO 8 in softmax_precision.cuh (and the version named below)");
  for (Version v : softmax::kAllVersions) {
    INFO(todo_of(v));
    check_version<__half>(v, /*many_rows=*/true, /*long_rows=*/true);
    check_version<__nv_bfloat16>(v, /*many_rows=*/true, /*long_rows=*/true);
    check_semantics<__half>(v);
    check_semantics<__nv_bfloat16>(v);
  }
  INFO(todo_of(Version::BlockCached));
  check_largest_cached_blocks<__nv_bfloat16>();
}

TEST_CASE("version 9: backward", "[ch10_softmax][backward]") {
  INFO("fill TODO 9 in softmax_backward.cu (it also uses TODO 6's cluster_reduce and, in half "
       "and bf16, TODO 8)");
  auto run_backward = [](auto tag) {
    using T = decltype(tag);
    const check::BackwardRun<T> run = [](const T* y, const T* dy, T* dx, int64_t rows,
                                         int64_t cols) {
      softmax::softmax_backward(y, dy, dx, rows, cols);
    };
    auto shapes = shapes_for(Version::Final, true, true);
    // Many rows of 8 KiB and more: the rows where the backward, like the forward, reads y and dy
    // a second time from cache (one batch per row, several batches, an odd length).
    for (const auto& shape : {std::pair<int64_t, int64_t>{512, 8192}, {300, 4099}, {160, 20000}})
      shapes.push_back(shape);
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto [rows, cols] = shapes[i];
      std::vector<T> y, dy;
      check::backward_inputs(rows, cols, 500 + i, y, dy);
      check::Placement placement = placement_for(i);
      placement.in_place = i % 7 == 3 || i % 7 == 5;
      placement.dx_on_y = i % 7 == 5;
      INFO("backward " << common::DType<T>::name << ", rows = " << rows << ", cols = " << cols
                       << (placement.in_place ? (placement.dx_on_y ? " (dx == y)" : " (dx == dy)")
                                              : ""));
      REQUIRE_CHECK(check::check_backward(run, y, dy, rows, cols, placement));
    }
    // Long aligned rows, enough for two blocks per SM when split: each row in chunks over a
    // cluster (8 chunks of a 16-bit row, 16 of a float one; the last chunk shorter), in place
    // and not.
    for (int where : {0, 1, 2}) {  // dx apart, dx == dy, dx == y
      const int64_t rows = 64, cols = 131072 + 8;
      std::vector<T> y, dy;
      check::backward_inputs(rows, cols, 600 + static_cast<uint64_t>(where), y, dy);
      check::Placement placement;  // y, dy and dx all on 16 bytes: the split needs them there
      placement.dx_misalign = 0;
      placement.in_place = where != 0;
      placement.dx_on_y = where == 2;
      INFO("backward " << common::DType<T>::name << ", rows = " << rows << ", cols = " << cols
                       << (where == 1 ? " (dx == dy)" : where == 2 ? " (dx == y)" : ""));
      REQUIRE_CHECK(check::check_backward(run, y, dy, rows, cols, placement));
    }
  };
  run_backward(float{});
  run_backward(__nv_bfloat16{});
  run_backward(__half{});
}

TEST_CASE("in place: y == x", "[ch10_softmax][in_place]") {
  for (Version v : softmax::kAllVersions) {
    INFO(softmax::version_name(v) << ": fill " << todo_of(v));
    for (int64_t cols : {int64_t{33}, int64_t{1000}, int64_t{8191}, int64_t{32768}}) {
      if (!softmax::supports<float>(v, 3, cols)) continue;
      INFO("cols = " << cols);
      const check::Placement in_place{1, 1, true};
      // Each element type, and both epilogues, writing over the row it reads.
      auto check_in_place = [&](auto tag, check::Op op, uint64_t seed) {
        using T = decltype(tag);
        INFO(common::DType<T>::name
             << (op == check::Op::Softmax ? " softmax" : " log_softmax")
             << (sizeof(T) == 2 ? ": also TODO 8 (softmax_precision.cuh)" : ""));
        REQUIRE_CHECK(check::check_forward(forward<T>(v, op), op, check::logits<T>(3, cols, seed),
                                           3, cols, in_place));
      };
      check_in_place(float{}, check::Op::Softmax, 9);
      check_in_place(float{}, check::Op::LogSoftmax, 11);
      check_in_place(__half{}, check::Op::Softmax, 12);
      check_in_place(__nv_bfloat16{}, check::Op::LogSoftmax, 10);
    }
  }
}

// Rows that all start on a 16-byte boundary and fill whole windows run the kernels' aligned
// instances (README, section 3): every shape of the benchmark does. Each aligned case here runs
// next to a neighbour that must not take them (y off by two elements) and in place (y == x,
// which does take them, reading and writing the same windows). 37 rows of 64 and 128
// elements: version 4's layout for rows of 9 to 16 windows, with a last block part full.
TEST_CASE("aligned rows, forward and backward", "[ch10_softmax][aligned]") {
  using Shape = std::pair<int64_t, int64_t>;
  const Shape shapes[] = {{37, 64},  {37, 128},  {3, 256},  {3, 1024},
                          {5, 2048}, {2, 16384}, {3, 32768}};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    uint64_t seed = 700;
    for (Version v : {Version::WarpPerRow, Version::BlockCached, Version::BlockReread,
                      Version::SplitRow, Version::Final}) {
      INFO(softmax::version_name(v) << ": fill " << todo_of(v));
      for (const auto& [rows, cols] : shapes) {
        if (!softmax::supports<T>(v, rows, cols)) continue;
        for (const check::Placement placement :
             {check::Placement{0, 0}, check::Placement{0, 2}, check::Placement{0, 0, true}}) {
          for (check::Op op : {check::Op::Softmax, check::Op::LogSoftmax}) {
            INFO(common::DType<T>::name << (op == check::Op::Softmax ? " softmax" : " log_softmax")
                                        << ", rows = " << rows << ", cols = " << cols
                                        << ", y misaligned by " << placement.out_misalign
                                        << (placement.in_place ? ", in place" : "")
                                        << (sizeof(T) == 2 ? " (also TODO 8)" : ""));
            REQUIRE_CHECK(check::check_forward(forward<T>(v, op), op,
                                               check::logits<T>(rows, cols, seed++), rows, cols,
                                               placement));
          }
        }
      }
    }
    INFO("backward: fill TODO 9 in softmax_backward.cu");
    const check::BackwardRun<T> backward = [](const T* y, const T* dy, T* dx, int64_t rows,
                                              int64_t cols) {
      softmax::softmax_backward(y, dy, dx, rows, cols);
    };
    for (const auto& [rows, cols] : shapes) {
      for (const check::Placement placement :
           {check::Placement{0, 0, false, 0}, check::Placement{0, 0, false, 2},
            check::Placement{0, 0, true}}) {
        INFO(common::DType<T>::name << " backward, rows = " << rows << ", cols = " << cols
                                    << (placement.in_place ? ", dx == dy" : "")
                                    << ", dx misaligned by " << placement.dx_misalign);
        std::vector<T> y, dy;
        check::backward_inputs(rows, cols, seed++, y, dy);
        REQUIRE_CHECK(check::check_backward(backward, y, dy, rows, cols, placement));
      }
    }
  };
  run(float{});
  run(__nv_bfloat16{});
  run(__half{});
}

TEST_CASE("arguments are validated", "[ch10_softmax][validation][given]") {
  // Each bad call names what is wrong: the message is checked, so that a call refused by another
  // check cannot pass for the one under test. Forward, log_softmax and backward alike.
  common::DeviceBuffer<float> a(64), b(64);
  const std::function<void(const float*, float*, int64_t, int64_t)> forwards[] = {
      [](const float* x, float* y, int64_t rows, int64_t cols) {
        softmax::softmax(x, y, rows, cols);
      },
      [](const float* x, float* y, int64_t rows, int64_t cols) {
        softmax::log_softmax(x, y, rows, cols);
      },
      [](const float* x, float* y, int64_t rows, int64_t cols) {
        softmax::softmax_backward(x, x, y, rows, cols);  // y and dy on one buffer: allowed
      }};
  const char* const names[] = {"softmax", "log_softmax", "softmax_backward"};
  const char* const pointers[] = {"x and y", "x and y", "y, dy and dx"};
  const char* const overlaps[] = {"x and y overlap without being equal",
                                  "x and y overlap without being equal", "dx overlaps y or dy"};
  for (int i = 0; i < 3; ++i) {
    INFO(names[i]);
    const auto& call = forwards[i];
    // Each message begins with the public function called.
    auto from = [&](const std::string& what) { return names[i] + (": " + what); };
    REQUIRE_INVALID_ARGUMENT(call(a.data(), b.data(), 1, 0), from("cols must be >= 1"));
    REQUIRE_INVALID_ARGUMENT(call(a.data(), b.data(), -1, 4), from("rows must be >= 0"));
    REQUIRE_INVALID_ARGUMENT(call(a.data(), b.data(), int64_t{1} << 61, 2),
                             from("rows * cols elements overflow 64 bits of bytes"));
    REQUIRE_INVALID_ARGUMENT(call(nullptr, b.data(), 2, 4),
                             from(pointers[i] + std::string(" must be device pointers, got null")));
    REQUIRE_INVALID_ARGUMENT(call(a.data(), nullptr, 2, 4),
                             from(pointers[i] + std::string(" must be device pointers, got null")));
    const float* odd = common::offset_bytes(a.data(), 2);
    REQUIRE_INVALID_ARGUMENT(call(odd, b.data(), 2, 4),
                             from(pointers[i] + std::string(" must be aligned to their element")));
    // Partial overlap: the output starts one element into the input.
    REQUIRE_INVALID_ARGUMENT(call(a.data(), a.data() + 1, 2, 8), from(overlaps[i]));
    // No rows: nothing to do, nothing thrown, nothing launched.
    REQUIRE_NOTHROW(call(nullptr, nullptr, 0, 7));
  }
  REQUIRE_INVALID_ARGUMENT(softmax::softmax_backward(a.data(), b.data(), a.data() + 2, 2, 8),
                           "dx overlaps y or dy");
  REQUIRE_INVALID_ARGUMENT(softmax::softmax_backward(a.data(), b.data(), b.data() + 2, 2, 8),
                           "dx overlaps y or dy");
  {  // Buffers that hold the row: only the row's length is wrong for version 4.
    common::DeviceBuffer<float> x(1025), y(1025);
    REQUIRE_INVALID_ARGUMENT(softmax::softmax(Version::WarpPerRow, x.data(), y.data(), 1, 1025),
                             "softmax: version 4 keeps a row in one warp's registers");
    REQUIRE_INVALID_ARGUMENT(softmax::log_softmax(Version::WarpPerRow, x.data(), y.data(), 1, 1025),
                             "log_softmax: version 4 keeps a row in one warp's registers");
    REQUIRE_INVALID_ARGUMENT(softmax::softmax(static_cast<Version>(99), x.data(), y.data(), 1, 4),
                             "softmax: unknown version 99");
  }
  {  // Rows longer than versions 5, 5b and 6 hold, refused before anything is read (in place, so
     // that no other check can refuse first).
    common::DeviceBuffer<float> x(1);
    const int64_t long_row = int64_t{1} << 28;
    REQUIRE_INVALID_ARGUMENT(
        softmax::softmax(Version::BlockCached, x.data(), x.data(), 1, long_row),
        "softmax: version 5: a row of " + std::to_string(long_row) + " elements at this alignment");
    REQUIRE_INVALID_ARGUMENT(
        softmax::log_softmax(Version::BlockReread, x.data(), x.data(), 1, (int64_t{1} << 30) + 1),
        "log_softmax: version 5b takes rows of at most 1073741824 elements");
    if (softmax::detail::clusters_supported()) {  // before sm_90: the split_row test's refusal
      REQUIRE_INVALID_ARGUMENT(
          softmax::softmax(Version::SplitRow, x.data(), x.data(), 1, long_row),
          "softmax: version 6: a row of " + std::to_string(long_row) + " elements at this");
    }
  }
  // supports() sees the shape alone: false for the shapes every call refuses.
  REQUIRE_FALSE(softmax::supports<float>(Version::WarpPerRow, 1, 1025));
  REQUIRE_FALSE(softmax::supports<float>(Version::Final, 1, 0));
  REQUIRE_FALSE(softmax::supports<float>(Version::Final, -1, 4));
  REQUIRE_FALSE(softmax::supports<float>(Version::Final, int64_t{1} << 61, 2));
  REQUIRE_FALSE(softmax::supports<float>(static_cast<Version>(0), 1, 4));
  REQUIRE(softmax::supports<float>(Version::Final, 1, 4));
}

TEST_CASE("more than 2^31 elements, bf16, the final version", "[ch10_softmax][final][large]") {
  INFO(
      "fill TODOs 7 and 8 and the version TODO 7 picks (5b on an H100 or H200): 2^31 + 32768 "
      "bf16 elements (row * cols overflows 32 bits)");
  using T = __nv_bfloat16;
  const int64_t cols = 32768, rows = (int64_t{1} << 31) / cols + 1;  // 2^31 + 32768 elements
  SKIP_UNLESS_FREE_GPU_MEMORY(2 * rows * cols * sizeof(T));          // x and y
  // Each row a different rotation of one random pool, so a kernel that wraps its offsets at
  // 2^31 reads a row with other values and fails.
  const auto pool = common::gen::uniform_as<T>(1 << 20, 31, -8.0f, 8.0f);
  std::vector<T> x(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      x[r * cols + j] = pool[static_cast<size_t>((j * 7 + r * 131) % (1 << 20))];
  const std::vector<int64_t> compared = {0, 1, rows / 2, rows - 2, rows - 1};
  REQUIRE_CHECK(check::check_forward(forward<T>(Version::Final, check::Op::Softmax),
                                     check::Op::Softmax, x, rows, cols, {}, compared));
}
