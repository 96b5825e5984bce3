// open_raw_chains: picks the raw chains for a gpurt device's backend (see chain.hpp).
#include "raw/chain.hpp"

namespace gpurt::bench {

namespace raw {
std::unique_ptr<RawChains> open_cuda_chains(const Device& device);    // cuda_chain.cpp
std::unique_ptr<RawChains> open_opencl_chains(const Device& device);  // opencl_chain.cpp
}  // namespace raw

std::unique_ptr<RawChains> open_raw_chains(const Device& device) {
  const std::string& backend = device.properties().backend;
#ifdef GPURT_RAW_CUDA
  if (backend == "cuda") return raw::open_cuda_chains(device);
#endif
#ifdef GPURT_RAW_OPENCL
  if (backend == "opencl") return raw::open_opencl_chains(device);
#endif
  throw Error(ErrorCategory::unsupported, "gpurt bench has no raw chains for " + device.description() +
                                              ": the raw side exists for the cuda and opencl backends only (and only "
                                              "those whose headers the tool was built with)");
}

}  // namespace gpurt::bench
