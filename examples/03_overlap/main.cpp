// 03_overlap: a transfer-bound job split across several queues, so that uploads, kernels and
// downloads of different chunks run at the same time. Prints the time on one queue and on
// several, and checks every result against the CPU.
//
//   usage: 03_overlap [SELECTOR] [MIB]      e.g. 03_overlap cuda 512
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gpurt/gpurt.hpp>

static const char* source = R"(
GPURT_KERNEL void transform(GPURT_GLOBAL const float* in, GPURT_GLOBAL float* out, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = sqrt(fabs(in[i])) * 0.5f + 1.0f;
})";

struct Chunk {
  gpurt::Buffer<float> in, out;
  std::size_t first, count;
};

// Runs the whole job with `queues` queues; chunk i goes to queue i % queues. Returns seconds.
static double run(const gpurt::Device& dev, const gpurt::Kernel& k, std::vector<gpurt::Queue>& queues,
                  std::vector<Chunk>& chunks, const gpurt::HostBuffer<float>& in, const gpurt::HostBuffer<float>& out,
                  std::size_t nq) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    gpurt::Queue& q = queues[i % nq];
    Chunk& c = chunks[i];
    q.copy(in.view(c.first, c.count), c.in);                                               // upload
    q.launch(k, gpurt::LaunchConfig::cover(k, c.count), c.in, c.out, static_cast<uint32_t>(c.count));  // kernel
    q.copy(c.out, out.view(c.first, c.count));                                             // download
  }
  // The first queue waits (on the device) for the others' last work, then the host waits for it.
  for (std::size_t i = 1; i < nq; ++i) queues[0].wait(queues[i].record());
  queues[0].finish();
  (void)dev;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) try {
  const gpurt::Device dev = argc > 1 ? gpurt::device(argv[1]) : gpurt::default_device();
  const std::size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  const std::size_t n = mib * (1u << 20) / sizeof(float), nchunks = 16, nqueues = 4;
  std::printf("device: %s, %zu MiB in %zu chunks\n", dev.description().c_str(), mib, nchunks);

  auto in = dev.alloc_host<float>(n), out = dev.alloc_host<float>(n);  // pinned: DMA can overlap
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 10007) - 5000.0f;
  gpurt::Kernel k = dev.build({gpurt::SourceLanguage::portable, source, "overlap.gpurt"}).kernel("transform");
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < nchunks; ++i) {
    const std::size_t first = n * i / nchunks, count = n * (i + 1) / nchunks - first;
    chunks.push_back({dev.alloc<float>(count), dev.alloc<float>(count), first, count});
  }
  std::vector<gpurt::Queue> queues;
  for (std::size_t i = 0; i < nqueues; ++i) queues.push_back(dev.create_queue());

  run(dev, k, queues, chunks, in, out, nqueues);  // warm-up
  double one = 1e30, many = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    one = std::min(one, run(dev, k, queues, chunks, in, out, 1));
    many = std::min(many, run(dev, k, queues, chunks, in, out, nqueues));
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float ref = std::sqrt(std::fabs(in[i])) * 0.5f + 1.0f;
    wrong += std::fabs(out[i] - ref) > 1e-6f * std::fabs(ref);
  }
  std::printf("one queue: %.3f ms, %zu queues: %.3f ms, ratio %.3f\n", one * 1e3, nqueues, many * 1e3, many / one);
  std::printf("%s: %zu of %zu results differ from the CPU\n", wrong ? "FAILED" : "OK", wrong, n);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
