// The OpenCL mapping of gpurt's portable kernel dialect (docs/kernel-language.md). Prepended to
// every portable source, followed by `#line 1 "<name>"` so compiler messages keep the user's
// line numbers.
#pragma once

namespace gpurt::opencl {

inline const char* portable_prelude = R"GPURT(
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define GPURT_HAS_FP64 1
#endif
#define GPURT_OPENCL 1
#define GPURT_KERNEL __kernel
#define GPURT_GLOBAL __global
#define GPURT_LOCAL __local
#define GPURT_LOCAL_PTR __local
#define GPURT_CONSTANT __constant
#define GPURT_RESTRICT restrict
#define GPURT_INLINE inline
#define GPURT_DYNAMIC_LOCAL(T, name) __local T* name
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define gpurt_global_id(d) get_global_id(d)
#define gpurt_local_id(d) get_local_id(d)
#define gpurt_group_id(d) get_group_id(d)
#define gpurt_local_size(d) get_local_size(d)
#define gpurt_num_groups(d) get_num_groups(d)
#define gpurt_global_size(d) get_global_size(d)
#define gpurt_barrier() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define gpurt_local_barrier() barrier(CLK_LOCAL_MEM_FENCE)
#define gpurt_mem_fence() mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define gpurt_atomic_add(p, v) atomic_add(p, v)
#define gpurt_atomic_sub(p, v) atomic_sub(p, v)
#define gpurt_atomic_min(p, v) atomic_min(p, v)
#define gpurt_atomic_max(p, v) atomic_max(p, v)
#define gpurt_atomic_xchg(p, v) atomic_xchg(p, v)
#define gpurt_atomic_cmpxchg(p, cmp, v) atomic_cmpxchg(p, cmp, v)
inline float gpurt_atomic_add_float(volatile __global float* p, float v) {
  uint old = as_uint(*p), assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __global uint*)p, assumed, as_uint(as_float(assumed) + v));
  } while (old != assumed);
  return as_float(old);
}
inline float gpurt_atomic_add_float_local(volatile __local float* p, float v) {
  uint old = as_uint(*p), assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __local uint*)p, assumed, as_uint(as_float(assumed) + v));
  } while (old != assumed);
  return as_float(old);
}
)GPURT";

}  // namespace gpurt::opencl
