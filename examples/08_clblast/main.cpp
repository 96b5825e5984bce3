// 08_clblast: a vendor library on gpurt memory. CLBlast's SGEMM multiplies two gpurt buffers into a
// third on gpurt's own queue, then a gpurt kernel consumes the product on the same queue - no copy,
// no wait in between: the queue's cl_command_queue orders both. Checked against the CPU.
//
//   usage: 08_clblast [SELECTOR]      e.g. 08_clblast opencl:0
//
// CLBlast is found at run time (dlopen), so this builds everywhere; without it the example says
// "skipped: ..." and exits 0.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>
#include <gpurt/opencl.hpp>

// CLBlastSgemm from clblast_c.h, declared here so that the header is not needed to build. Its
// enums are C enums (int): layout 101 = row-major, transpose 111 = no; 0 = CLBlastSuccess.
using SgemmFn = int (*)(int layout, int a_transpose, int b_transpose, std::size_t m, std::size_t n, std::size_t k,
                        float alpha, cl_mem a, std::size_t a_offset, std::size_t a_ld, cl_mem b, std::size_t b_offset,
                        std::size_t b_ld, float beta, cl_mem c, std::size_t c_offset, std::size_t c_ld,
                        cl_command_queue* queue, cl_event* event);
constexpr int row_major = 101, no_transpose = 111;

// What the gpurt kernel does with the product: d[i] = max(c[i], 0) + bias.
static const char* relu_source = R"(
GPURT_KERNEL void relu_bias(GPURT_GLOBAL const float* c, GPURT_GLOBAL float* d, float bias, uint32_t n) {
  const uint32_t i = gpurt_global_id(0);
  if (i < n) d[i] = fmax(c[i], 0.0f) + bias;
}
)";

int main(int argc, char** argv) try {
  void* lib = dlopen("libclblast.so.1", RTLD_NOW);
  if (!lib) lib = dlopen("libclblast.so", RTLD_NOW);
  if (!lib) {
    std::printf("skipped: CLBlast is not installed (%s)\n", dlerror());
    return 0;
  }
  const auto sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "CLBlastSgemm"));
  if (!sgemm) {
    std::printf("skipped: %s has no CLBlastSgemm\n", "libclblast");
    return 0;
  }
  const std::string selector = argc > 1 ? argv[1] : "opencl";
  gpurt::Device dev;
  try {
    dev = gpurt::device(selector);
  } catch (const gpurt::Error& e) {
    std::printf("skipped: no OpenCL device '%s' (%s)\n", selector.c_str(), e.what());
    return 0;
  }
  if (dev.backend() != "opencl") {
    std::printf("skipped: CLBlast needs an OpenCL device, and %s is not one\n", dev.description().c_str());
    return 0;
  }

  // C (m x n) = A (m x k) * B (k x n), row-major; sizes prime, buffers views at odd offsets.
  const std::size_t m = 37, n = 29, k = 43;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  const float bias = dist(rng);
  std::printf("device: %s, C(%zu x %zu) = A(%zu x %zu) B(%zu x %zu)\n", dev.description().c_str(), m, n, m, k, k, n);

  gpurt::Queue queue = dev.create_queue();
  const auto a_store = dev.alloc<float>(m * k + 3), b_store = dev.alloc<float>(k * n + 5);
  const auto c_store = dev.alloc<float>(m * n + 7);
  const auto da = a_store.view(3, m * k), db = b_store.view(5, k * n), dc = c_store.view(7, m * n);
  const auto dd = dev.alloc<float>(m * n);
  queue.copy(a, da);
  queue.copy(b, db);

  // CLBlast takes the cl_mem of each buffer's allocation and the view's offset in elements, and
  // enqueues on gpurt's queue.
  cl_command_queue cq = gpurt::opencl::command_queue(queue);
  const int status = sgemm(row_major, no_transpose, no_transpose, m, n, k, 1.0f, gpurt::opencl::memory(da), da.offset(),
                           k, gpurt::opencl::memory(db), db.offset(), n, 0.0f, gpurt::opencl::memory(dc), dc.offset(),
                           n, &cq, nullptr);
  if (status != 0) {
    std::printf("FAILED: CLBlastSgemm returned %d\n", status);
    return 1;
  }
  // The gpurt kernel on the same queue runs after the SGEMM.
  gpurt::Kernel relu = dev.build({gpurt::SourceLanguage::portable, relu_source, "relu_bias.gpurt"}).kernel("relu_bias");
  queue.launch(relu, gpurt::LaunchConfig::cover(relu, m * n), dc, dd, bias, static_cast<std::uint32_t>(m * n));
  std::vector<float> d(m * n);
  queue.copy(dd, d);
  queue.finish();

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += double(a[i * k + p]) * b[p * n + j];
        magnitude += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      const double expect = std::fmax(sum, 0.0) + bias;
      wrong += std::fabs(d[i * n + j] - expect) > 1e-5 * magnitude + 1e-5 * std::fabs(bias) + 1e-6;
    }
  std::printf("%s: %zu of %zu results differ from the CPU\n", wrong ? "FAILED" : "OK", wrong, m * n);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::printf("FAILED: %s\n", e.what());
  return 1;
}
