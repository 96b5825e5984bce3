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
#define gpurt_atomic_and(p, v) atomic_and(p, v)
#define gpurt_atomic_or(p, v) atomic_or(p, v)
#define gpurt_atomic_xor(p, v) atomic_xor(p, v)
#if defined(GPURT_OPENCL_NVIDIA_PTX) && !defined(GPURT_ATOMICS_COMPARE_AND_SWAP)
/* NVIDIA's OpenCL lists no float atomics, but its compiler takes inline PTX: the native add (a
 * compare-and-swap loop on one address contended by a million work-items takes minutes there). */
inline float gpurt_atomic_add_float(volatile __global float* p, float v) {
  float r;
  asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(r) : "l"(p), "f"(v) : "memory");
  return r;
}
#else
inline float gpurt_atomic_add_float(volatile __global float* p, float v) {
  uint old = as_uint(*p), assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __global uint*)p, assumed, as_uint(as_float(assumed) + v));
  } while (old != assumed);
  return as_float(old);
}
#endif
inline float gpurt_atomic_add_float_local(volatile __local float* p, float v) {
  uint old = as_uint(*p), assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __local uint*)p, assumed, as_uint(as_float(assumed) + v));
  } while (old != assumed);
  return as_float(old);
}
)GPURT"
// Typed atomics (docs/kernel-language.md, "Atomics"): relaxed, each returning the old value.
// 64-bit integer words are macros over the atom_* built-ins of cl_khr_int64_base_atomics and
// cl_khr_int64_extended_atomics, which OpenCL C overloads for __global and __local pointers, so one
// word reaches both; without both extensions each word names what is missing when used. Float
// words (global memory) are compare-and-swap loops on the bits, except float and double add on
// NVIDIA (GPURT_OPENCL_NVIDIA_PTX), which are PTX's native atom.global.add unless
// -DGPURT_ATOMICS_COMPARE_AND_SWAP forces the loops: min and max as fmin/fmax (a NaN
// operand leaves the value; the loop compares bits, so a stored NaN cannot keep it spinning).
// Loads and stores are volatile accesses of the natural size.
R"GPURT(
#if defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define GPURT_HAS_INT64_ATOMICS 1
#endif
#define gpurt_atomic_add_f32(p, v) gpurt_atomic_add_float(p, v)
/* *p = COMBINE(*p, v) atomically, by CAS on the bits B of T; a result equal to the value, bit for
 * bit, is left unwritten. */
#define GPURT_ATOMIC_CAS_(OP, S, T, B, CAS, COMBINE) \
  inline T gpurt_atomic_##OP##_##S(volatile __global T* p, T v) { \
    B old = as_##B(*p); \
    for (;;) { \
      const B want = as_##B(COMBINE(as_##T(old), v)); \
      if (want == old) return as_##T(old); \
      const B seen = CAS((volatile __global B*)p, old, want); \
      if (seen == old) return as_##T(old); \
      old = seen; \
    } \
  }
#define GPURT_ATOMIC_PLUS_(a, b) ((a) + (b))
GPURT_ATOMIC_CAS_(min, f32, float, uint, atomic_cmpxchg, fmin)
GPURT_ATOMIC_CAS_(max, f32, float, uint, atomic_cmpxchg, fmax)
#define GPURT_ATOMIC_LOAD_STORE_(S, T) \
  inline T gpurt_atomic_load_##S(volatile __global T* p) { return *p; } \
  inline void gpurt_atomic_store_##S(volatile __global T* p, T v) { *p = v; }
GPURT_ATOMIC_LOAD_STORE_(i32, int)
GPURT_ATOMIC_LOAD_STORE_(u32, uint)
GPURT_ATOMIC_LOAD_STORE_(f32, float)
#ifdef GPURT_HAS_INT64_ATOMICS
#define gpurt_atomic_add_i64(p, v) atom_add(p, (long)(v))
#define gpurt_atomic_add_u64(p, v) atom_add(p, (ulong)(v))
#define gpurt_atomic_sub_i64(p, v) atom_sub(p, (long)(v))
#define gpurt_atomic_sub_u64(p, v) atom_sub(p, (ulong)(v))
#define gpurt_atomic_min_i64(p, v) atom_min(p, (long)(v))
#define gpurt_atomic_min_u64(p, v) atom_min(p, (ulong)(v))
#define gpurt_atomic_max_i64(p, v) atom_max(p, (long)(v))
#define gpurt_atomic_max_u64(p, v) atom_max(p, (ulong)(v))
#define gpurt_atomic_and_i64(p, v) atom_and(p, (long)(v))
#define gpurt_atomic_and_u64(p, v) atom_and(p, (ulong)(v))
#define gpurt_atomic_or_i64(p, v) atom_or(p, (long)(v))
#define gpurt_atomic_or_u64(p, v) atom_or(p, (ulong)(v))
#define gpurt_atomic_xor_i64(p, v) atom_xor(p, (long)(v))
#define gpurt_atomic_xor_u64(p, v) atom_xor(p, (ulong)(v))
#define gpurt_atomic_xchg_i64(p, v) atom_xchg(p, (long)(v))
#define gpurt_atomic_xchg_u64(p, v) atom_xchg(p, (ulong)(v))
#define gpurt_atomic_cmpxchg_i64(p, cmp, v) atom_cmpxchg(p, (long)(cmp), (long)(v))
#define gpurt_atomic_cmpxchg_u64(p, cmp, v) atom_cmpxchg(p, (ulong)(cmp), (ulong)(v))
GPURT_ATOMIC_LOAD_STORE_(i64, long)
GPURT_ATOMIC_LOAD_STORE_(u64, ulong)
#else
/* A kernel that uses them without 64-bit atomics fails to build, naming the missing feature. */
#define gpurt_atomic_add_i64 gpurt_atomic_add_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_add_u64 gpurt_atomic_add_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_sub_i64 gpurt_atomic_sub_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_sub_u64 gpurt_atomic_sub_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_min_i64 gpurt_atomic_min_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_min_u64 gpurt_atomic_min_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_max_i64 gpurt_atomic_max_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_max_u64 gpurt_atomic_max_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_and_i64 gpurt_atomic_and_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_and_u64 gpurt_atomic_and_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_or_i64 gpurt_atomic_or_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_or_u64 gpurt_atomic_or_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_xor_i64 gpurt_atomic_xor_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_xor_u64 gpurt_atomic_xor_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_xchg_i64 gpurt_atomic_xchg_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_xchg_u64 gpurt_atomic_xchg_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_cmpxchg_i64 gpurt_atomic_cmpxchg_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_cmpxchg_u64 gpurt_atomic_cmpxchg_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_load_i64 gpurt_atomic_load_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_load_u64 gpurt_atomic_load_u64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_store_i64 gpurt_atomic_store_i64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_store_u64 gpurt_atomic_store_u64_needs_int64_atomics_which_this_device_lacks
#endif
/* double words need fp64 and, for their compare-and-swap loops, 64-bit atomics. */
#if defined(GPURT_HAS_FP64) && defined(GPURT_HAS_INT64_ATOMICS)
#if defined(GPURT_OPENCL_NVIDIA_PTX) && GPURT_OPENCL_NVIDIA_PTX >= 60 && !defined(GPURT_ATOMICS_COMPARE_AND_SWAP)
inline double gpurt_atomic_add_f64(volatile __global double* p, double v) {
  double r;
  asm volatile("atom.global.add.f64 %0, [%1], %2;" : "=d"(r) : "l"(p), "d"(v) : "memory");
  return r;
}
#else
GPURT_ATOMIC_CAS_(add, f64, double, ulong, atom_cmpxchg, GPURT_ATOMIC_PLUS_)
#endif
GPURT_ATOMIC_CAS_(min, f64, double, ulong, atom_cmpxchg, fmin)
GPURT_ATOMIC_CAS_(max, f64, double, ulong, atom_cmpxchg, fmax)
GPURT_ATOMIC_LOAD_STORE_(f64, double)
#elif !defined(GPURT_HAS_FP64)
#define gpurt_atomic_add_f64 gpurt_atomic_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_atomic_min_f64 gpurt_atomic_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_atomic_max_f64 gpurt_atomic_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_atomic_load_f64 gpurt_atomic_load_f64_needs_fp64_which_this_device_lacks
#define gpurt_atomic_store_f64 gpurt_atomic_store_f64_needs_fp64_which_this_device_lacks
#else
#define gpurt_atomic_add_f64 gpurt_atomic_add_f64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_min_f64 gpurt_atomic_min_f64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_max_f64 gpurt_atomic_max_f64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_load_f64 gpurt_atomic_load_f64_needs_int64_atomics_which_this_device_lacks
#define gpurt_atomic_store_f64 gpurt_atomic_store_f64_needs_int64_atomics_which_this_device_lacks
#endif
#undef GPURT_ATOMIC_LOAD_STORE_
#undef GPURT_ATOMIC_PLUS_
#undef GPURT_ATOMIC_CAS_
)GPURT"
// Vector types are OpenCL C's own; the portable constructors cast each component to the element
// type, as CUDA's make_float4 converts its arguments.
R"GPURT(
#define gpurt_make_float2(a, b) ((float2)((float)(a), (float)(b)))
#define gpurt_make_float4(a, b, c, d) ((float4)((float)(a), (float)(b), (float)(c), (float)(d)))
#define gpurt_make_int2(a, b) ((int2)((int)(a), (int)(b)))
#define gpurt_make_int4(a, b, c, d) ((int4)((int)(a), (int)(b), (int)(c), (int)(d)))
#define gpurt_make_uint2(a, b) ((uint2)((uint)(a), (uint)(b)))
#define gpurt_make_uint4(a, b, c, d) ((uint4)((uint)(a), (uint)(b), (uint)(c), (uint)(d)))
)GPURT"
// 16-bit floats (docs/kernel-language.md, "half and bfloat16"): `half` is OpenCL C's own, read and
// written through vload_half and vstore_half_rte, which every OpenCL version has without cl_khr_fp16
// (enabled where the device has it: half values and arithmetic are then OpenCL C's); bfloat16 is a
// two-byte struct converted by integer rounding, the same as in the CUDA prelude. The load and store
// words are macros so that they take pointers to every address space, as vload_half does.
R"GPURT(
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
typedef struct { ushort gpurt_bits_; } bfloat16;
inline float gpurt_half_bits_to_float(ushort b) { return vload_half(0, (const __private half*)&b); }
inline ushort gpurt_float_to_half_bits(float f) { ushort b; vstore_half_rte(f, 0, (__private half*)&b); return b; }
inline float gpurt_bf16_bits_to_float(ushort b) { return as_float((uint)b << 16); }
/* A NaN keeps its sign and top payload bits and becomes quiet; everything else rounds to nearest even
 * (a carry out of the mantissa raises the exponent, up to infinity). */
inline ushort gpurt_float_to_bf16_bits(float f) {
  const uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define gpurt_load_half(p, i) vload_half((i), (p))
#define gpurt_store_half(p, i, f) vstore_half_rte((f), (i), (p))
#define gpurt_load_bf16(p, i) gpurt_bf16_bits_to_float((p)[(i)].gpurt_bits_)
#define gpurt_store_bf16(p, i, f) ((void)((p)[(i)].gpurt_bits_ = gpurt_float_to_bf16_bits(f)))
)GPURT"
// Sub-groups, by the first of these that applies (docs/kernel-language.md, "Sub-groups"):
//  - GPURT_SUB_GROUPS_SINGLE_ITEM (a -D build flag), or GPURT_OPENCL_SUB_GROUPS_SINGLE_ITEM
//    (defined by the backend where it does not use a device's cl_khr_subgroups: PoCL): every
//    work-item its own sub-group;
//  - GPURT_OPENCL_NVIDIA_PTX (defined by the backend on NVIDIA devices, as the compute capability
//    times ten): warps of 32 lanes by the linearised local id, through inline PTX (shfl.sync,
//    vote.sync, redux.sync from sm_80), as the CUDA prelude does with its intrinsics;
//  - cl_khr_subgroups: the built-ins; shuffles through cl_khr_subgroup_shuffle(_relative) where
//    defined, else sub_group_broadcast in a loop over the lanes; ballot through
//    cl_khr_subgroup_ballot, else a sub_group_reduce_add of one bit per lane;
//  - otherwise every work-item its own sub-group.
R"GPURT(
#define gpurt_local_linear_id_() (get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))
#define gpurt_group_items_() (get_local_size(0) * get_local_size(1) * get_local_size(2))
#if defined(GPURT_SUB_GROUPS_SINGLE_ITEM) || defined(GPURT_OPENCL_SUB_GROUPS_SINGLE_ITEM)
#define GPURT_SG_SINGLE_ 1
#elif defined(GPURT_OPENCL_NVIDIA_PTX)
#define GPURT_SG_PTX_ 1
#elif defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)
#define GPURT_SG_KHR_ 1
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#else
#define GPURT_SG_SINGLE_ 1
#endif
/* A NaN takes part in min and max as their identity (+-infinity): it is ignored, and values that
 * are all NaN give the identity, in every lane and at every level. Sums keep every value as it is. */
#define GPURT_SG_NORM_add(S, x, ID) (x)
#define GPURT_SG_NORM_min(S, x, ID) gpurt_op_min_##S(x, ID)
#define GPURT_SG_NORM_max(S, x, ID) gpurt_op_max_##S(x, ID)
#if defined(GPURT_SG_SINGLE_)
#define GPURT_GROUP_SCRATCH(n) (n)
#define gpurt_sub_group_size() 1u
#define gpurt_sub_group_max_size() 1u
#define gpurt_sub_group_local_id() 0u
#define gpurt_sub_group_id() ((uint)gpurt_local_linear_id_())
#define gpurt_sub_group_count() ((uint)gpurt_group_items_())
#define gpurt_sub_group_barrier() ((void)0)
inline ulong gpurt_sub_group_ballot(int p) { return p ? 1UL : 0UL; }
inline int gpurt_sub_group_any(int p) { return p != 0; }
inline int gpurt_sub_group_all(int p) { return p != 0; }
#define GPURT_SG_MOVES_(S, T, W) \
  inline T gpurt_sub_group_shuffle_##S(T x, uint src) { return x; } \
  inline T gpurt_sub_group_shuffle_up_##S(T x, uint d) { return x; } \
  inline T gpurt_sub_group_shuffle_down_##S(T x, uint d) { return x; } \
  inline T gpurt_sub_group_shuffle_xor_##S(T x, uint m) { return x; } \
  inline T gpurt_sub_group_broadcast_##S(T x, uint src) { return x; }
#define GPURT_SG_COLLECTIVE_(S, T, OP, ID) \
  inline T gpurt_sub_group_reduce_##OP##_##S(T x) { return GPURT_SG_NORM_##OP(S, x, ID); } \
  inline T gpurt_sub_group_scan_inclusive_##OP##_##S(T x) { return GPURT_SG_NORM_##OP(S, x, ID); } \
  inline T gpurt_sub_group_scan_exclusive_##OP##_##S(T x) { return (T)(ID); }
#elif defined(GPURT_SG_PTX_)
#define GPURT_GROUP_SCRATCH(n) (((n) + 31) / 32)
#define gpurt_sub_group_size() min(32u, (uint)(gpurt_group_items_() - (gpurt_local_linear_id_() & ~(size_t)31)))
#define gpurt_sub_group_max_size() 32u
#define gpurt_sub_group_local_id() ((uint)gpurt_local_linear_id_() & 31u)
#define gpurt_sub_group_id() ((uint)(gpurt_local_linear_id_() >> 5))
#define gpurt_sub_group_count() ((uint)((gpurt_group_items_() + 31) >> 5))
/* The lanes of this warp that exist (a group that is not a multiple of 32 ends in a partial one). */
inline uint gpurt_sg_mask_(void) { const uint n = gpurt_sub_group_size(); return n == 32u ? 0xffffffffu : (1u << n) - 1u; }
inline void gpurt_sg_barrier_(void) { asm volatile("bar.warp.sync %0;" :: "r"(gpurt_sg_mask_()) : "memory"); }
#define gpurt_sub_group_barrier() gpurt_sg_barrier_()
inline uint gpurt_ptx_idx_(uint x, uint v, uint m) { uint r; asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(x), "r"(v), "r"(m)); return r; }
inline uint gpurt_ptx_up_(uint x, uint v, uint m) { uint r; asm volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, %3;" : "=r"(r) : "r"(x), "r"(v), "r"(m)); return r; }
inline uint gpurt_ptx_down_(uint x, uint v, uint m) { uint r; asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(x), "r"(v), "r"(m)); return r; }
inline uint gpurt_ptx_xor_(uint x, uint v, uint m) { uint r; asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(x), "r"(v), "r"(m)); return r; }
inline ulong gpurt_sub_group_ballot(int p) {
  uint r;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.ballot.b32 %0, p, %2; }" : "=r"(r) : "r"(p), "r"(gpurt_sg_mask_()));
  return r;
}
inline int gpurt_sub_group_any(int p) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.any.pred q, p, %2; selp.s32 %0, 1, 0, q; }" : "=r"(r) : "r"(p), "r"(gpurt_sg_mask_()));
  return r;
}
inline int gpurt_sub_group_all(int p) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.all.pred q, p, %2; selp.s32 %0, 1, 0, q; }" : "=r"(r) : "r"(p), "r"(gpurt_sg_mask_()));
  return r;
}
/* Unguarded moves of each type under mask m; 64-bit values move as two 32-bit halves. */
#define GPURT_SG_RAW_4_(S, T, KIND) \
  inline T gpurt_sg_##KIND##_##S(T x, uint v, uint m) { return as_##T(gpurt_ptx_##KIND##_(as_uint(x), v, m)); }
#define GPURT_SG_RAW_8_(S, T, KIND) \
  inline T gpurt_sg_##KIND##_##S(T x, uint v, uint m) { \
    uint2 b = as_uint2(x); b.x = gpurt_ptx_##KIND##_(b.x, v, m); b.y = gpurt_ptx_##KIND##_(b.y, v, m); return as_##T(b); \
  }
/* A source lane outside the sub-group gives the caller its own value. */
#define GPURT_SG_MOVES_(S, T, W) \
  GPURT_SG_RAW_##W##_(S, T, idx) GPURT_SG_RAW_##W##_(S, T, up) GPURT_SG_RAW_##W##_(S, T, down) GPURT_SG_RAW_##W##_(S, T, xor) \
  inline T gpurt_sub_group_shuffle_##S(T x, uint src) { return gpurt_sg_idx_##S(x, src, gpurt_sg_mask_()); } \
  inline T gpurt_sub_group_broadcast_##S(T x, uint src) { return gpurt_sg_idx_##S(x, src, gpurt_sg_mask_()); } \
  inline T gpurt_sub_group_shuffle_up_##S(T x, uint d) { \
    const T r = gpurt_sg_up_##S(x, d, gpurt_sg_mask_()); return d <= gpurt_sub_group_local_id() ? r : x; } \
  inline T gpurt_sub_group_shuffle_down_##S(T x, uint d) { \
    const T r = gpurt_sg_down_##S(x, d, gpurt_sg_mask_()); return d < gpurt_sub_group_size() - gpurt_sub_group_local_id() ? r : x; } \
  inline T gpurt_sub_group_shuffle_xor_##S(T x, uint m) { \
    const T r = gpurt_sg_xor_##S(x, m, gpurt_sg_mask_()); return (gpurt_sub_group_local_id() ^ m) < gpurt_sub_group_size() ? r : x; }
/* A full warp reduces by a butterfly (every lane ends with the same value), a partial one down to
 * lane 0, whose value is broadcast; scans by shfl.up (Hillis-Steele). */
#define GPURT_SG_TREE_REDUCE_(S, T, OP) \
  inline T gpurt_sg_tree_reduce_##OP##_##S(T x) { \
    const uint m = gpurt_sg_mask_(); \
    if (m == 0xffffffffu) { \
      for (uint o = 16; o > 0; o >>= 1) x = gpurt_op_##OP##_##S(x, gpurt_sg_xor_##S(x, o, m)); \
      return x; \
    } \
    const uint lane = gpurt_sub_group_local_id(), n = gpurt_sub_group_size(); \
    for (uint o = 16; o > 0; o >>= 1) { const T y = gpurt_sg_down_##S(x, o, m); if (lane + o < n) x = gpurt_op_##OP##_##S(x, y); } \
    return gpurt_sg_idx_##S(x, 0, m); \
  }
#define GPURT_SG_COLLECTIVE_(S, T, OP, ID) \
  GPURT_SG_TREE_REDUCE_(S, T, OP) \
  inline T gpurt_sub_group_reduce_##OP##_##S(T x) { return gpurt_sg_reduce_fast_##OP##_##S(GPURT_SG_NORM_##OP(S, x, ID)); } \
  inline T gpurt_sub_group_scan_inclusive_##OP##_##S(T x) { \
    const uint m = gpurt_sg_mask_(), lane = gpurt_sub_group_local_id(); \
    x = GPURT_SG_NORM_##OP(S, x, ID); \
    for (uint o = 1; o < 32u; o <<= 1) { const T y = gpurt_sg_up_##S(x, o, m); if (lane >= o) x = gpurt_op_##OP##_##S(x, y); } \
    return x; \
  } \
  inline T gpurt_sub_group_scan_exclusive_##OP##_##S(T x) { \
    const T r = gpurt_sg_up_##S(gpurt_sub_group_scan_inclusive_##OP##_##S(x), 1, gpurt_sg_mask_()); \
    return gpurt_sub_group_local_id() == 0 ? (T)(ID) : r; \
  }
/* redux.sync (sm_80 and later) for 32-bit integers; the shuffle tree for everything else. */
#define GPURT_SG_REDUX_(S, T, OP, PTXOP) \
  inline T gpurt_sg_redux_##OP##_##S(T x) { \
    T r; asm volatile("redux.sync." #PTXOP " %0, %1, %2;" : "=r"(r) : "r"(x), "r"(gpurt_sg_mask_())); return r; }
#if GPURT_OPENCL_NVIDIA_PTX >= 80
GPURT_SG_REDUX_(i32, int, add, add.s32) GPURT_SG_REDUX_(i32, int, min, min.s32) GPURT_SG_REDUX_(i32, int, max, max.s32)
GPURT_SG_REDUX_(u32, uint, add, add.u32) GPURT_SG_REDUX_(u32, uint, min, min.u32) GPURT_SG_REDUX_(u32, uint, max, max.u32)
#define gpurt_sg_reduce_fast_add_i32 gpurt_sg_redux_add_i32
#define gpurt_sg_reduce_fast_min_i32 gpurt_sg_redux_min_i32
#define gpurt_sg_reduce_fast_max_i32 gpurt_sg_redux_max_i32
#define gpurt_sg_reduce_fast_add_u32 gpurt_sg_redux_add_u32
#define gpurt_sg_reduce_fast_min_u32 gpurt_sg_redux_min_u32
#define gpurt_sg_reduce_fast_max_u32 gpurt_sg_redux_max_u32
#else
#define gpurt_sg_reduce_fast_add_i32 gpurt_sg_tree_reduce_add_i32
#define gpurt_sg_reduce_fast_min_i32 gpurt_sg_tree_reduce_min_i32
#define gpurt_sg_reduce_fast_max_i32 gpurt_sg_tree_reduce_max_i32
#define gpurt_sg_reduce_fast_add_u32 gpurt_sg_tree_reduce_add_u32
#define gpurt_sg_reduce_fast_min_u32 gpurt_sg_tree_reduce_min_u32
#define gpurt_sg_reduce_fast_max_u32 gpurt_sg_tree_reduce_max_u32
#endif
#define gpurt_sg_reduce_fast_add_f32 gpurt_sg_tree_reduce_add_f32
#define gpurt_sg_reduce_fast_min_f32 gpurt_sg_tree_reduce_min_f32
#define gpurt_sg_reduce_fast_max_f32 gpurt_sg_tree_reduce_max_f32
#define gpurt_sg_reduce_fast_add_i64 gpurt_sg_tree_reduce_add_i64
#define gpurt_sg_reduce_fast_min_i64 gpurt_sg_tree_reduce_min_i64
#define gpurt_sg_reduce_fast_max_i64 gpurt_sg_tree_reduce_max_i64
#define gpurt_sg_reduce_fast_add_u64 gpurt_sg_tree_reduce_add_u64
#define gpurt_sg_reduce_fast_min_u64 gpurt_sg_tree_reduce_min_u64
#define gpurt_sg_reduce_fast_max_u64 gpurt_sg_tree_reduce_max_u64
#define gpurt_sg_reduce_fast_add_f64 gpurt_sg_tree_reduce_add_f64
#define gpurt_sg_reduce_fast_min_f64 gpurt_sg_tree_reduce_min_f64
#define gpurt_sg_reduce_fast_max_f64 gpurt_sg_tree_reduce_max_f64
#else /* cl_khr_subgroups */
#define GPURT_GROUP_SCRATCH(n) (n)
#define gpurt_sub_group_size() get_sub_group_size()
#define gpurt_sub_group_max_size() get_max_sub_group_size()
#define gpurt_sub_group_local_id() get_sub_group_local_id()
#define gpurt_sub_group_id() get_sub_group_id()
#define gpurt_sub_group_count() get_num_sub_groups()
#define gpurt_sub_group_barrier() sub_group_barrier(CLK_LOCAL_MEM_FENCE)
inline int gpurt_sub_group_any(int p) { return sub_group_any(p) != 0; }
inline int gpurt_sub_group_all(int p) { return sub_group_all(p) != 0; }
#ifdef cl_khr_subgroup_ballot
inline ulong gpurt_sub_group_ballot(int p) { const uint4 b = sub_group_ballot(p); return as_ulong((uint2)(b.x, b.y)); }
#else
/* One bit per lane, each lane's bit distinct, so their sum is their union. */
inline ulong gpurt_sub_group_ballot(int p) {
  const uint lane = get_sub_group_local_id();
  return sub_group_reduce_add(p && lane < 64u ? (1UL << lane) : 0UL);
}
#endif
#ifdef cl_khr_subgroup_shuffle
#define GPURT_SG_IDX_(S, T) \
  inline T gpurt_sg_idx_##S(T x, uint src) { return sub_group_shuffle(x, src); } \
  inline T gpurt_sub_group_shuffle_xor_##S(T x, uint m) { \
    const T r = sub_group_shuffle_xor(x, m); return (get_sub_group_local_id() ^ m) < get_sub_group_size() ? r : x; }
#else
/* Without cl_khr_subgroup_shuffle: one sub_group_broadcast per lane (the sub-group's size of them). */
#define GPURT_SG_IDX_(S, T) \
  inline T gpurt_sg_idx_##S(T x, uint src) { \
    T r = x; \
    for (uint j = 0; j < get_sub_group_size(); ++j) { const T v = sub_group_broadcast(x, j); if (j == src) r = v; } \
    return r; \
  } \
  inline T gpurt_sub_group_shuffle_xor_##S(T x, uint m) { \
    const uint lane = get_sub_group_local_id(), src = lane ^ m; \
    return gpurt_sg_idx_##S(x, src < get_sub_group_size() ? src : lane); }
#endif
#ifdef cl_khr_subgroup_shuffle_relative
#define GPURT_SG_RELATIVE_(S, T) \
  inline T gpurt_sub_group_shuffle_up_##S(T x, uint d) { \
    const T r = sub_group_shuffle_up(x, d); return d <= get_sub_group_local_id() ? r : x; } \
  inline T gpurt_sub_group_shuffle_down_##S(T x, uint d) { \
    const T r = sub_group_shuffle_down(x, d); return d < get_sub_group_size() - get_sub_group_local_id() ? r : x; }
#else
#define GPURT_SG_RELATIVE_(S, T) \
  inline T gpurt_sub_group_shuffle_up_##S(T x, uint d) { \
    const uint lane = get_sub_group_local_id(); return gpurt_sg_idx_##S(x, d <= lane ? lane - d : lane); } \
  inline T gpurt_sub_group_shuffle_down_##S(T x, uint d) { \
    const uint lane = get_sub_group_local_id(); \
    return gpurt_sg_idx_##S(x, d < get_sub_group_size() - lane ? lane + d : lane); }
#endif
#define GPURT_SG_MOVES_(S, T, W) \
  GPURT_SG_IDX_(S, T) GPURT_SG_RELATIVE_(S, T) \
  inline T gpurt_sub_group_shuffle_##S(T x, uint src) { return gpurt_sg_idx_##S(x, src); } \
  inline T gpurt_sub_group_broadcast_##S(T x, uint src) { return sub_group_broadcast(x, src); }
#define GPURT_SG_COLLECTIVE_(S, T, OP, ID) \
  inline T gpurt_sub_group_reduce_##OP##_##S(T x) { return sub_group_reduce_##OP(GPURT_SG_NORM_##OP(S, x, ID)); } \
  inline T gpurt_sub_group_scan_inclusive_##OP##_##S(T x) { return sub_group_scan_inclusive_##OP(GPURT_SG_NORM_##OP(S, x, ID)); } \
  inline T gpurt_sub_group_scan_exclusive_##OP##_##S(T x) { return sub_group_scan_exclusive_##OP(GPURT_SG_NORM_##OP(S, x, ID)); }
#endif
/* Group collectives: each sub-group's result in scratch[sub-group id], then the first sub-group
 * combines them (striding when there are more of them than it has lanes). */
#define GPURT_GROUP_COLLECTIVE_(S, T, OP, ID) \
  inline T gpurt_group_reduce_##OP##_##S(T x, __local T* scratch) { \
    const T r = gpurt_sub_group_reduce_##OP##_##S(x); \
    if (gpurt_sub_group_local_id() == 0) scratch[gpurt_sub_group_id()] = r; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    T v = (T)(ID); \
    if (gpurt_sub_group_id() == 0) { \
      for (uint i = gpurt_sub_group_local_id(); i < gpurt_sub_group_count(); i += gpurt_sub_group_size()) \
        v = gpurt_op_##OP##_##S(v, scratch[i]); \
      v = gpurt_sub_group_reduce_##OP##_##S(v); \
    } \
    barrier(CLK_LOCAL_MEM_FENCE); \
    if (gpurt_local_linear_id_() == 0) scratch[0] = v; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    v = scratch[0]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return v; \
  } \
  inline T gpurt_group_prefix_##OP##_##S(T inclusive, __local T* scratch) { \
    if (gpurt_sub_group_local_id() == gpurt_sub_group_size() - 1) scratch[gpurt_sub_group_id()] = inclusive; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    if (gpurt_sub_group_id() == 0) { \
      T carry = (T)(ID); \
      for (uint base = 0; base < gpurt_sub_group_count(); base += gpurt_sub_group_size()) { \
        const uint i = base + gpurt_sub_group_local_id(); \
        const T v = i < gpurt_sub_group_count() ? scratch[i] : (T)(ID); \
        const T e = gpurt_sub_group_scan_exclusive_##OP##_##S(v); \
        if (i < gpurt_sub_group_count()) scratch[i] = gpurt_op_##OP##_##S(carry, e); \
        carry = gpurt_op_##OP##_##S(carry, gpurt_sub_group_reduce_##OP##_##S(v)); \
      } \
    } \
    barrier(CLK_LOCAL_MEM_FENCE); \
    const T prefix = scratch[gpurt_sub_group_id()]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return prefix; \
  } \
  inline T gpurt_group_scan_inclusive_##OP##_##S(T x, __local T* scratch) { \
    const T inc = gpurt_sub_group_scan_inclusive_##OP##_##S(x); \
    return gpurt_op_##OP##_##S(gpurt_group_prefix_##OP##_##S(inc, scratch), inc); \
  } \
  inline T gpurt_group_scan_exclusive_##OP##_##S(T x, __local T* scratch) { \
    const T inc = gpurt_sub_group_scan_inclusive_##OP##_##S(x); \
    const T exc = gpurt_sub_group_scan_exclusive_##OP##_##S(x); \
    return gpurt_op_##OP##_##S(gpurt_group_prefix_##OP##_##S(inc, scratch), exc); \
  }
/* Integer sums wrap (two's complement): U is T's unsigned twin. */
#define GPURT_SG_TYPE_(S, T, U, W, LOWEST, HIGHEST, MINF, MAXF) \
  inline T gpurt_op_add_##S(T a, T b) { return (T)((U)a + (U)b); } \
  inline T gpurt_op_min_##S(T a, T b) { return MINF(a, b); } \
  inline T gpurt_op_max_##S(T a, T b) { return MAXF(a, b); } \
  GPURT_SG_MOVES_(S, T, W) \
  GPURT_SG_COLLECTIVE_(S, T, add, 0) GPURT_SG_COLLECTIVE_(S, T, min, HIGHEST) GPURT_SG_COLLECTIVE_(S, T, max, LOWEST) \
  GPURT_GROUP_COLLECTIVE_(S, T, add, 0) GPURT_GROUP_COLLECTIVE_(S, T, min, HIGHEST) GPURT_GROUP_COLLECTIVE_(S, T, max, LOWEST) \
  inline T gpurt_group_broadcast_##S(T x, size_t from, __local T* scratch) { \
    if (gpurt_local_linear_id_() == from) scratch[0] = x; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    const T v = scratch[0]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return v; \
  }
GPURT_SG_TYPE_(i32, int, uint, 4, INT_MIN, INT_MAX, min, max)
GPURT_SG_TYPE_(u32, uint, uint, 4, 0u, UINT_MAX, min, max)
GPURT_SG_TYPE_(f32, float, float, 4, -INFINITY, INFINITY, fmin, fmax)
GPURT_SG_TYPE_(i64, long, ulong, 8, LONG_MIN, LONG_MAX, min, max)
GPURT_SG_TYPE_(u64, ulong, ulong, 8, 0UL, ULONG_MAX, min, max)
#ifdef GPURT_HAS_FP64
GPURT_SG_TYPE_(f64, double, double, 8, -(double)INFINITY, (double)INFINITY, fmin, fmax)
#else
/* A kernel that uses them without fp64 fails to build, naming the missing feature. */
#define gpurt_sub_group_shuffle_f64 gpurt_sub_group_shuffle_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_shuffle_up_f64 gpurt_sub_group_shuffle_up_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_shuffle_down_f64 gpurt_sub_group_shuffle_down_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_shuffle_xor_f64 gpurt_sub_group_shuffle_xor_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_broadcast_f64 gpurt_sub_group_broadcast_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_broadcast_f64 gpurt_group_broadcast_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_reduce_add_f64 gpurt_sub_group_reduce_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_inclusive_add_f64 gpurt_sub_group_scan_inclusive_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_exclusive_add_f64 gpurt_sub_group_scan_exclusive_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_reduce_add_f64 gpurt_group_reduce_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_inclusive_add_f64 gpurt_group_scan_inclusive_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_exclusive_add_f64 gpurt_group_scan_exclusive_add_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_reduce_min_f64 gpurt_sub_group_reduce_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_inclusive_min_f64 gpurt_sub_group_scan_inclusive_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_exclusive_min_f64 gpurt_sub_group_scan_exclusive_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_reduce_min_f64 gpurt_group_reduce_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_inclusive_min_f64 gpurt_group_scan_inclusive_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_exclusive_min_f64 gpurt_group_scan_exclusive_min_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_reduce_max_f64 gpurt_sub_group_reduce_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_inclusive_max_f64 gpurt_sub_group_scan_inclusive_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_sub_group_scan_exclusive_max_f64 gpurt_sub_group_scan_exclusive_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_reduce_max_f64 gpurt_group_reduce_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_inclusive_max_f64 gpurt_group_scan_inclusive_max_f64_needs_fp64_which_this_device_lacks
#define gpurt_group_scan_exclusive_max_f64 gpurt_group_scan_exclusive_max_f64_needs_fp64_which_this_device_lacks
#endif
)GPURT";

}  // namespace gpurt::opencl
