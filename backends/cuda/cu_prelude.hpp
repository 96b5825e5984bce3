// The CUDA mapping of gpurt's portable kernel dialect (docs/kernel-language.md). Prepended to
// every portable source, followed by `#line 1 "<name>"` so compiler messages keep the user's
// line numbers.
#pragma once

namespace gpurt::cuda {

inline const char* portable_prelude = R"GPURT(
#define GPURT_CUDA 1
#define GPURT_HAS_FP64 1
#define GPURT_KERNEL extern "C" __global__
#define GPURT_GLOBAL
#define GPURT_LOCAL __shared__
#define GPURT_LOCAL_PTR
#define GPURT_CONSTANT const
#define GPURT_RESTRICT __restrict__
#define GPURT_INLINE __device__ inline
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
__device__ inline size_t gpurt_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
__device__ inline size_t gpurt_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
__device__ inline size_t gpurt_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
__device__ inline size_t gpurt_num_groups(int d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }
__device__ inline size_t gpurt_global_id(int d) { return gpurt_group_id(d) * gpurt_local_size(d) + gpurt_local_id(d); }
__device__ inline size_t gpurt_global_size(int d) { return gpurt_num_groups(d) * gpurt_local_size(d); }
#define gpurt_barrier() __syncthreads()
#define gpurt_local_barrier() __syncthreads()
#define gpurt_mem_fence() __threadfence()
#define gpurt_atomic_add(p, v) atomicAdd(p, v)
#define gpurt_atomic_sub(p, v) atomicSub(p, v)
#define gpurt_atomic_min(p, v) atomicMin(p, v)
#define gpurt_atomic_max(p, v) atomicMax(p, v)
#define gpurt_atomic_xchg(p, v) atomicExch(p, v)
#define gpurt_atomic_cmpxchg(p, cmp, v) atomicCAS(p, cmp, v)
#define gpurt_atomic_add_float(p, v) atomicAdd(p, v)
#define gpurt_atomic_add_float_local(p, v) atomicAdd(p, v)
// Dynamic local memory arrives as the kernel's last parameter: an empty tag whose value is the
// launch's dynamic shared memory.
extern __shared__ __align__(16) unsigned char gpurt_dynamic_shared[];
template <class T>
struct gpurt_dynamic_local {
  __device__ T& operator[](size_t i) const { return reinterpret_cast<T*>(gpurt_dynamic_shared)[i]; }
  __device__ operator T*() const { return reinterpret_cast<T*>(gpurt_dynamic_shared); }
};
#define GPURT_DYNAMIC_LOCAL(T, name) gpurt_dynamic_local<T> name
)GPURT";

}  // namespace gpurt::cuda
