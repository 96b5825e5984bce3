// gpurt::Error: the one exception type gpurt throws.
//
// Every failure, whether found by the core's validation or reported by a backend's native call,
// arrives as a gpurt::Error with a category a program can branch on, plus the details a person
// needs: the backend, the native code and its name, the failing call, the device and, for build
// failures, the compiler log and the options used.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpurt {

enum class ErrorCategory {
  invalid_argument,      // the caller passed something gpurt or the device cannot accept
  out_of_device_memory,  // the device could not allocate memory or launch resources
  out_of_host_memory,    // the host (driver or runtime) could not allocate memory
  build_failed,          // a program did not compile or link; see Error::build_log()
  backend_unavailable,   // a backend plugin or its vendor library could not be used
  device_lost,           // the device stopped working (fault, reset, removal)
  unsupported,           // the device or backend does not offer the feature asked for
  internal,              // a native failure gpurt did not expect; please report it
  timeout,               // a bounded wait (Event::wait, Queue::finish with a timeout) ran out
};

// Stable lower-case name of a category ("out_of_device_memory").
const char* to_string(ErrorCategory category) noexcept;

// Everything an Error carries besides its category and message. Fields that do not apply stay
// empty (strings) or zero (native_code with an empty native_name).
struct ErrorDetails {
  std::string backend;        // "cuda", "opencl", or empty for core validation errors
  std::int64_t native_code = 0;
  std::string native_name;    // "CUDA_ERROR_OUT_OF_MEMORY", "CL_INVALID_VALUE", ...
  std::string call;           // the failing native or gpurt call, e.g. "cuMemAlloc"
  std::string device;         // selector and name of the device, e.g. "opencl:0 (pthread-...)"
  std::string build_log;      // compiler output, for build_failed
  std::string build_options;  // options the compiler was given, for build_failed
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message, ErrorDetails details = {});

  ErrorCategory category() const noexcept { return category_; }
  // The message alone, without the details that what() appends.
  const std::string& message() const noexcept { return message_; }
  const ErrorDetails& details() const noexcept { return details_; }
  const std::string& backend() const noexcept { return details_.backend; }
  std::int64_t native_code() const noexcept { return details_.native_code; }
  const std::string& native_name() const noexcept { return details_.native_name; }
  const std::string& call() const noexcept { return details_.call; }
  const std::string& device() const noexcept { return details_.device; }
  const std::string& build_log() const noexcept { return details_.build_log; }
  const std::string& build_options() const noexcept { return details_.build_options; }

 private:
  ErrorCategory category_;
  std::string message_;
  ErrorDetails details_;
};

}  // namespace gpurt
