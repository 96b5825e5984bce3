// The values that cross the plugin boundary in C++ form, defined once for both sides: the plugin
// helper (gpurt/plugin/cxx.hpp, namespace gpurt::plugin) and the core's bridge over a plugin's C
// table (core/src/model/bridge.hpp, which names them gpurt::bridge::Status and so on). Each is the
// C++ form of an abi.h struct; abi.h says what every field means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/types.hpp"

namespace gpurt::plugin {

// The outcome of a hook (a plugin call, seen from the core). ok() when `failed` is false.
struct Status {
  bool failed = false;
  ErrorCategory category = ErrorCategory::internal;
  std::string message;       // what went wrong, for a person
  std::int64_t native_code = 0;
  std::string native_name;
  std::string call;          // the native call that failed
  std::string build_log;
  std::string build_options;
  std::string hint;  // what the user can do (GPURT_STATUS_HINT)

  bool ok() const { return !failed; }
  static Status success() { return {}; }
  static Status failure(ErrorCategory c, std::string msg, std::string call_name = {},
                        std::int64_t code = 0, std::string code_name = {}) {
    Status s;
    s.failed = true;
    s.category = c;
    s.message = std::move(msg);
    s.call = std::move(call_name);
    s.native_code = code;
    s.native_name = std::move(code_name);
    return s;
  }
};

// The outcome of a call on the launch path, where success must cost nothing: a success holds no
// Status (an empty optional: no strings are made, none destroyed), a failure holds its Status.
// A Status converts to it (a failure stays one; a success Status gives a success), so a hook
// returning Outcome may `return Status::failure(...)` as every other hook does.
class Outcome {
 public:
  Outcome() noexcept = default;  // success
  Outcome(Status s) noexcept {   // implicit: `return Status::failure(...)` from a hook returning Outcome
    if (s.failed) failure_.emplace(std::move(s));
  }
  bool ok() const noexcept { return !failure_.has_value(); }
  // The failure; only when !ok().
  const Status& failure() const noexcept { return *failure_; }
  Status& failure() noexcept { return *failure_; }
  // As a Status: the failure, or Status::success() (for callers that take a Status).
  Status status() && { return failure_ ? std::move(*failure_) : Status::success(); }

 private:
  std::optional<Status> failure_;
};

enum class ParamKind {
  unknown,         // only the size (or nothing) is known
  global_pointer,  // takes a buffer
  local_pointer,   // takes a Local size (OpenCL __local pointer)
  scalar,          // takes a value of `size` bytes
};

struct ParamInfo {
  ParamKind kind = ParamKind::unknown;
  std::size_t size = 0;   // bytes; 0 when unknown
  std::string type_name;  // as the compiler spells it, when known ("float*", "uint")
};

struct KernelInfo {
  std::string name;
  bool params_known = false;       // false: the backend cannot introspect; no argument checks
  std::vector<ParamInfo> params;
  std::size_t max_group_size = 0;  // for this kernel on this device
  std::size_t preferred_group_multiple = 1;
  std::size_t suggested_group_size = 0;  // 1D group size the backend recommends (occupancy)
  std::size_t static_local_bytes = 0;
  // true: dynamic local memory is the kernel's last parameter (OpenCL __local pointer), which the
  // core fills from LaunchConfig::local_bytes. false: the backend passes local_bytes natively.
  bool dynamic_local_is_parameter = false;
  bool local_arguments = false;    // the backend accepts Local arguments (OpenCL)
  // Where a buffer view passed to this kernel must start, in bytes: 1 for any element offset
  // (CUDA pointers; OpenCL kernels of the portable dialect, which get a base and an offset);
  // 0 for the device's DeviceProperties::view_alignment (OpenCL C kernels take sub-buffers).
  std::size_t view_alignment = 0;
};

struct LaunchShape {
  Dim3 groups;
  Dim3 group_size;
  std::size_t local_bytes = 0;  // dynamic local memory (native form, see KernelInfo)
};

struct QueueOptions {
  bool timing = true;  // events recorded on the queue can be timed
};

struct ProgramSource {
  SourceLanguage language = SourceLanguage::opencl_c;
  std::string text;  // source text, or binary bytes for cubin
  std::string name;  // shown in build logs ("vector_add.cl")
  FloatMath float_math = FloatMath::contract;  // how the compiler may evaluate floating point (ABI 4.6)
};

}  // namespace gpurt::plugin
