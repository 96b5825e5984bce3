// The chains of the graph rows (raw/chain.hpp) on the CUDA driver API: launched one by one with
// cuLaunchKernel on one non-blocking stream of the device's primary context, and as a CUDA graph
// captured from that stream (the way most CUDA programs make one), instantiated once and launched
// with cuGraphLaunch.
#include <memory>
#include <string>

#include "raw/chain.hpp"
#include "raw/common.hpp"
#include "raw/cuda_api.hpp"
#include "raw/cuda_common.hpp"

namespace gpurt::bench::raw {

namespace {

const char* chain_kernels = R"(
extern "C" __global__ void chain_empty() {}
extern "C" __global__ void chain_saxpy(float* y, const float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void chain_scale(float* y, float s, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= s;
}
extern "C" __global__ void chain_sub(float* x, const float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = y[i] - x[i];
}
)";

using DeviceMemory = Owned<CUdeviceptr, CUresult>;

class CudaChains final : public RawChains {
 public:
  CudaChains(const CudaApi& cu, CUdevice dev, const std::string& arch) : cu_(cu), ctx_(cu, dev) {
    ctx_.make_current();
    CUstream st = nullptr;
    GPURT_RAW_CHECK(cu_.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    stream_ = own(st, cu_.cuStreamDestroy);
    module_ = compile(cu_, chain_kernels, arch);
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&empty_, module_.get(), "chain_empty"));
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&step_[0], module_.get(), "chain_saxpy"));
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&step_[1], module_.get(), "chain_scale"));
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&step_[2], module_.get(), "chain_sub"));
  }

  std::string api() const override { return "CUDA driver API"; }

  double stream_us(const Chain& chain, std::size_t repeats) override {
    ctx_.make_current();
    const Buffers b(cu_, stream_.get());
    enqueue(chain, b);
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t r = 0; r < repeats; ++r) enqueue(chain, b);
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    return since_us(t0) / static_cast<double>(repeats * chain.length);
  }

  double graph_us(const Chain& chain, std::size_t repeats) override {
    ctx_.make_current();
    const Buffers b(cu_, stream_.get());
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    // Thread-local capture: other threads' CUDA calls (gpurt's own) are not affected by it.
    GPURT_RAW_CHECK(cu_.cuStreamBeginCapture(stream_.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUgraph g = nullptr;
    try {
      enqueue(chain, b);
    } catch (...) {  // leave capture mode, so that the stream stays usable
      if (cu_.cuStreamEndCapture(stream_.get(), &g) == CUDA_SUCCESS && g) (void)cu_.cuGraphDestroy(g);
      throw;
    }
    GPURT_RAW_CHECK(cu_.cuStreamEndCapture(stream_.get(), &g));
    const auto graph = own(g, cu_.cuGraphDestroy);
    CUgraphExec e = nullptr;
    GPURT_RAW_CHECK(cu_.cuGraphInstantiate(&e, graph.get(), 0));
    const auto exec = own(e, cu_.cuGraphExecDestroy);
    GPURT_RAW_CHECK(cu_.cuGraphLaunch(exec.get(), stream_.get()));  // uploads the graph
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t r = 0; r < repeats; ++r) GPURT_RAW_CHECK(cu_.cuGraphLaunch(exec.get(), stream_.get()));
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    return since_us(t0) / static_cast<double>(repeats * chain.length);
  }

 private:
  // x and y of the step kernels (1.0f each) and the kernels' parameter arrays; freed (after the
  // stream's work, which every caller waits for) when the measurement ends.
  struct Buffers {
    Buffers(const CudaApi& cu, CUstream stream) {
      GPURT_RAW_CHECK(cu.cuMemAlloc(&x, chain_step_elements * sizeof(float)));
      ox = own(x, cu.cuMemFree);
      GPURT_RAW_CHECK(cu.cuMemAlloc(&y, chain_step_elements * sizeof(float)));
      oy = own(y, cu.cuMemFree);
      GPURT_RAW_CHECK(cu.cuMemsetD32Async(x, 0x3f800000u, chain_step_elements, stream));
      GPURT_RAW_CHECK(cu.cuMemsetD32Async(y, 0x3f800000u, chain_step_elements, stream));
    }
    Buffers(const Buffers&) = delete;  // the parameter arrays point into it
    Buffers& operator=(const Buffers&) = delete;
    CUdeviceptr x = 0, y = 0;
    DeviceMemory ox, oy;
    float two = 2.0f, half = 0.5f;
    unsigned n = static_cast<unsigned>(chain_step_elements);
    void* saxpy[4] = {&y, &x, &two, &n};
    void* scale[3] = {&y, &half, &n};
    void* sub[3] = {&x, &y, &n};
  };

  void enqueue(const Chain& chain, const Buffers& b) const {
    const CUstream s = stream_.get();
    if (chain.kind == ChainKind::empty) {
      for (std::size_t i = 0; i < chain.length; ++i)
        GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr));
      return;
    }
    void** const params[3] = {const_cast<void**>(b.saxpy), const_cast<void**>(b.scale), const_cast<void**>(b.sub)};
    const unsigned groups = static_cast<unsigned>((chain_step_elements + 255) / 256);
    for (std::size_t i = 0; i < chain.length; ++i)
      GPURT_RAW_CHECK(cu_.cuLaunchKernel(step_[i % 3], groups, 1, 1, 256, 1, 1, 0, s, params[i % 3], nullptr));
  }

  const CudaApi& cu_;
  PrimaryContext ctx_;  // first in, last out: the stream and module below go before it
  Owned<CUstream, CUresult> stream_;
  Module module_;
  CUfunction empty_ = nullptr;
  CUfunction step_[3] = {};
};

}  // namespace

std::unique_ptr<RawChains> open_cuda_chains(const Device& device) {
  const CudaApi& cu = CudaApi::get();
  const DeviceProperties& p = device.properties();
  return std::make_unique<CudaChains>(cu, find_device(cu, p, device.selector()), p.architecture);
}

}  // namespace gpurt::bench::raw
