// The conformance suite's kernels: one source in the portable dialect (docs/kernel-language.md),
// built unchanged on every device, so a new backend runs the suite without a line of its own.
// Every word used here is in both preludes (backends/opencl/cl_prelude.hpp and
// backends/cuda/cu_prelude.hpp): the OpenCL compiler and NVRTC both build it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpurt::test {

// vector_add, also alone in its program (Fixture::vector_add): it is one of the mock backend's
// built-in kernels (same name and parameters), so the cases that need only it run on the mock too.
inline const char* portable_vector_add = R"(
GPURT_KERNEL void vector_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* c, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
)";

// The rest of the suite's kernels; with vector_add they make Fixture::program().
inline const char* portable_suite_rest = R"(
GPURT_KERNEL void empty_kernel() {}

GPURT_KERNEL void index3d(GPURT_GLOBAL uint32_t* out, uint32_t nx, uint32_t ny, uint32_t nz) {
  const size_t x = gpurt_global_id(0), y = gpurt_global_id(1), z = gpurt_global_id(2);
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = (uint32_t)(x + 1000 * y + 1000000 * z);
}

GPURT_KERNEL void group_shape(GPURT_GLOBAL uint32_t* out) {
  if (gpurt_global_id(0) == 0 && gpurt_global_id(1) == 0 && gpurt_global_id(2) == 0) {
    out[0] = (uint32_t)gpurt_local_size(0);
    out[1] = (uint32_t)gpurt_local_size(1);
    out[2] = (uint32_t)gpurt_local_size(2);
    out[3] = (uint32_t)gpurt_num_groups(0);
    out[4] = (uint32_t)gpurt_num_groups(1);
    out[5] = (uint32_t)gpurt_num_groups(2);
  }
}

GPURT_KERNEL void count_items(GPURT_GLOBAL uint32_t* counter) { gpurt_atomic_add(counter, 1u); }

GPURT_KERNEL void reverse_in_group(GPURT_GLOBAL int32_t* data, uint32_t n, GPURT_DYNAMIC_LOCAL(int32_t, tmp)) {
  const size_t lid = gpurt_local_id(0), lsz = gpurt_local_size(0), gid = gpurt_global_id(0);
  tmp[lid] = gid < n ? data[gid] : 0;
  gpurt_local_barrier();
  const size_t src = gpurt_group_id(0) * lsz + (lsz - 1 - lid);
  if (gid < n && src < n) data[gid] = tmp[lsz - 1 - lid];
}

GPURT_KERNEL void scalars(GPURT_GLOBAL int64_t* out, int8_t c, int16_t s, int32_t i, int64_t l, float f, uint32_t u) {
  out[0] = c;
  out[1] = s;
  out[2] = i;
  out[3] = l;
  out[4] = (int64_t)(f * 1000.0f);
  out[5] = u;
}

GPURT_KERNEL void scale(GPURT_GLOBAL float* x, float factor, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) x[i] *= factor;
}

GPURT_KERNEL void busy_add(GPURT_GLOBAL uint32_t* x, uint32_t n, uint32_t rounds) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  uint32_t v = x[i];
  for (uint32_t r = 0; r < rounds; ++r) v = v * 1664525u + 1013904223u;
  x[i] = v;
}

#ifdef GPURT_HAS_FP64
GPURT_KERNEL void axpy_double(GPURT_GLOBAL double* y, GPURT_GLOBAL const double* x, double a, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] += a * x[i];
}
#endif
)";

// Fixture::program()'s source: every kernel above (axpy_double only where GPURT_HAS_FP64 is defined).
inline const std::string portable_suite = std::string(portable_vector_add) + portable_suite_rest;

// What busy_add(x, n, rounds) makes of x, on the CPU.
inline std::vector<std::uint32_t> busy_add_reference(std::vector<std::uint32_t> v, std::uint32_t rounds) {
  for (auto& x : v)
    for (std::uint32_t r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  return v;
}

}  // namespace gpurt::test
