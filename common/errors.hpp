// Errors: CUDA failures and bad arguments become exceptions that say where they happened.
#pragma once

#include <cuda_runtime_api.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace common {

// A failed CUDA runtime call, naming the call, the source location and CUDA's own message.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

inline void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  // A failed call also leaves its error as the runtime's last error. Cleared here, it cannot be
  // reported again by the next launch check, at another file and line, when the caller goes on
  // (a test binary runs its next test case in the same process). Sticky errors stay sticky.
  cudaGetLastError();
  std::ostringstream msg;
  msg << file << ":" << line << ": " << call << " failed: " << cudaGetErrorName(code) << " ("
      << cudaGetErrorString(code) << ")";
  throw CudaError(code, msg.str());
}

[[noreturn]] inline void throw_bad_argument(const char* function, const std::string& what) {
  throw std::invalid_argument(std::string(function) + ": " + what);
}

}  // namespace common

// Wrap every CUDA runtime call: CUDA_CHECK(cudaMalloc(&p, bytes));
#define CUDA_CHECK(call) ::common::cuda_check((call), #call, __FILE__, __LINE__)

// After every kernel launch: catches bad launch configurations at once. Errors raised while the
// kernel runs surface at the next synchronizing call, which is checked too. cudaGetLastError also
// returns (and, unless it is sticky, clears) an error that an earlier call of this thread left
// pending, so that error is reported here, as in any <<<>>> launch check.
#define CUDA_CHECK_LAUNCH() ::common::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// Argument validation in launchers: CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
#define CHECK_ARG(cond, message) CHECK_ARG_FOR(__func__, cond, message)
// The same in a helper that checks for a public function: the message names `function`.
#define CHECK_ARG_FOR(function, cond, message)                      \
  do {                                                              \
    if (!(cond)) {                                                  \
      std::ostringstream check_arg_msg_;                            \
      check_arg_msg_ << message;                                    \
      ::common::throw_bad_argument(function, check_arg_msg_.str()); \
    }                                                               \
  } while (0)
