// The raw-API side of gpurt-first-use (bench/first_use.cpp): a program's first copies and the seed
// pipeline done with the vendor API alone, each meant to run in a fresh process of its own. Of
// gpurt only the public headers' types are used (gpurt::Error for failures): the runtime is never
// started, so the driver is as cold as a raw program finds it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gpurt::bench::raw {

// The physical device, as the parent process (which has gpurt) describes it to a raw child.
struct NativeDevice {
  std::string backend;       // "cuda" or "opencl"
  std::string uuid;          // CUDA: 32 hex digits, or empty
  std::size_t index = 0;     // CUDA: the ordinal to use without a uuid
  std::string platform;      // OpenCL: platform name
  std::string name;          // OpenCL: device name
  std::size_t rank = 0;      // OpenCL: which of the devices so named
};

// Seconds of the first upload of `floats` floats from freshly allocated (and filled) pageable
// memory into a fresh device buffer, and of the first download into fresh, untouched pageable
// memory, each to completion. Throws gpurt::Error (unsupported for a backend without a raw side).
struct FirstCopy {
  double upload_s = 0, download_s = 0;
};
FirstCopy first_copy(const NativeDevice& device, std::size_t floats);

// The seed pipeline: context (and queue), kernel loaded (CUDA: the module from `cubin`, compiled
// beforehand as a program would cache it; OpenCL: built from source, the driver's own cache warm),
// three buffers, two inputs copied in from pageable memory, c = a + b launched, c copied out.
// Seconds from before the first native call to the end (init_s: up to a usable context and
// queue); `correct` checks c against the CPU.
struct PipelineData {
  explicit PipelineData(std::size_t floats);
  std::size_t n;
  std::vector<float> a, b;     // the inputs, filled
  std::unique_ptr<float[]> c;  // the output: fresh, untouched pageable memory
  bool correct() const;        // c == a + b
};
struct Pipeline {
  double total_s = 0, init_s = 0;
  bool correct = false;
};
Pipeline pipeline(const NativeDevice& device, PipelineData& data, const std::string& cubin);

// CUDA: the vector_add kernel compiled by NVRTC for `arch` ("sm_90"), as a cubin.
std::string cuda_vector_add_cubin(const std::string& arch);

}  // namespace gpurt::bench::raw
