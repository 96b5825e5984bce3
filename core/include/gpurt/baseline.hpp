// gpurt::RawBaseline: the vendor API (CUDA driver API, plain OpenCL) measured directly on a
// device, so that a benchmark can report gpurt as a ratio against it in the same run. Each call
// blocks, sets up what it measures and releases it; failures throw gpurt::Error.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "gpurt/device.hpp"

namespace gpurt {

namespace detail {
struct BaselineState;
}

enum class HostMemory { pageable, pinned };

class RawBaseline {
 public:
  explicit RawBaseline(const Device& device);
  ~RawBaseline();
  RawBaseline(RawBaseline&&) noexcept;
  RawBaseline& operator=(RawBaseline&&) noexcept;

  std::string api() const;
  double launch_async_us(std::size_t launches);   // per launch, `launches` then one wait
  double launch_sync_us(std::size_t reps);        // launch + wait
  double enqueue_four_args_us(std::size_t launches);
  double copy_seconds(CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps);
  double build_tiny_ms();                         // three tiny kernels, native source, cold
  enum class GemmPrecision { fp32 = 0, tf32 = 1, bf16 = 2 };
  // The vendor BLAS (cuBLAS) GEMM, fp32 output: throws unsupported without one.
  double gemm_gflops(GemmPrecision precision, std::size_t n, std::size_t reps);

 private:
  std::unique_ptr<detail::BaselineState> state_;
};

}  // namespace gpurt
