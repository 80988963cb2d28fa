// Main of every GPU test binary. With no usable CUDA device it prints why and exits with the
// code ctest is told means "skipped"; listing the tests (discovery at build time) needs no GPU.
// `--gpu` prints the GPU the tests run on and whether they run the versions that need sm_90
// (before sm_90, the tests tagged [sm90] only check that those versions refuse).
#include "common/gpu_info.hpp"

#if CATCH2_MAJOR == 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <iostream>
#include <string>

namespace {
bool only_lists_or_helps(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--list", 0) == 0 || arg == "-l" || arg == "-h" || arg == "--help" || arg == "-?")
      return true;
  }
  return false;
}

int describe_gpu() {
  std::cout << "GPU: " << common::device_description() << "\n";
  const std::string& missing = common::sm90_features_missing();
  std::cout << "sm_90 features (clusters, bulk copies): "
            << (missing.empty() ? std::string("yes") : "no, " + missing) << "\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (!only_lists_or_helps(argc, argv)) {
    if (auto reason = common::gpu_unavailable_reason()) {
      std::cout << "SKIPPED: " << *reason << ". This test needs a CUDA GPU.\n";
      return GPU_TEST_SKIP_CODE;
    }
    if (argc == 2 && std::string(argv[1]) == "--gpu") return describe_gpu();
  }
  // Catch2 v2 exits with the number of failed assertions: 77 of them would read as "skipped".
  const int status = Catch::Session().run(argc, argv);
  return status == GPU_TEST_SKIP_CODE ? 1 : status;
}
