// gpurt::bench::RawChains: the vendor API running the chains of kernels that the graph rows of
// `gpurt bench` (bench/graph_rows.cpp) replay through gpurt: the same kernels, launch shapes and
// counts, written the way a careful user of the raw API would write them - one stream (CUDA) or
// one in-order queue (OpenCL), kernel arguments set once, and on CUDA the same chain as a CUDA
// graph (stream capture, cuGraphInstantiate once, one cuGraphLaunch per repeat). Like
// RawBaseline (raw/baseline.hpp) it loads the vendor libraries itself and uses only gpurt's public
// API; each call blocks, sets up what it measures and releases it; failures throw gpurt::Error.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "gpurt/gpurt.hpp"

namespace gpurt::bench {

// What a chain's kernels are. empty: `length` launches of an empty kernel, one group of one
// work-item. step: kernel i is the i % 3-th of three small kernels over two buffers x and y of
// chain_step_elements floats, groups of 256 (4 groups): y = 2x + y (saxpy), y = 0.5y (scale),
// x = y - x (sub); `length` is a multiple of 3, and the values stay bounded over any number of steps.
enum class ChainKind { empty, step };
inline constexpr std::size_t chain_step_elements = 1024;

struct Chain {
  ChainKind kind = ChainKind::empty;
  std::size_t length = 0;  // kernels in the chain
};

class RawChains {
 public:
  virtual ~RawChains() = default;
  virtual std::string api() const = 0;  // "CUDA driver API", "OpenCL"
  // Mean microseconds per kernel: the chain's kernels launched one by one `repeats` times on one
  // stream / in-order queue (cuLaunchKernel / clEnqueueNDRangeKernel, arguments prepared before
  // the loop) and one wait, after one untimed run of the chain and a wait.
  virtual double stream_us(const Chain& chain, std::size_t repeats) = 0;
  // Mean microseconds per kernel: the chain captured from the stream into a CUDA graph and
  // instantiated (untimed), launched once untimed, then `repeats` cuGraphLaunch calls on the
  // stream and one wait. Throws unsupported where the API has no graphs (OpenCL 1.2).
  virtual double graph_us(const Chain& chain, std::size_t repeats) = 0;
};

// The raw chains for `device` (the same physical device as open_raw_baseline picks). Throws as
// open_raw_baseline does: unsupported for a backend without a raw side (mock) or one this tool
// was built without, backend_unavailable when the vendor library cannot be loaded.
std::unique_ptr<RawChains> open_raw_chains(const Device& device);

}  // namespace gpurt::bench
