// The conformance suite's kernels, each in OpenCL C and in CUDA C++ with the same name and
// parameters. (Issue 4 replaces the pairs with the portable dialect.)
#pragma once

namespace gpurt::test {

inline const char* opencl_kernels = R"CL(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void empty_kernel() {}
__kernel void index3d(__global uint* out, uint nx, uint ny, uint nz) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = (uint)(x + 1000 * y + 1000000 * z);
}
__kernel void group_shape(__global uint* out) {
  if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {
    out[0] = get_local_size(0); out[1] = get_local_size(1); out[2] = get_local_size(2);
    out[3] = get_num_groups(0); out[4] = get_num_groups(1); out[5] = get_num_groups(2);
  }
}
__kernel void count_items(__global uint* counter) { atomic_inc(counter); }
__kernel void reverse_in_group(__global int* data, uint n, __local int* tmp) {
  size_t lid = get_local_id(0), lsz = get_local_size(0), gid = get_global_id(0);
  tmp[lid] = gid < n ? data[gid] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  size_t src = get_group_id(0) * lsz + (lsz - 1 - lid);
  if (gid < n && src < n) data[gid] = tmp[lsz - 1 - lid];
}
__kernel void scalars(__global long* out, char c, short s, int i, long l, float f, uint u) {
  out[0] = c; out[1] = s; out[2] = i; out[3] = l; out[4] = (long)(f * 1000.0f); out[5] = u;
}
__kernel void scale(__global float* x, float factor, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] *= factor;
}
__kernel void busy_add(__global uint* x, uint n, uint rounds) {
  size_t i = get_global_id(0);
  if (i >= n) return;
  uint v = x[i];
  for (uint r = 0; r < rounds; ++r) v = v * 1664525u + 1013904223u;
  x[i] = v;
}
)CL";

inline const char* opencl_fp64_kernels = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void axpy_double(__global double* y, __global const double* x, double a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
)CL";

inline const char* cuda_kernels = R"CU(
typedef unsigned int uint;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, uint n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void empty_kernel() {}
extern "C" __global__ void index3d(uint* out, uint nx, uint ny, uint nz) {
  size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
  size_t z = blockIdx.z * (size_t)blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = (uint)(x + 1000 * y + 1000000 * z);
}
extern "C" __global__ void group_shape(uint* out) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    out[0] = blockDim.x; out[1] = blockDim.y; out[2] = blockDim.z;
    out[3] = gridDim.x; out[4] = gridDim.y; out[5] = gridDim.z;
  }
}
extern "C" __global__ void count_items(uint* counter) { atomicAdd(counter, 1u); }
extern "C" __global__ void reverse_in_group(int* data, uint n) {
  extern __shared__ int tmp[];
  size_t lid = threadIdx.x, lsz = blockDim.x, gid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  tmp[lid] = gid < n ? data[gid] : 0;
  __syncthreads();
  size_t src = blockIdx.x * lsz + (lsz - 1 - lid);
  if (gid < n && src < n) data[gid] = tmp[lsz - 1 - lid];
}
extern "C" __global__ void scalars(long long* out, char c, short s, int i, long long l, float f, uint u) {
  out[0] = c; out[1] = s; out[2] = i; out[3] = l; out[4] = (long long)(f * 1000.0f); out[5] = u;
}
extern "C" __global__ void scale(float* x, float factor, uint n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
extern "C" __global__ void busy_add(uint* x, uint n, uint rounds) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint v = x[i];
  for (uint r = 0; r < rounds; ++r) v = v * 1664525u + 1013904223u;
  x[i] = v;
}
extern "C" __global__ void axpy_double(double* y, const double* x, double a, uint n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
)CU";

// vector_add in the portable dialect, alone in its program: the vector-add cases build it on every
// device, and it is one of the mock backend's built-in kernels (same name and parameters), so
// those cases run on the mock too.
inline const char* portable_vector_add = R"(
GPURT_KERNEL void vector_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* c, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
)";

}  // namespace gpurt::test
