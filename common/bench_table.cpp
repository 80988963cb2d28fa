#include "bench_table.hpp"

#include "errors.hpp"
#include "gpu_info.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace common {
namespace {

// Records every filter that matches, not only the first: each is then known to select something.
bool matches_any(const std::vector<std::string>& filters, const std::string& name,
                 const std::string& option, std::set<std::string>& matched) {
  if (filters.empty()) return true;
  bool any = false;
  for (const auto& f : filters)
    if (name.find(f) != std::string::npos) {
      matched.insert(option + "=" + f);
      any = true;
    }
  return any;
}

// The whole of `text` as a non-negative decimal number, or nothing.
std::optional<int64_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

// An option's comma-separated list. An empty one (--sizes=) would silently mean the defaults, and
// an empty entry (--sizes=20,,24) is a slip of the keyboard.
std::vector<std::string> nonempty_list(const std::string& option, const std::string& text) {
  if (text.empty()) {
    std::cerr << option << " needs at least one entry (leave the option out for the defaults)\n";
    std::exit(2);
  }
  std::vector<std::string> items;
  std::stringstream in(text + ",");  // the last entry ends with a comma too
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) {
      std::cerr << option << "=" << text << " has an empty entry\n";
      std::exit(2);
    }
    items.push_back(item);
  }
  return items;
}

[[noreturn]] void bad_size(const std::string& text, const std::string& expected) {
  std::cerr << "bad --sizes entry '" << text << "': expected " << expected << "\n";
  std::exit(2);
}

}  // namespace

bool BenchArgs::wants_version(const std::string& name) const {
  return matches_any(versions, name, "--versions", *matched_);
}
bool BenchArgs::wants_dtype(const std::string& name) const {
  return matches_any(dtypes, name, "--dtypes", *matched_);
}
std::vector<std::string> BenchArgs::unmatched_filters() const {
  std::vector<std::string> unmatched;
  for (const auto& [option, filters] :
       {std::pair{"--versions", &versions}, std::pair{"--dtypes", &dtypes}})
    for (const auto& f : *filters)
      if (!matched_->count(std::string(option) + "=" + f))
        unmatched.push_back(std::string(option) + " entry '" + f + "'");
  return unmatched;
}

BenchArgs parse_bench_args(int argc, char** argv, const std::string& usage) {
  BenchArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value_of = [&](const std::string& option) -> std::optional<std::string> {
      if (arg.rfind(option + "=", 0) == 0) return arg.substr(option.size() + 1);
      return std::nullopt;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage << "\n"
                << "Common options:\n"
                << "  --csv               machine-readable output\n"
                << "  --sizes=a,b,...     problem sizes (see above)\n"
                << "  --versions=a,b,...  only versions whose name contains one of these\n"
                << "  --dtypes=fp32,bf16  only these element types\n";
      std::exit(0);
    } else if (arg == "--csv") {
      args.csv = true;
    } else if (auto sizes = value_of("--sizes")) {
      args.sizes = nonempty_list("--sizes", *sizes);
    } else if (auto versions = value_of("--versions")) {
      args.versions = nonempty_list("--versions", *versions);
    } else if (auto dtypes = value_of("--dtypes")) {
      args.dtypes = nonempty_list("--dtypes", *dtypes);
    } else {
      std::cerr << "unknown option '" << arg << "' (try --help)\n";
      std::exit(2);
    }
  }
  return args;
}

int64_t parse_size_in_range(const std::string& text, int64_t lo, int64_t hi) {
  const std::optional<int64_t> value = whole_number(text);
  if (!value || *value < lo || *value > hi)
    bad_size(text, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return *value;
}

MatrixSize parse_matrix_size(const std::string& text) {
  const size_t x = text.find('x');
  const std::optional<int64_t> rows = x == std::string::npos ? std::nullopt
                                                             : whole_number(text.substr(0, x));
  const std::optional<int64_t> cols = x == std::string::npos ? std::nullopt
                                                             : whole_number(text.substr(x + 1));
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  if (!rows || !cols || *rows < 1 || *cols < 1 || *rows > kMaxElements / *cols)
    bad_size(text, "ROWSxCOLS with ROWS, COLS >= 1 and at most 2^40 elements, e.g. 4096x8192");
  return {*rows, *cols};
}

BenchTable::BenchTable(std::string title, const BenchArgs& args)
    : title_(std::move(title)), args_(args) {}

void BenchTable::print_banner() {
  if (args_.csv) {
    std::printf("benchmark,version,shape,dtype,median_us,min_us,max_us,runs,gb_per_s,"
                "pct_of_copy,vendor_us,speedup_vs_vendor\n");
  } else {
    std::printf("%s on %s\n", title_.c_str(), device_description().c_str());
    std::printf("copy bandwidth (device-to-device memcpy, read + write): %.0f GB/s\n", copy_gbs_);
    std::printf("times: median of many runs, L2 flushed before each; GB/s counts each input read\n"
                "and each output written once; 'vs vendor' is vendor time / our time (>1: faster)\n\n");
    std::printf("%-28s %-16s %-5s %10s %9s %8s %10s\n", "version", "shape", "dtype", "time(us)",
                "GB/s", "% copy", "vs vendor");
  }
  std::fflush(stdout);
}

void BenchTable::add(BenchRow row) {
  ++rows_;
  const double gbs = row.bytes / (row.timing.median_us * 1e3);
  const double pct = 100.0 * gbs / copy_gbs_;
  const double speedup = row.vendor_us ? *row.vendor_us / row.timing.median_us : 0.0;
  if (args_.csv) {
    std::printf("%s,%s,%s,%s,%.3f,%.3f,%.3f,%d,%.1f,%.1f,", title_.c_str(), row.version.c_str(),
                row.shape.c_str(), row.dtype.c_str(), row.timing.median_us, row.timing.min_us,
                row.timing.max_us, row.timing.runs, gbs, pct);
    if (row.vendor_us)
      std::printf("%.3f,%.3f\n", *row.vendor_us, speedup);
    else
      std::printf(",\n");
  } else {
    char vs[32] = "";
    if (row.vendor_us) std::snprintf(vs, sizeof vs, "%.2fx", speedup);
    std::printf("%-28s %-16s %-5s %10.2f %9.0f %7.1f%% %10s\n", row.version.c_str(),
                row.shape.c_str(), row.dtype.c_str(), row.timing.median_us, gbs, pct, vs);
  }
  std::fflush(stdout);
}

std::vector<int64_t> checked_rows(int64_t rows) {
  if (rows <= 0) return {};
  if (rows == 1) return {0};
  return {0, rows - 1};
}

int BenchTable::exit_status() const {
  if (any_wrong_) return 1;
  return rows_ == 0 || !args_.unmatched_filters().empty() ? 2 : 0;
}

int BenchTable::run(const std::function<void()>& rows) {
  if (auto reason = gpu_unavailable_reason()) {
    std::fprintf(stderr, "%s needs a CUDA GPU and cannot run here: %s\n", title_.c_str(),
                 reason->c_str());
    return 1;
  }
  try {
    // Inside the try: the probe is the first GPU work, and a GPU the build has no code for, or
    // without the memory, fails here.
    copy_gbs_ = copy_bandwidth_gbs();
    print_banner();
    rows();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", title_.c_str(), e.what());
    return 1;
  }
  for (const std::string& filter : args_.unmatched_filters())
    std::fprintf(stderr, "%s: %s selected nothing (a misspelling, or nothing of it runs here)\n",
                 title_.c_str(), filter.c_str());
  if (rows_ == 0) std::fprintf(stderr, "%s: no row was selected\n", title_.c_str());
  return exit_status();
}

std::optional<Timing> BenchTable::checked_timing(const BenchRow& row,
                                                 const std::function<void(cudaStream_t)>& launch,
                                                 const std::function<CheckResult()>& check,
                                                 IfRefused if_refused) {
  try {
    launch(nullptr);
  } catch (const std::invalid_argument& e) {
    if (if_refused == IfRefused::Wrong)
      add_wrong(row.version, row.shape, row.dtype, std::string("the launch refused: ") + e.what());
    if (if_refused == IfRefused::Note)
      note(row.version + " at " + row.shape + " " + row.dtype + ": not run: " + e.what());
    return std::nullopt;
  } catch (const std::logic_error& e) {  // an unfinished TODO that throws
    add_wrong(row.version, row.shape, row.dtype, std::string("the launch threw: ") + e.what());
    return std::nullopt;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const CheckResult result = check();
  if (!result.ok) {
    add_wrong(row.version, row.shape, row.dtype, result.message);
    return std::nullopt;
  }
  return time_gpu(launch);
}

std::optional<double> median_us(const std::optional<Timing>& timing) {
  return timing ? std::optional<double>(timing->median_us) : std::nullopt;
}

void BenchTable::add_vendor_row(BenchRow row, const std::optional<Timing>& vendor) {
  // wants_version first: it records that the entry matched, even where the run did not check out.
  if (!args_.wants_version(row.version) || !vendor) return;
  row.timing = *vendor;
  row.vendor_us = vendor->median_us;
  add(std::move(row));
}

void BenchTable::check_then_time(BenchRow row, const std::function<void(cudaStream_t)>& launch,
                                 const std::function<CheckResult()>& check, IfRefused if_refused) {
  if (const std::optional<Timing> timing = checked_timing(row, launch, check, if_refused)) {
    row.timing = *timing;
    add(std::move(row));
  }
}

void BenchTable::note(const std::string& text) const {
  std::printf("%s(%s)\n", args_.csv ? "# " : "  ", text.c_str());
  std::fflush(stdout);
}

void BenchTable::add_wrong(const std::string& version, const std::string& shape,
                           const std::string& dtype, const std::string& why) {
  std::string line = why;  // checker messages list the first bad elements on lines of their own
  std::replace(line.begin(), line.end(), '\n', ' ');
  ++rows_;
  std::printf("%s%s %s %s: WRONG RESULT (%s), not timed\n", args_.csv ? "# " : "", version.c_str(),
              shape.c_str(), dtype.c_str(), line.c_str());
  std::fflush(stdout);
  any_wrong_ = true;
}

}  // namespace common
