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
// Release: the graph owns every kernel object it made in one list, in the order made, and releases
// them newest first. PoCL keeps a program's kernels in a list it prepends to and searches on each
// clReleaseKernel, so releasing oldest first walked the whole list every time: dropping a graph of
// 100,000 launches took 22-160 s (quadratic); newest first each release finds its kernel at the head.
//
// No cl_khr_command_buffer: PoCL 3.1 lists it at revision 0.9.0, and the Khronos headers here
// (opencl-c-headers 2023.02.06) declare its entry points without CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION,
// so there is no way to tell at build time which provisional revision's signatures they are; a
// mismatch would be undefined behaviour. NVIDIA's driver does not list the extension at all.
#pragma once

#include <cstddef>
#include <memory>
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
    cl_kernel kernel = nullptr;      // the graph's own (kernels_), arguments set (also a fill run as a kernel)
    std::vector<cl::Buffer> views;   // sub-buffers `kernel`'s arguments name
    cl_kernel spare = nullptr;       // set_args fills it, then swaps it in (see cl_graph.cpp)
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
  ~ClGraph() override;
  ClGraph(const ClGraph&) = delete;
  ClGraph& operator=(const ClGraph&) = delete;
  Status set_args(std::size_t index, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                  std::size_t arg_count) noexcept override;
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<std::shared_ptr<CoarseSvm>>& shared() const { return shared_; }

  // "command 3 (launch 'saxpy')": how messages name a step (the core adds the graph's name).
  static std::string describe(const Step& step);
  // Takes over `k` (appended to kernels_) and returns its handle, which stays valid as long as the graph.
  cl_kernel keep(cl::Kernel k);
  // How many kernel objects the graph owns (at most two per launch or fill; tests).
  std::size_t kernel_objects() const { return kernels_.size(); }

 private:
  friend class ClDevice;
  std::string name_;
  std::vector<Step> steps_;  // in recorded order, without NOTHING commands
  std::vector<cl::Kernel> kernels_;  // every kernel object the steps name, in the order made
  // Coarse-grained shared memory the steps name (cl_shared.cpp): a replay unmaps it first. Never
  // shrinks: set_args adds what new arguments name.
  std::vector<std::shared_ptr<CoarseSvm>> shared_;
  void note_shared(const plugin::Buffer* buffer);
  void note_shared(const plugin::KernelArg* args, std::size_t count);
};

}  // namespace gpurt::opencl
