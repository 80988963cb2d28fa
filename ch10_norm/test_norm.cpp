// Chapter 10's GPU tests, built twice: against the skeleton (the student's build, ctest label
// student_ch10_norm, selected by -L ch10_norm) and against the solution (label solutions).
// Each TEST_CASE checks one TODO (or the TODOs one version needs), for fp32, fp16 and bf16.
// [sm90]: before sm_90 the test only checks that the version refuses.
#include "check.h"
#include "cpu_ref.h"
#include "norm.h"

#include "common/catch_compat.hpp"
#include "common/compare.hpp"
#include "common/data_gen.hpp"
#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/gpu_info.hpp"
#include "common/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using check::Data;
using check::Placement;
using normalization::LayerNormVersion;
using normalization::RmsNormVersion;

namespace {

// Row lengths around every boundary of the kernels: 1 and 2 (shorter than a pack), the warp (32),
// each pack count a warp's lanes hold (127, 256, 512, 768: 1, 2, 4 and 8 packs a lane in fp32;
// 256 to 1024 in 16-bit), a warp's register capacity (1024), block sizes up to the register
// limit (16K), and a row too long for registers (65536 + 3, also not a multiple of any pack).
const std::vector<int64_t> kRowLengths = {1,    2,    31,   32,   33,   127,   256,   512,      768,
                                          1024, 1025, 4096, 5120, 8192, 12288, 16384, 65536 + 3};

// Every length with M = 1 and M = 3; M = 4096 for the rows of up to 1025 elements, where many
// rows share a block (warp per row), and for 4096 elements; two more long-row shapes with 512+
// rows, two with a few hundred. Longer rows with M = 4096 would add minutes to the sanitizer run
// without reaching a path the others miss (the kernels loop over rows in the same way); the
// benchmark runs them and the [large] tests cover M·N > 2^31.
std::vector<std::pair<int64_t, int64_t>> shapes(int64_t max_n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t n : kRowLengths) {
    if (n > max_n) continue;
    out.push_back({1, n});
    out.push_back({3, n});
    if (n <= 1025 || n == 4096) out.push_back({4096, n});
  }
  // Long rows with many rows: the block-per-row layouts for throughput (4 and 8 packs per
  // thread), which the registers kernels choose from 512 rows on.
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{640, 5120}, {544, 12288}})
    if (n <= max_n) out.push_back({rows, n});
  // More rows than SMs, fewer than kManyRows: the Registers versions' block shapes for a few
  // hundred rows (few_rows_block_shape: 1 to 4 packs a thread by op and type), at a length no
  // pack divides and at one every pack divides.
  const int64_t sms = common::device_properties().multiProcessorCount;
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{sms + 3, 3077}, {2 * sms + 1, 8192}})
    if (n <= max_n && rows < normalization::kManyRows) out.push_back({rows, n});
  return out;
}

// Aligned; every buffer misaligned alike (the head is peeled, the rest is vectorized); buffers
// misaligned differently (no common 16-byte boundary: the scalar path).
const Placement kPlacements[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {3, 1, 2, 5}};
// The placement of the index-th shape. shapes() lists most lengths with three row counts in a
// row, so index % 3 alone would give every M = 4096 shape the same placement: the shift moves
// each round of three on by one.
const Placement& placement_of(int index) {
  return kPlacements[(index + index / 3) % 3];
}

// In place (y == x), aligned and misaligned; every version supports it (norm.h). The shape
// loops below run every fourth shape a second time this way.
const Placement kInPlace[] = {{0, 0, 0, 0, true}, {1, 1, 2, 3, true}};
bool also_in_place(int index) {
  return index % 4 == 0;
}
const Placement& in_place_placement(int index) {
  return kInPlace[index / 4 % 2];
}

// Without the statistics (mean and rstd nullptr, which norm.h allows), misaligned: another
// fourth of the shapes runs once more this way, so that a kernel storing them unconditionally
// faults here.
const Placement kWithoutStatistics = {1, 1, 1, 1, false, false};
bool also_without_statistics(int index) {
  return index % 4 == 2;
}

// Rows with a mean far above their spread, constant rows, NaN and inf: three lengths each (warp
// per row, block per row, and the longest row a version takes), at placement_of(i) for the i-th
// case, so that each kind meets every placement. With huge_mean (LayerNorm in float) also finite
// rows whose mean squared overflows float.
std::vector<std::pair<Data, int64_t>> special_cases(int64_t max_n, bool huge_mean = false) {
  std::vector<Data> kinds = {Data::LargeMean, Data::ConstantRows, Data::NonFinite};
  if (huge_mean) kinds.push_back(Data::HugeMean);
  std::vector<std::pair<Data, int64_t>> out;
  for (Data d : kinds)
    for (int64_t n : {int64_t{33}, int64_t{4096}, std::min(max_n, kRowLengths.back())})
      out.push_back({d, n});
  return out;
}
// The special cases' eps: not the default 1e-5, so that a kernel that ignores its eps argument
// fails them (on a row of zeros rstd is 1 / sqrt(eps) itself).
constexpr float kSpecialCaseEps = 0.1f;

template <typename T>
check::LayerNormRun<T> layernorm_run(LayerNormVersion v) {
  return [v](const T* x, const T* g, const T* b, T* y, float* mean, float* rstd, int64_t rows,
             int64_t n,
             float eps) { normalization::layernorm(v, x, g, b, y, mean, rstd, rows, n, eps); };
}
template <typename T>
check::RmsNormRun<T> rmsnorm_run(RmsNormVersion v) {
  return [v](const T* x, const T* g, T* y, float* rstd, int64_t rows, int64_t n, float eps) {
    normalization::rmsnorm(v, x, g, y, rstd, rows, n, eps);
  };
}
template <typename T>
check::AddRmsNormRun<T> add_rmsnorm_run(RmsNormVersion v) {
  return [v](const T* x, T* r, const T* g, T* y, float* rstd, int64_t rows, int64_t n, float eps) {
    normalization::add_rmsnorm(v, x, r, g, y, rstd, rows, n, eps);
  };
}

template <typename T>
std::string name_of(const char* version) {
  return std::string(version) + " " + common::DType<T>::name;
}

template <typename T>
void check_layernorm_version(LayerNormVersion v, int64_t max_n) {
  const std::string name = name_of<T>(normalization::version_name(v));
  uint64_t seed = 100;
  int index = 0;
  for (auto [rows, n] : shapes(max_n)) {
    // γ and β are sometimes absent: both, no β, no γ, neither... in turn.
    const bool gamma = index % 4 < 2, beta = index % 2 == 0;
    const auto p = check::make_problem<T>(rows, n, Data::Normal, gamma, beta, false, ++seed);
    const auto e = check::expect_layernorm(p);
    REQUIRE_CHECK(check::check_layernorm<T>(name, layernorm_run<T>(v), p, e, placement_of(index)));
    if (also_in_place(index)) {
      REQUIRE_CHECK(
          check::check_layernorm<T>(name, layernorm_run<T>(v), p, e, in_place_placement(index)));
    }
    if (also_without_statistics(index))
      REQUIRE_CHECK(check::check_layernorm<T>(name, layernorm_run<T>(v), p, e, kWithoutStatistics));
    ++index;
  }
  int case_index = 0;
  for (auto [data, n] : special_cases(max_n, std::is_same_v<T, float>)) {
    auto p = check::make_problem<T>(4, n, data, true, true, false, ++seed);
    p.eps = kSpecialCaseEps;
    REQUIRE_CHECK(check::check_layernorm<T>(
        name, layernorm_run<T>(v), p, check::expect_layernorm(p), placement_of(case_index++)));
  }
}

template <typename T>
void check_rmsnorm_version(RmsNormVersion v, int64_t max_n) {
  const std::string name =
      name_of<T>((std::string("rmsnorm_") + normalization::version_name(v)).c_str());
  uint64_t seed = 200;
  int index = 0;
  for (auto [rows, n] : shapes(max_n)) {
    const auto p =
        check::make_problem<T>(rows, n, Data::Normal, index % 3 != 2, false, false, ++seed);
    const auto e = check::expect_rmsnorm(p);
    REQUIRE_CHECK(check::check_rmsnorm<T>(name, rmsnorm_run<T>(v), p, e, placement_of(index)));
    if (also_in_place(index)) {
      REQUIRE_CHECK(
          check::check_rmsnorm<T>(name, rmsnorm_run<T>(v), p, e, in_place_placement(index)));
    }
    if (also_without_statistics(index))
      REQUIRE_CHECK(check::check_rmsnorm<T>(name, rmsnorm_run<T>(v), p, e, kWithoutStatistics));
    ++index;
  }
  int case_index = 0;
  for (auto [data, n] : special_cases(max_n)) {
    auto p = check::make_problem<T>(4, n, data, true, false, false, ++seed);
    p.eps = kSpecialCaseEps;
    REQUIRE_CHECK(check::check_rmsnorm<T>(name, rmsnorm_run<T>(v), p, check::expect_rmsnorm(p),
                                          placement_of(case_index++)));
  }
}

template <typename T>
void check_add_rmsnorm_version(RmsNormVersion v, int64_t max_n) {
  const std::string name =
      name_of<T>((std::string("add_rmsnorm_") + normalization::version_name(v)).c_str());
  uint64_t seed = 300;
  int index = 0;
  for (auto [rows, n] : shapes(max_n)) {
    const auto p =
        check::make_problem<T>(rows, n, Data::Normal, index % 3 != 2, false, true, ++seed);
    const auto e = check::expect_add_rmsnorm(p);
    REQUIRE_CHECK(
        check::check_add_rmsnorm<T>(name, add_rmsnorm_run<T>(v), p, e, placement_of(index)));
    if (also_in_place(index)) {
      REQUIRE_CHECK(check::check_add_rmsnorm<T>(name, add_rmsnorm_run<T>(v), p, e,
                                                in_place_placement(index)));
    }
    if (also_without_statistics(index)) {
      REQUIRE_CHECK(
          check::check_add_rmsnorm<T>(name, add_rmsnorm_run<T>(v), p, e, kWithoutStatistics));
    }
    ++index;
  }
  int case_index = 0;
  for (auto [data, n] : special_cases(max_n)) {
    auto p = check::make_problem<T>(4, n, data, true, false, true, ++seed);
    p.eps = kSpecialCaseEps;
    REQUIRE_CHECK(check::check_add_rmsnorm<T>(
        name, add_rmsnorm_run<T>(v), p, check::expect_add_rmsnorm(p), placement_of(case_index++)));
  }
}

constexpr int64_t kAnyN = int64_t{1} << 40;

}  // namespace

TEST_CASE("layernorm two-pass: mean, variance of x - mean, normalize", "[ch10_norm][two_pass]") {
  INFO("fill TODO 1 in ch10_norm/layernorm.cu");
  check_layernorm_version<float>(LayerNormVersion::TwoPass, kAnyN);
  check_layernorm_version<__half>(LayerNormVersion::TwoPass, kAnyN);
  check_layernorm_version<__nv_bfloat16>(LayerNormVersion::TwoPass, kAnyN);
}

TEST_CASE("layernorm welford: one sweep, triples merged in warps and across warps",
          "[ch10_norm][welford]") {
  INFO("fill TODO 3 in ch10_norm/layernorm.cu");
  check_layernorm_version<float>(LayerNormVersion::Welford, kAnyN);
  check_layernorm_version<__half>(LayerNormVersion::Welford, kAnyN);
  check_layernorm_version<__nv_bfloat16>(LayerNormVersion::Welford, kAnyN);
}

TEST_CASE("layernorm with the row in registers and 16-byte loads", "[ch10_norm][registers]") {
  INFO("fill TODO 4 in ch10_norm/row_in_registers.cuh and TODO 5 in ch10_norm/layernorm.cu");
  check_layernorm_version<float>(LayerNormVersion::Registers,
                                 normalization::max_registers_n<float>());
  check_layernorm_version<__half>(LayerNormVersion::Registers,
                                  normalization::max_registers_n<__half>());
  check_layernorm_version<__nv_bfloat16>(LayerNormVersion::Registers,
                                         normalization::max_registers_n<__nv_bfloat16>());
  // The longest row that fits, with every buffer misaligned alike: the most packs per thread.
  const int64_t n = normalization::max_registers_n<float>();
  const auto p = check::make_problem<float>(2, n, Data::Normal, true, true, false, 7);
  REQUIRE_CHECK(check::check_layernorm<float>("layernorm_3_registers fp32",
                                              layernorm_run<float>(LayerNormVersion::Registers), p,
                                              check::expect_layernorm(p), kPlacements[1]));
  {  // One element past the capacity: the launchers refuse instead of overrunning registers.
    const int64_t too_long = normalization::max_registers_n<float>() + 1;
    common::DeviceBuffer<float> x(static_cast<size_t>(too_long)), y(static_cast<size_t>(too_long));
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Registers, x.data(), nullptr, nullptr,
                                        y.data(), nullptr, nullptr, 1, too_long, 1e-5f),
        "layernorm: n = " + std::to_string(too_long) + " does not fit in registers");
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Registers, x.data(), nullptr, y.data(),
                                      nullptr, 1, too_long, 1e-5f),
        "rmsnorm: n = " + std::to_string(too_long) + " does not fit in registers");
  }
}

TEST_CASE("rmsnorm: one reduction of x^2, same vectorized machinery", "[ch10_norm][rmsnorm]") {
  INFO("fill TODO 6 in ch10_norm/rmsnorm.cu (it uses TODO 4's load_row)");
  for (RmsNormVersion v : {RmsNormVersion::BlockLoop, RmsNormVersion::Registers}) {
    const bool any = v == RmsNormVersion::BlockLoop;
    check_rmsnorm_version<float>(v, any ? kAnyN : normalization::max_registers_n<float>());
    check_rmsnorm_version<__half>(v, any ? kAnyN : normalization::max_registers_n<__half>());
    check_rmsnorm_version<__nv_bfloat16>(
        v, any ? kAnyN : normalization::max_registers_n<__nv_bfloat16>());
  }
}

TEST_CASE("fused residual add + rmsnorm writes r = x + residual back and normalizes it",
          "[ch10_norm][fused_add]") {
  INFO("fill TODO 7 in ch10_norm/rmsnorm.cu (it uses TODOs 4 and 6)");
  for (RmsNormVersion v : {RmsNormVersion::BlockLoop, RmsNormVersion::Registers}) {
    const bool any = v == RmsNormVersion::BlockLoop;
    check_add_rmsnorm_version<float>(v, any ? kAnyN : normalization::max_registers_n<float>());
    check_add_rmsnorm_version<__half>(v, any ? kAnyN : normalization::max_registers_n<__half>());
    check_add_rmsnorm_version<__nv_bfloat16>(
        v, any ? kAnyN : normalization::max_registers_n<__nv_bfloat16>());
  }
}

// The longest row of kRowLengths that the Pipelined versions take on this GPU (0: none).
template <typename T>
int64_t max_pipelined_n(bool fused) {
  int64_t longest = 0;
  for (int64_t n : kRowLengths)
    if (normalization::pipelined_available<T>(n, fused)) longest = std::max(longest, n);
  return longest;
}

template <typename T>
void check_pipelined_versions() {
  check_layernorm_version<T>(LayerNormVersion::Pipelined, max_pipelined_n<T>(false));
  check_rmsnorm_version<T>(RmsNormVersion::Pipelined, max_pipelined_n<T>(false));
  check_add_rmsnorm_version<T>(RmsNormVersion::Pipelined, max_pipelined_n<T>(true));
  // Enough rows that every block's ring wraps around at least once on any GPU of up to ~150
  // SMs (the shapes above may give each block fewer rows than it has stages): each barrier is
  // reused, so its phase parity must flip, and each buffer is refilled after it was read.
  const int64_t rows = 8192, n = 2048;
  auto p = check::make_problem<T>(rows, n, Data::Normal, true, true, false, 400);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_layernorm<T>(name_of<T>("layernorm_4_pipelined, ring wraps"),
                                            layernorm_run<T>(LayerNormVersion::Pipelined), p,
                                            check::expect_layernorm(p), at));
  }
  p = check::make_problem<T>(rows, n, Data::Normal, true, false, true, 401);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_add_rmsnorm<T>(name_of<T>("add_rmsnorm_3_pipelined, ring wraps"),
                                              add_rmsnorm_run<T>(RmsNormVersion::Pipelined), p,
                                              check::expect_add_rmsnorm(p), at));
  }
}

// Two host threads launching one kernel instance at once, with rings of different sizes: bf16 rows
// of 12288 and 16384 elements both take 2 packs a thread, in rings of 48 and 64 KiB. The kernel's
// shared-memory limit is one value for both threads (pipelined_grid in ring_config.h); each
// thread's last output must equal that of the same call made alone.
void check_pipelined_from_two_threads() {
  using T = __nv_bfloat16;
  constexpr int kLaunchesPerThread = 200;
  const int64_t rows = 64;
  struct Job {
    int64_t n;
    common::DeviceBuffer<T> x, y;
    std::vector<T> alone;
    std::exception_ptr error;
  };
  std::vector<Job> jobs;
  // Streams and threads are released however the test ends, the threads joined first (they are
  // declared last) and the jobs' buffers freed last.
  struct Streams {
    cudaStream_t s[2] = {nullptr, nullptr};
    ~Streams() {
      for (cudaStream_t stream : s)
        if (stream != nullptr) cudaStreamDestroy(stream);
    }
  } streams;
  struct Threads {
    std::vector<std::thread> t;
    ~Threads() {
      for (std::thread& thread : t)
        if (thread.joinable()) thread.join();
    }
  } threads;
  auto launch = [rows](Job& job, cudaStream_t stream) {
    normalization::layernorm<T>(LayerNormVersion::Pipelined, job.x.data(), nullptr, nullptr,
                                job.y.data(), nullptr, nullptr, rows, job.n, 1e-5f, stream);
  };
  for (int64_t n : {int64_t{12288}, int64_t{16384}}) {
    REQUIRE(normalization::pipelined_available<T>(n, false));
    const auto elements = static_cast<size_t>(rows * n);
    Job job{n,
            common::DeviceBuffer<T>(
                common::gen::uniform_as<T>(elements, static_cast<uint64_t>(500 + n), -2.0f, 2.0f)),
            common::DeviceBuffer<T>(elements),
            {},
            nullptr};
    job.y.fill_bytes(common::kPoisonByte);
    launch(job, nullptr);
    job.alone = job.y.download();
    INFO("bf16 layernorm_4_pipelined, " << rows << " x " << n << ", alone");
    REQUIRE(common::first_unwritten(job.alone) == -1);
    job.y.fill_bytes(common::kPoisonByte);
    jobs.push_back(std::move(job));
  }
  for (cudaStream_t& stream : streams.s)
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // The poison is in place before either stream, which does not wait for the default one, runs.
  CUDA_CHECK(cudaDeviceSynchronize());
  for (size_t j = 0; j < jobs.size(); ++j) {
    threads.t.emplace_back([&launch, &job = jobs[j], stream = streams.s[j]] {
      try {
        for (int i = 0; i < kLaunchesPerThread; ++i)
          launch(job, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
      } catch (...) {
        job.error = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads.t)
    t.join();
  for (Job& job : jobs) {
    const std::string name = "bf16 layernorm_4_pipelined, " + std::to_string(rows) + " x " +
                             std::to_string(job.n) + ", two host threads";
    INFO(name);
    if (job.error) std::rethrow_exception(job.error);  // Catch reports it, with its message
    REQUIRE_CHECK(common::check_same_bits(job.y.download(), job.alone, name));
  }
}

TEST_CASE("pipelined: rows streamed through a shared-memory ring by the copy engine",
          "[ch10_norm][pipelined][sm90]") {
  INFO("fill TODO 10 in ch10_norm/row_ring.cuh (it runs TODOs 4 to 7 on the rows it brings)");
  if (!normalization::pipelined_available<float>(1024, false)) {
    // Before sm_90 there are no bulk copies: the version must refuse, clearly.
    common::DeviceBuffer<float> x(1024), y(1024);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Pipelined, x.data(), nullptr, nullptr,
                                        y.data(), nullptr, nullptr, 1, 1024, 1e-5f),
        "layernorm: the pipelined version cannot run rows of n = 1024 here: it needs the bulk "
        "copies of sm_90");
    return;
  }
  {  // A row beyond what the ring takes is refused, and why (in place: no other check can refuse
     // first; nothing is read).
    int64_t too_long = 1024;
    while (normalization::pipelined_available<float>(too_long, false))
      too_long *= 2;
    common::DeviceBuffer<float> x(1);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Pipelined, x.data(), nullptr, nullptr,
                                        x.data(), nullptr, nullptr, 1, too_long, 1e-5f),
        "layernorm: the pipelined version cannot run rows of n = " + std::to_string(too_long) +
            " here: a thread's share of the row must fit in registers");
  }
  check_pipelined_versions<float>();
  check_pipelined_versions<__half>();
  check_pipelined_versions<__nv_bfloat16>();
}

TEST_CASE("pipelined: two host threads launch one kernel with rings of different sizes",
          "[ch10_norm][pipelined][threads][sm90]") {
  INFO("fill TODO 10 in ch10_norm/row_ring.cuh (it runs TODOs 4 to 7 on the rows it brings)");
  if (!normalization::pipelined_available<__nv_bfloat16>(16384, false)) {
    // Only before sm_90, where the test above checks the refusal: on sm_90 both rows fit.
    REQUIRE_FALSE(common::has_sm90_features());
    return;
  }
  check_pipelined_from_two_threads();
}

TEST_CASE("reread: statistics in batches, the row read again from cache to normalize",
          "[ch10_norm][reread]") {
  INFO(
      "fill TODO 11 in ch10_norm/layernorm.cu (RMSNorm's reread kernel is given; both use "
      "TODO 4's load_row)");
  check_layernorm_version<float>(LayerNormVersion::Reread, kAnyN);
  check_layernorm_version<__half>(LayerNormVersion::Reread, kAnyN);
  check_layernorm_version<__nv_bfloat16>(LayerNormVersion::Reread, kAnyN);
  check_rmsnorm_version<float>(RmsNormVersion::Reread, kAnyN);
  check_rmsnorm_version<__half>(RmsNormVersion::Reread, kAnyN);
  check_rmsnorm_version<__nv_bfloat16>(RmsNormVersion::Reread, kAnyN);
  check_add_rmsnorm_version<float>(RmsNormVersion::Reread, kAnyN);
  check_add_rmsnorm_version<__half>(RmsNormVersion::Reread, kAnyN);
  check_add_rmsnorm_version<__nv_bfloat16>(RmsNormVersion::Reread, kAnyN);
  // Many rows in several batches each: every block's first and second passes walk the batches in
  // opposite orders. Misaligned rows (n not a multiple of the pack: the first case) take batches
  // of 512 threads x 4 packs, 6 or 7 a row, and handle their head and tail elements apart from
  // them; aligned rows of more than 512 x 4 packs take batches of 8 packs where the op has them
  // (fp32 LayerNorm and RMSNorm: 4 batches a row, the last of one pack; bf16 RMSNorm: one batch
  // of a whole row), the fused add batches of 4 (4 a row, the last of one pack).
  const auto p = check::make_problem<float>(600, 3 * 16384 + 5, Data::Normal, true, true, false, 9);
  for (const Placement& at : {kPlacements[1], kInPlace[1]}) {
    REQUIRE_CHECK(check::check_layernorm<float>("layernorm_5_reread fp32, 6 or 7 batches a row",
                                                layernorm_run<float>(LayerNormVersion::Reread), p,
                                                check::expect_layernorm(p), at));
  }
  const auto p8 =
      check::make_problem<float>(600, 3 * 16384 + 4, Data::Normal, true, true, false, 10);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_layernorm<float>("layernorm_5_reread fp32, 4 batches of 8 packs",
                                                layernorm_run<float>(LayerNormVersion::Reread), p8,
                                                check::expect_layernorm(p8), at));
  }
  const auto r8 =
      check::make_problem<float>(600, 3 * 16384 + 4, Data::Normal, true, false, false, 11);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_rmsnorm<float>("rmsnorm_4_reread fp32, 4 batches of 8 packs",
                                              rmsnorm_run<float>(RmsNormVersion::Reread), r8,
                                              check::expect_rmsnorm(r8), at));
  }
  const auto b8 =
      check::make_problem<__nv_bfloat16>(300, 32768, Data::Normal, true, false, false, 12);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_rmsnorm<__nv_bfloat16>(
        "rmsnorm_4_reread bf16, one batch of 8 packs a row",
        rmsnorm_run<__nv_bfloat16>(RmsNormVersion::Reread), b8, check::expect_rmsnorm(b8), at));
  }
  const auto a4 =
      check::make_problem<float>(600, 3 * 8192 + 4, Data::Normal, true, false, true, 13);
  for (const Placement& at : {kPlacements[0], kInPlace[0]}) {
    REQUIRE_CHECK(check::check_add_rmsnorm<float>("add_rmsnorm_4_reread fp32, 4 batches a row",
                                                  add_rmsnorm_run<float>(RmsNormVersion::Reread),
                                                  a4, check::expect_add_rmsnorm(a4), at));
  }
  {  // Rows longer than kMaxRereadN are refused before anything is read (in place: y == x, so
     // that no other check, such as the one for overlapping buffers, can refuse the call first).
    common::DeviceBuffer<float> x(1);
    REQUIRE_INVALID_ARGUMENT(normalization::layernorm<float>(
                                 LayerNormVersion::Reread, x.data(), nullptr, nullptr, x.data(),
                                 nullptr, nullptr, 1, normalization::kMaxRereadN + 1, 1e-5f),
                             "layernorm: the reread version takes rows of at most");
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Reread, x.data(), nullptr, x.data(), nullptr,
                                      1, normalization::kMaxRereadN + 1, 1e-5f),
        "rmsnorm: the reread version takes rows of at most");
  }
}

TEST_CASE("the dispatchers pick by rows and row length, are right for every N, check arguments",
          "[ch10_norm][dispatch]") {
  INFO("fill TODOs 8 and 9 in ch10_norm/dispatch.cu (the dispatchers run TODOs 3 to 7, 10 and 11)");
  using normalization::NormOp;
  const int64_t many = normalization::kManyRows;
  for (int64_t n : kRowLengths) {
    // The ring's rule, written out: many rows, 2-byte elements, rows long enough for the op;
    // with fewer rows, LayerNorm from 8 KiB with more than two rows per SM.
    const int64_t sms = common::device_properties().multiProcessorCount;
    auto expected_ring = [&](NormOp op, int64_t rows, int64_t min_bytes) {
      const bool few_rows_ring =
          op == NormOp::LayerNorm && rows < many && rows > 2 * sms && n * 2 >= min_bytes;
      return ((rows >= many && n * 2 >= min_bytes) || few_rows_ring) &&
             normalization::pipelined_available<__nv_bfloat16>(n, op == NormOp::AddRmsNorm);
    };
    const bool fits = n <= normalization::max_registers_n<__nv_bfloat16>();
    const LayerNormVersion without_ring =
        fits ? LayerNormVersion::Registers : LayerNormVersion::Welford;
    const RmsNormVersion without_ring_rms =
        fits ? RmsNormVersion::Registers : RmsNormVersion::BlockLoop;
    for (int64_t rows : {int64_t{1}, many - 1, many, int64_t{4096}}) {
      // Where reading twice pays it runs: it is first in line.
      const bool reread_ln = normalization::reread_pays<__nv_bfloat16>(NormOp::LayerNorm, rows, n);
      const bool reread_rms = normalization::reread_pays<__nv_bfloat16>(NormOp::RmsNorm, rows, n);
      const bool reread_add =
          normalization::reread_pays<__nv_bfloat16>(NormOp::AddRmsNorm, rows, n);
      // Fewer rows: read twice when the row is long (beyond 32 KiB), with more than two rows per
      // SM when it has 10 KiB or more (up to two per SM: over 16 KiB, RMSNorm over 20 KiB); a
      // row of at most one per SM keeps the Registers versions' latency layout.
      if (rows < many && fits && (rows <= sms || rows > 2 * sms)) {
        const bool expected = n * 2 > 32 * 1024 || (rows > 2 * sms && n * 2 >= 10 * 1024);
        CHECK(reread_ln == expected);
        CHECK(reread_rms == expected);
        CHECK(reread_add == expected);
      }
      if (!fits) CHECK((reread_ln && reread_rms && reread_add));
      if (reread_ln) {
        CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(rows, n) ==
              LayerNormVersion::Reread);
      }
      if (reread_rms) {
        CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(rows, n, false) ==
              RmsNormVersion::Reread);
      }
      if (reread_add) {
        CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(rows, n, true) ==
              RmsNormVersion::Reread);
      }
      CHECK(normalization::pipelined_pays<__nv_bfloat16>(NormOp::LayerNorm, rows, n) ==
            expected_ring(NormOp::LayerNorm, rows, 8192));
      CHECK(normalization::pipelined_pays<__nv_bfloat16>(NormOp::RmsNorm, rows, n) ==
            expected_ring(NormOp::RmsNorm, rows, 16384));
      CHECK(normalization::pipelined_pays<__nv_bfloat16>(NormOp::AddRmsNorm, rows, n) ==
            expected_ring(NormOp::AddRmsNorm, rows, 18432));
      if (!reread_ln) {
        CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(rows, n) ==
              (expected_ring(NormOp::LayerNorm, rows, 8192) ? LayerNormVersion::Pipelined
                                                            : without_ring));
      }
      if (!reread_rms) {
        CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(rows, n, false) ==
              (expected_ring(NormOp::RmsNorm, rows, 16384) ? RmsNormVersion::Pipelined
                                                           : without_ring_rms));
      }
      if (!reread_add) {
        CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(rows, n, true) ==
              (expected_ring(NormOp::AddRmsNorm, rows, 18432) ? RmsNormVersion::Pipelined
                                                              : without_ring_rms));
      }
    }
    // fp32 rows already keep 64 bytes per thread in flight: no ring with many rows.
    for (NormOp op : {NormOp::LayerNorm, NormOp::RmsNorm, NormOp::AddRmsNorm})
      CHECK_FALSE(normalization::pipelined_pays<float>(op, 4096, n));
    if (!normalization::reread_pays<float>(NormOp::RmsNorm, 4096, n)) {
      CHECK(normalization::choose_rmsnorm_version<float>(4096, n, false) ==
            (n <= normalization::max_registers_n<float>() ? RmsNormVersion::Registers
                                                          : RmsNormVersion::BlockLoop));
    }
  }
  {  // The rule for fewer rows at lengths kRowLengths lacks (TUNING.md's tables of fewer rows).
    const int64_t sms = common::device_properties().multiProcessorCount;
    // A long row (40 KiB of bf16) is read twice at any count.
    for (int64_t rows : {int64_t{1}, sms, many - 1}) {
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(rows, 20480, true) ==
            RmsNormVersion::Reread);
    }
    if (2 * sms < many) {
      // fp32: at most a row per SM keeps the latency layout; up to two rows per SM, rows of 16
      // KiB stay in registers and longer ones are read twice, except RMSNorm's (up to 32 KiB in
      // registers); from the third row per SM on, rows of 16 KiB are read twice.
      CHECK(normalization::choose_layernorm_version<float>(sms, 8192) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<float>(2 * sms, 4096) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms, 4096, true) ==
            RmsNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms, 5120, true) ==
            RmsNormVersion::Reread);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms, 4096, false) ==
            RmsNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms, 8192, false) ==
            RmsNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<float>(sms + 1, 7168, false) ==
            RmsNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms + 1, 4096, false) ==
            RmsNormVersion::Reread);
      // Past the Reread kernel's resident blocks (fp32 LayerNorm over 16 KiB: 512 threads at 64
      // registers, two blocks per SM) LayerNorm rows over 20 KiB take the ring where there is
      // one (without it, Reread), those of up to 20 KiB stay in registers; rows of 16 KiB
      // (blocks of 256, five per SM) stay with Reread.
      const bool ring_6144 = normalization::pipelined_available<float>(6144, false);
      CHECK(normalization::choose_layernorm_version<float>(2 * sms, 5120) ==
            LayerNormVersion::Reread);
      CHECK(normalization::choose_layernorm_version<float>(2 * sms + 1, 5120) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<float>(2 * sms + 1, 6144) ==
            (ring_6144 ? LayerNormVersion::Pipelined : LayerNormVersion::Reread));
      CHECK(normalization::choose_layernorm_version<float>(2 * sms + 1, 4096) ==
            LayerNormVersion::Reread);
      CHECK(normalization::choose_rmsnorm_version<float>(2 * sms + 1, 5120, true) ==
            RmsNormVersion::Reread);
      if (3 * sms < many) {
        // RMSNorm's Reread kernel holds three blocks of 512 per SM (40 registers); past them,
        // rows of 28 KiB take the ring (without it, Reread) and rows of 20 KiB stay in registers.
        CHECK(normalization::choose_rmsnorm_version<float>(3 * sms, 7168, false) ==
              RmsNormVersion::Reread);
        CHECK(normalization::choose_rmsnorm_version<float>(3 * sms + 1, 7168, false) ==
              (normalization::pipelined_available<float>(7168, false) ? RmsNormVersion::Pipelined
                                                                      : RmsNormVersion::Reread));
        CHECK(normalization::choose_rmsnorm_version<float>(3 * sms + 1, 5120, false) ==
              RmsNormVersion::Registers);
      }
      // 16-bit rows of 10 KiB: in registers up to two rows per SM, read twice from the third row
      // per SM on, by every operation. Rows of 8 KiB take the ring from the third row per SM on,
      // and RMSNorm keeps rows of 20 KiB in registers up to two rows per SM.
      const LayerNormVersion ring =
          normalization::pipelined_available<__nv_bfloat16>(4096, false) &&
                  normalization::pipelined_available<__nv_bfloat16>(5120, false)
              ? LayerNormVersion::Pipelined
              : LayerNormVersion::Registers;
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(sms, 5120) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms, 5120) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms, 8192) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms, 10240) ==
            LayerNormVersion::Reread);
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(2 * sms, 10240, false) ==
            RmsNormVersion::Registers);
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(2 * sms, 12288, false) ==
            RmsNormVersion::Reread);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms + 1, 5120) ==
            LayerNormVersion::Reread);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms, 4096) ==
            LayerNormVersion::Registers);
      CHECK(normalization::choose_layernorm_version<__nv_bfloat16>(2 * sms + 1, 4096) == ring);
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(2 * sms + 1, 5120, false) ==
            RmsNormVersion::Reread);
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(2 * sms + 1, 5120, true) ==
            RmsNormVersion::Reread);
      CHECK(normalization::choose_rmsnorm_version<__nv_bfloat16>(2 * sms + 1, 4096, true) ==
            RmsNormVersion::Registers);
    }
  }
  check_layernorm_version<float>(LayerNormVersion::Dispatch, kAnyN);
  check_layernorm_version<__half>(LayerNormVersion::Dispatch, kAnyN);
  check_layernorm_version<__nv_bfloat16>(LayerNormVersion::Dispatch, kAnyN);
  check_rmsnorm_version<float>(RmsNormVersion::Dispatch, kAnyN);
  check_rmsnorm_version<__half>(RmsNormVersion::Dispatch, kAnyN);
  check_rmsnorm_version<__nv_bfloat16>(RmsNormVersion::Dispatch, kAnyN);
  check_add_rmsnorm_version<float>(RmsNormVersion::Dispatch, kAnyN);
  check_add_rmsnorm_version<__half>(RmsNormVersion::Dispatch, kAnyN);
  check_add_rmsnorm_version<__nv_bfloat16>(RmsNormVersion::Dispatch, kAnyN);
  // M = 0 is a no-op (null pointers allowed); bad sizes, missing pointers, eps <= 0 and pointers
  // between two elements throw.
  REQUIRE_NOTHROW(normalization::layernorm<float>(LayerNormVersion::Dispatch, nullptr, nullptr,
                                                  nullptr, nullptr, nullptr, nullptr, 0, 768,
                                                  1e-5f));
  REQUIRE_NOTHROW(normalization::add_rmsnorm<__nv_bfloat16>(
      RmsNormVersion::Dispatch, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 768, 1e-5f));
  // Each bad call names what is wrong: the message is checked, so that a call refused by some
  // other check (a null pointer, an overlap) cannot pass for the one under test.
  {
    common::DeviceBuffer<float> a(64), b(64);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                        b.data(), nullptr, nullptr, 1, 0, 1e-5f),
        "layernorm: n must be >= 1");
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), nullptr, b.data(),
                                      nullptr, -1, 8, 1e-5f),
        "rmsnorm: rows must be >= 0");
    REQUIRE_INVALID_ARGUMENT(normalization::rmsnorm<float>(RmsNormVersion::Dispatch, nullptr,
                                                           nullptr, b.data(), nullptr, 4, 8, 1e-5f),
                             "rmsnorm: x and y must not be null");
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                        nullptr, nullptr, nullptr, 4, 8, 1e-5f),
        "layernorm: x and y must not be null");
    REQUIRE_INVALID_ARGUMENT(
        normalization::add_rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                          b.data(), nullptr, 2, 8, 1e-5f),
        "add_rmsnorm: x, residual and y must not be null");
    for (float eps : {-1.0f, INFINITY, NAN}) {
      REQUIRE_INVALID_ARGUMENT(normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data(),
                                                             nullptr, b.data(), nullptr, 4, 8, eps),
                               "rmsnorm: eps must be finite and > 0");
    }
    // The queries answer no for rows without elements, which every launch refuses.
    for (int64_t n : {int64_t{0}, int64_t{-4}}) {
      CHECK_FALSE(normalization::pipelined_available<__nv_bfloat16>(n, false));
      CHECK_FALSE(normalization::pipelined_available<float>(n, true));
      for (NormOp op : {NormOp::LayerNorm, NormOp::RmsNorm, NormOp::AddRmsNorm}) {
        CHECK_FALSE(normalization::pipelined_pays<__nv_bfloat16>(op, 4096, n));
        CHECK_FALSE(normalization::reread_pays<__nv_bfloat16>(op, 4096, n));
        CHECK_FALSE(normalization::reread_pays<float>(op, 1, n));
      }
    }
  }
  {
    common::DeviceBuffer<__nv_bfloat16> a(64), b(64);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<__nv_bfloat16>(LayerNormVersion::Dispatch, a.data(), nullptr,
                                                nullptr, b.data(), nullptr, nullptr, 2, 8, 0.0f),
        "layernorm: eps must be finite and > 0");
    const __nv_bfloat16* odd = common::offset_bytes(a.data(), 1);
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<__nv_bfloat16>(RmsNormVersion::Dispatch, odd, nullptr, b.data(),
                                              nullptr, 2, 8, 1e-5f),
        "rmsnorm: every pointer must be aligned to the size of its element");
    REQUIRE_INVALID_ARGUMENT(
        normalization::add_rmsnorm<__nv_bfloat16>(RmsNormVersion::Dispatch, a.data(), b.data(), odd,
                                                  b.data() + 32, nullptr, 2, 8, 1e-5f),
        "add_rmsnorm: every pointer must be aligned to the size of its element");
  }
  {  // Overlapping buffers: y == x is in place (run above); any other overlap is refused.
    common::DeviceBuffer<float> a(64), b(64);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                        a.data() + 1, nullptr, nullptr, 2, 8, 1e-5f),
        "layernorm: y overlaps x");
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data() + 8, nullptr, a.data(),
                                      nullptr, 2, 16, 1e-5f),
        "rmsnorm: y overlaps x");
    // The fused add's residual may share memory with neither x nor y.
    REQUIRE_INVALID_ARGUMENT(
        normalization::add_rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), a.data(), nullptr,
                                          b.data(), nullptr, 2, 8, 1e-5f),
        "add_rmsnorm: the residual must not overlap x or y");
    REQUIRE_INVALID_ARGUMENT(
        normalization::add_rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), b.data(), nullptr,
                                          b.data() + 4, nullptr, 2, 8, 1e-5f),
        "add_rmsnorm: the residual must not overlap x or y");
    // The statistics are outputs: they may share memory with no other buffer, nor each other;
    // gamma and beta, read by every row, may not share memory with an output.
    common::DeviceBuffer<float> stats(16);
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                        b.data(), a.data() + 60, stats.data(), 2, 32, 1e-5f),
        "layernorm: mean and rstd must not overlap");
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr, nullptr,
                                        b.data(), stats.data(), stats.data() + 1, 2, 32, 1e-5f),
        "mean and rstd must not overlap");
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), nullptr, b.data(),
                                      b.data() + 63, 2, 32, 1e-5f),
        "rmsnorm: mean and rstd must not overlap");
    REQUIRE_INVALID_ARGUMENT(
        normalization::layernorm<float>(LayerNormVersion::Dispatch, a.data(), nullptr,
                                        b.data() + 40, b.data(), nullptr, nullptr, 2, 32, 1e-5f),
        "layernorm: gamma and beta must not overlap y");
    REQUIRE_INVALID_ARGUMENT(
        normalization::add_rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), b.data(),
                                          b.data() + 8, b.data() + 32, nullptr, 1, 32, 1e-5f),
        "add_rmsnorm: gamma and beta must not overlap y or the residual");
    // gamma may share memory with x: both are only read.
    REQUIRE_NOTHROW(normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), a.data(),
                                                  b.data(), stats.data(), 2, 32, 1e-5f));
    CUDA_CHECK(cudaDeviceSynchronize());
    // rows * n beyond 64 bits.
    REQUIRE_INVALID_ARGUMENT(
        normalization::rmsnorm<float>(RmsNormVersion::Dispatch, a.data(), nullptr, b.data(),
                                      nullptr, int64_t{1} << 40, int64_t{1} << 30, 1e-5f),
        "rmsnorm: a matrix of 1099511627776 x 1073741824 elements overflows 64 bits");
  }
}

namespace {

// bf16 rows of 8192 elements, M·N = 2^31 + 3·8192: the three ops with the versions given.
constexpr int64_t kHugeN = 8192;
constexpr int64_t kHugeRows = (int64_t{1} << 31) / kHugeN + 3;
constexpr size_t kHugeBytes = 3 * kHugeRows * kHugeN * sizeof(__nv_bfloat16);  // x, residual, y

void check_beyond_2_31(LayerNormVersion layernorm_v, RmsNormVersion rmsnorm_v) {
  using bf16 = __nv_bfloat16;
  REQUIRE_CHECK(
      check::check_layernorm_huge<bf16>(name_of<bf16>(normalization::version_name(layernorm_v)),
                                        layernorm_run<bf16>(layernorm_v), kHugeRows, kHugeN));
  const std::string rms_name = normalization::version_name(rmsnorm_v);
  REQUIRE_CHECK(check::check_rmsnorm_huge<bf16>(name_of<bf16>(("rmsnorm_" + rms_name).c_str()),
                                                rmsnorm_run<bf16>(rmsnorm_v), kHugeRows, kHugeN));
  REQUIRE_CHECK(
      check::check_add_rmsnorm_huge<bf16>(name_of<bf16>(("add_rmsnorm_" + rms_name).c_str()),
                                          add_rmsnorm_run<bf16>(rmsnorm_v), kHugeRows, kHugeN));
}

}  // namespace

TEST_CASE("the bf16 dispatchers handle M * N beyond 2^31 elements (64-bit offsets)",
          "[ch10_norm][dispatch][large]") {
  INFO("fill TODOs 8 and 9 in ch10_norm/dispatch.cu; offsets must be computed in 64 bits");
  SKIP_UNLESS_FREE_GPU_MEMORY(kHugeBytes);
  check_beyond_2_31(LayerNormVersion::Dispatch, RmsNormVersion::Dispatch);
}

TEST_CASE("the bf16 registers versions handle M * N beyond 2^31 elements (64-bit offsets)",
          "[ch10_norm][registers][rmsnorm][fused_add][large]") {
  // The dispatchers above run other kernels at this shape for some ops: the versions that hold
  // the row in registers are checked here directly.
  INFO(
      "fill TODOs 4 and 5 (row_in_registers.cuh, layernorm.cu) and 6 and 7 (rmsnorm.cu); "
      "offsets must be computed in 64 bits");
  SKIP_UNLESS_FREE_GPU_MEMORY(kHugeBytes);
  check_beyond_2_31(LayerNormVersion::Registers, RmsNormVersion::Registers);
}
