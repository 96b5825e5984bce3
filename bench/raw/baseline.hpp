// gpurt::bench::RawBaseline: the vendor API (CUDA driver API with NVRTC and cuBLAS, plain OpenCL
// with CLBlast)
// measured directly on the physical device a gpurt Device stands for, so that `gpurt bench` can
// report gpurt as a ratio against it in the same run. It is part of the bench tool only: it loads
// the vendor libraries itself (raw/cuda_api.cpp, raw/opencl_api.cpp) and never goes through gpurt's
// plugins; of gpurt it uses the public API alone (device properties, gpurt::Error). Each call
// blocks, sets up what it measures and releases it before returning; times are host wall time
// unless stated; failures throw gpurt::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpurt/gpurt.hpp"

namespace gpurt::bench {

enum class HostMemory { pageable, pinned };

class RawBaseline {
 public:
  virtual ~RawBaseline() = default;
  virtual std::string api() const = 0;  // "CUDA driver API", "OpenCL"
  // Mean microseconds per launch of an empty kernel (one group of one item) over `launches`
  // launches and one wait, after 100 untimed launches and a wait.
  virtual double launch_async_us(std::size_t launches) = 0;
  // Mean microseconds of a launch of the empty kernel followed by a wait for it.
  virtual double launch_sync_us(std::size_t reps) = 0;
  // Mean host microseconds to enqueue one launch (4 groups of 256) of a kernel with four arguments
  // (two buffers, an integer and a float), the queue drained outside the timed loop.
  virtual double enqueue_four_args_us(std::size_t launches) = 0;
  // Aggregate launches per second of the empty kernel (one group of one item) from `threads` host
  // threads, each making `per_thread` launches: on a queue (stream) of each thread's own, or with
  // `shared_queue` all on the baseline's one queue; every queue is then waited for once. The queues
  // are made, and warmed with 100 launches and a wait each, before the clock starts; the timing is
  // raw::threaded_rate's (raw/threaded.hpp), the same as gpurt's side of the row.
  virtual double launch_rate(std::size_t threads, bool shared_queue, std::size_t per_thread) = 0;
  // Mean microseconds to allocate `bytes` of device memory and free it again, over `reps` pairs;
  // with `first_use`, a blocking 4-byte write from the host into the new memory in between (where
  // a lazy driver makes memory resident).
  virtual double alloc_us(std::size_t bytes, std::size_t reps, bool first_use) = 0;
  // Mean microseconds per step of allocating `bytes` in queue order, filling them (a 4-byte
  // pattern) and freeing them in queue order, over `steps` steps back to back and one wait, after
  // one untimed round of the same (CUDA: cuMemAllocAsync, cuMemsetD32Async, cuMemFreeAsync on the
  // device's default memory pool). Throws unsupported where the API has no queue-ordered
  // allocation (OpenCL), unless overridden.
  virtual double queue_alloc_us(std::size_t bytes, std::size_t steps);
  // Seconds for `reps` back-to-back copies of `bytes` and one wait, after one untimed copy;
  // `mem` chooses page-locked or ordinary host memory (ignored device to device).
  virtual double copy_seconds(CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps) = 0;
  // Milliseconds to compile and load three tiny kernels natively (cold, no cache of gpurt's).
  virtual double build_tiny_ms() = 0;
  enum class GemmPrecision { fp32 = 0, tf32 = 1, bf16 = 2, fp64 = 3 };
  // A GEMM's precision and shape (what a baseline keeps its operands for between calls).
  struct GemmKey {
    GemmPrecision precision;
    std::size_t m, n, k;
    bool operator!=(const GemmKey& o) const { return precision != o.precision || m != o.m || n != o.n || k != o.k; }
  };
  // The vendor BLAS that gemm_gflops runs ("cuBLAS", "CLBlast"), or empty when the baseline has none.
  virtual std::string gemm_library() const = 0;
  // GFLOP/s (2 m n k per call) of the vendor BLAS GEMM, c (m x n) = a (m x k) * b (k x n), all
  // row-major as gpurt's lib::matmul takes them: fp32 inputs, output and accumulation; TF32 (fp32
  // in memory, tensor cores; cuBLAS only); bf16 inputs with fp32 output and accumulation (cuBLAS
  // only); or fp64 throughout. `reps` calls back to back after one untimed call, host wall time to
  // the queue's end, on gemm_input() in buffers of the baseline's own. Throws unsupported
  // without the library, or when it does not cover `precision` on this device (CLBlast: no TF32 or
  // bf16; no fp64 on a device without it).
  virtual double gemm_gflops(GemmPrecision precision, std::size_t m, std::size_t n, std::size_t k,
                             std::size_t reps) = 0;

  // ---- interop (docs/interop.md); both throw unsupported unless the baseline overrides them ----
  // GFLOP/s of the vendor BLAS SGEMM (cuBLAS), n x n x n in fp32, on three gpurt buffers made on
  // `queue`'s device and in the queue's own stream (through <gpurt/cuda.hpp>), timed exactly as
  // gemm_gflops(fp32, n, n, n, reps) times it on the library's own memory and stream.
  virtual double gemm_on_gpurt_gflops(Queue& queue, std::size_t n, std::size_t reps);
  // Seconds for `reps` back-to-back copies of `bytes` from this device to `peer` (another gpurt
  // device of the same backend) with the native peer copy (cuMemcpyPeerAsync on this device's
  // stream, peer access enabled where the devices allow it) and one wait, after one untimed copy.
  virtual double peer_copy_seconds(const Device& peer, std::size_t bytes, std::size_t reps);
};

// The GEMM rows' inputs, the same for gpurt's calls and the raw baseline's: `elements` values in
// [-1, 1) from a fixed xorshift sequence started at `seed`, stored in the precision's format (fp32
// for fp32 and TF32, bf16 rounded to nearest even, fp64), as bytes. Not constant: tensor-core GEMMs
// draw less power on constant data and run faster than on any real data (cuBLAS TF32 at 4096^3 ran
// 10 % faster on 2^-7 everywhere than on random inputs on the H200, docs/bench/approaches.md).
std::vector<unsigned char> gemm_input(RawBaseline::GemmPrecision precision, std::size_t elements, std::uint64_t seed);

// The baseline for `device`, on the same physical device: CUDA matches the driver's device by
// uuid, else PCI bus id, else ordinal; OpenCL by platform name and device name, the n-th such
// device for the n-th gpurt device of that name. Throws gpurt::Error: unsupported for a backend
// without a raw baseline (mock) or one this tool was built without, backend_unavailable when the
// vendor library cannot be loaded, internal when no native device matches.
std::unique_ptr<RawBaseline> open_raw_baseline(const Device& device);

}  // namespace gpurt::bench
