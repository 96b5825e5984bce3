// gpurt::Program: code built for one device; gpurt::Kernel: one entry point of it.
//
// Build with Device::build(ProgramSource{language, text}). Kernels are looked up by name; a
// Kernel knows its parameters where the backend can introspect them, and the core checks every
// launch's arguments against them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpurt/cache.hpp"
#include "gpurt/device.hpp"

namespace gpurt {

namespace detail {
struct ProgramState;
struct KernelState;
}

class Kernel;

class Program {
 public:
  Program() = default;

  // Throws invalid_argument, listing the kernels the program has, when `name` is not one of them
  // (a name with a NUL byte never is, not even the kernel named by the bytes before the NUL).
  Kernel kernel(const std::string& name) const;
  std::vector<std::string> kernel_names() const;
  // Compiler output of a successful build (warnings); may be empty.
  const std::string& build_log() const;
  // How the program was obtained: compiled or loaded from the compile cache, and how long it took.
  const BuildInfo& build_info() const;
  Device device() const;
  // true for a program from Device::build; false when default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

 private:
  friend struct detail::Access;
  explicit Program(std::shared_ptr<detail::ProgramState> s) : state_(std::move(s)) {}
  detail::ProgramState* checked(const char* call) const;
  detail::ProgramState* state(const char* call) const { return checked(call); }
  std::shared_ptr<detail::ProgramState> state_;
};

class Kernel {
 public:
  Kernel() = default;

  const std::string& name() const;
  Device device() const;
  // Number of parameters, when the backend can tell; otherwise throws unsupported.
  std::size_t arg_count() const;
  // Largest group (all dimensions together) this kernel can be launched with on its device.
  std::size_t max_group_size() const;
  // Group sizes that are a multiple of this run best (warp size, OpenCL preferred multiple).
  std::size_t preferred_group_multiple() const;
  // A 1D group size chosen by the backend for this kernel (CUDA: occupancy calculator).
  std::size_t suggested_group_size() const;
  // The local memory one group of this kernel uses before the launch asks for any: its declared
  // GPURT_LOCAL / __local / __shared__ variables and what the implementation keeps for itself, as
  // the driver reports it (CUDA: CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; OpenCL: CL_KERNEL_LOCAL_MEM_SIZE
  // with no local argument set). A launch may ask for properties().max_local_memory minus this in
  // dynamic local memory and Local arguments (docs/errors.md, "Local memory": NVIDIA's OpenCL
  // driver counts 1 byte of its own in every kernel and pads local arguments; PoCL 5 reports 0 for
  // every kernel, its declared variables included).
  std::size_t local_memory_bytes() const;
  // How many groups of `group_size` work-items, each with `local_bytes` of dynamic local memory,
  // one compute unit of the device runs at once for this kernel (at least 1): CUDA's occupancy
  // calculator; on OpenCL an estimate from the kernel's group limit and the local memory (one group
  // per compute unit on CPUs). Times properties().compute_units, it is the number of groups that
  // fills the device in one wave - the usual size of a grid-stride launch. Throws invalid_argument
  // when the group is larger than max_group_size() or local_memory_bytes() + local_bytes exceeds
  // properties().max_local_memory.
  std::size_t resident_groups_per_unit(std::size_t group_size, std::size_t local_bytes = 0) const;
  // true for a kernel from Program::kernel; false when default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

 private:
  friend struct detail::Access;
  explicit Kernel(std::shared_ptr<detail::KernelState> s) : state_(std::move(s)) {}
  detail::KernelState* state(const char* call) const;
  std::shared_ptr<detail::KernelState> state_;
};

}  // namespace gpurt
