// What every benchmark binary shares: the command line, the device banner and the results table
// (version, shape, dtype, time, GB/s, % of the copy bandwidth measured in the same process, and
// the speed relative to the vendor library).
#pragma once

#include "compare.hpp"
#include "timing.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace common {

struct BenchArgs {
  bool csv = false;
  std::vector<std::string> sizes;     // --sizes=a,b,c   (the chapter says what a size means)
  std::vector<std::string> versions;  // --versions=a,b  (substring match; empty means all)
  std::vector<std::string> dtypes;    // --dtypes=fp32,bf16

  bool wants_version(const std::string& name) const;
  bool wants_dtype(const std::string& name) const;
  // The --versions and --dtypes entries that no name asked about matched (a misspelling, or a
  // version or dtype the benchmark does not run at these sizes). Copies of the arguments share
  // what they have matched.
  std::vector<std::string> unmatched_filters() const;

 private:
  std::shared_ptr<std::set<std::string>> matched_ = std::make_shared<std::set<std::string>>();
};

// Parses the common options; prints `usage` and exits 0 on --help, exits 2 on an unknown option
// or a list that is empty or has an empty entry. Needs no GPU: the chapter checks its --sizes
// next, and BenchTable::run says when there is no GPU.
BenchArgs parse_bench_args(int argc, char** argv, const std::string& usage);

// One entry of --sizes as a whole number in [lo, hi]; exits 2 naming the entry otherwise.
int64_t parse_size_in_range(const std::string& text, int64_t lo, int64_t hi);

// One entry of --sizes as a matrix shape "MxN" (M >= 1 rows, N >= 1 columns, e.g. 4096x8192,
// at most 2^40 elements in all, more than any GPU holds); exits 2 naming the entry otherwise.
struct MatrixSize {
  int64_t rows;
  int64_t cols;
};
MatrixSize parse_matrix_size(const std::string& text);

// The rows of an M-row matrix that a benchmark checks before it times a version: the first and
// the last (a wrong row offset or grid tail shows there), each once; none when M is 0.
std::vector<int64_t> checked_rows(int64_t rows);

struct BenchRow {
  std::string version;
  std::string shape;
  std::string dtype;
  Timing timing;
  double bytes = 0;                 // bytes the operation must move at least (the roofline count)
  std::optional<double> vendor_us;  // the vendor library's time for the same problem
};

// A row's "vs vendor" time: the vendor's median, or nothing when its run was wrong or refused.
std::optional<double> median_us(const std::optional<Timing>& timing);

class BenchTable {
 public:
  // Touches no GPU: run() measures the copy bandwidth and prints the banner.
  BenchTable(std::string title, const BenchArgs& args);
  void add(BenchRow row);  // printed at once, so long runs show progress
  // A row whose output failed the check run before timing: "<version> <shape> <dtype>: WRONG
  // RESULT (<why>), not timed" on stdout, in order with the rows (a '#' comment line in CSV mode,
  // so the CSV stays parseable).
  void add_wrong(const std::string& version, const std::string& shape, const std::string& dtype,
                 const std::string& why);
  // A remark between the rows, "  (<text>)" (a '#' comment line in CSV mode): what did not run,
  // and why.
  void note(const std::string& text) const;
  // The step every version goes through: `launch` runs once on outputs the caller has poisoned,
  // `check` compares what it wrote, and only then is it timed and `row` added
  // with that timing. A launch that throws (an unfinished TODO) or a wrong output gives a WRONG
  // RESULT line instead: an unfinished kernel returns at once and would show an impossible
  // bandwidth. Where the version has limits (`if_refused` is Skip), a refusal
  // (std::invalid_argument) leaves the row out instead; Note also says why, on a line of its own
  // (for a vendor library beyond its limits).
  enum class IfRefused { Wrong, Skip, Note };
  void check_then_time(BenchRow row, const std::function<void(cudaStream_t)>& launch,
                       const std::function<CheckResult()>& check,
                       IfRefused if_refused = IfRefused::Wrong);
  // The same steps without adding the row: the timing of a run that checked out, or nothing
  // after its WRONG RESULT line (or a refusal left out). For the vendor library, whose time
  // every row compares with, whether or not its own row is shown.
  std::optional<Timing> checked_timing(const BenchRow& row,
                                       const std::function<void(cudaStream_t)>& launch,
                                       const std::function<CheckResult()>& check,
                                       IfRefused if_refused = IfRefused::Wrong);
  // The vendor library's own row (row.version: the name --versions matches) with the timing
  // checked_timing gave it, where --versions asks for the row and the run checked out.
  void add_vendor_row(BenchRow row, const std::optional<Timing>& vendor);
  // What main returns: 1 once any row was wrong, so that scripts notice; 2 when the filters
  // selected no row at all, or a --versions or --dtypes entry selected nothing; else 0.
  int exit_status() const;
  // With no usable GPU, says so and returns 1. Otherwise measures the copy bandwidth, prints the
  // banner (device, copy bandwidth) unless the output is CSV, runs the benchmark's rows and
  // returns what main returns: exit_status(), or 1 after an exception (a CUDA error: after a
  // fault nothing more can run), printed with the title. Each --versions or --dtypes entry that
  // selected nothing is named on stderr.
  int run(const std::function<void()>& rows);

 private:
  void print_banner();

  std::string title_;
  BenchArgs args_;
  double copy_gbs_ = 0;
  bool any_wrong_ = false;
  int rows_ = 0;  // rows printed, timed or wrong
};

}  // namespace common
