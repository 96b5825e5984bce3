// ClGraph: a recorded command sequence (gpurt::Graph, ABI 4.2) as OpenCL commands packed once, so
// that a replay (ClQueue::replay) only enqueues them: no checks, no clSetKernelArg, no lock.
//
// Mapping: each recorded launch gets a cl_kernel of its own (clCreateKernel on the recorded kernel's
// program and function), its arguments set when the graph is made, and its NDRange precomputed;
// the views an OpenCL C kernel takes are sub-buffers the graph holds. Copies and fills keep their
// cl_mem handles, offsets, sizes and pattern; a fill the device runs as a kernel (GPUs, as
// ClQueue::fill) gets a fill kernel object of its own, arguments set. A wait keeps a reference to
// its cl_event and becomes a barrier on it. Empty commands (NOTHING) are left out. The application's kernel (ClKernel) is
// never touched by a replay, so it may be launched with other arguments at the same time.
//
// No cl_khr_command_buffer: PoCL 3.1 lists it at revision 0.9.0, and the Khronos headers here
// (opencl-c-headers 2023.02.06) declare its entry points without CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION,
// so there is no way to tell at build time which provisional revision's signatures they are; a
// mismatch would be undefined behaviour. NVIDIA's driver does not list the extension at all.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cl_common.hpp"

namespace gpurt::opencl {

class ClGraph final : public plugin::Graph {
 public:
  // One packed command; `index` is its position among the recorded commands (messages, set_args).
  struct Step {
    plugin::Command::Kind kind = plugin::Command::Kind::nothing;
    std::size_t index = 0;
    // launch
    const ClKernel* user = nullptr;  // the recorded kernel (parameters, name); the core keeps it alive
    cl::Kernel kernel;               // the graph's own, arguments set (also a fill run as a kernel)
    std::vector<cl::Buffer> views;   // sub-buffers `kernel`'s arguments name
    cl::Kernel spare;                // set_args fills it, then swaps it in (see cl_graph.cpp)
    std::vector<cl::Buffer> spare_views;
    NdRange range;
    // copies and fills
    cl_mem src = nullptr;
    cl_mem dst = nullptr;
    std::size_t src_offset = 0, dst_offset = 0, bytes = 0;
    void* host = nullptr;  // pinned (mapped CL_MEM_ALLOC_HOST_PTR) memory
    unsigned char pattern[128] = {};
    std::size_t pattern_size = 0;
    cl::Buffer seed;  // a fill at an offset its pattern size does not divide: the pattern repeated
    // wait
    cl::Event event;
  };

  explicit ClGraph(std::string name) : name_(std::move(name)) {}
  Status set_args(std::size_t index, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                  std::size_t arg_count) noexcept override;
  const std::vector<Step>& steps() const { return steps_; }

  // "command 3 (launch 'saxpy')": how messages name a step (the core adds the graph's name).
  static std::string describe(const Step& step);

 private:
  friend class ClDevice;
  std::string name_;
  std::vector<Step> steps_;  // in recorded order, without NOTHING commands
};

}  // namespace gpurt::opencl
