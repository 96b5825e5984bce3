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
#if !defined(GPURT_ATOMICS_COMPARE_AND_SWAP)
#define gpurt_atomic_add_float(p, v) atomicAdd(p, v)
#define gpurt_atomic_add_float_local(p, v) atomicAdd(p, v)
#else  /* the fallback form forced (docs/kernel-language.md, "Atomics"): the words' CAS loops below */
#define gpurt_atomic_add_float(p, v) gpurt_atomic_add_f32(p, v)
#define gpurt_atomic_add_float_local(p, v) gpurt_atomic_add_f32(p, v)
#endif
#define gpurt_atomic_and(p, v) atomicAnd(p, v)
#define gpurt_atomic_or(p, v) atomicOr(p, v)
#define gpurt_atomic_xor(p, v) atomicXor(p, v)
// Dynamic local memory arrives as the kernel's last parameter: an empty tag whose value is the
// launch's dynamic shared memory.
extern __shared__ __align__(16) unsigned char gpurt_dynamic_shared[];
template <class T>
struct gpurt_dynamic_local {
  __device__ T& operator[](size_t i) const { return reinterpret_cast<T*>(gpurt_dynamic_shared)[i]; }
  __device__ operator T*() const { return reinterpret_cast<T*>(gpurt_dynamic_shared); }
};
#define GPURT_DYNAMIC_LOCAL(T, name) gpurt_dynamic_local<T> name
)GPURT"
// Vector types: CUDA's own float2/float4/int2/int4/uint2/uint4 (vector_types.h, which NVRTC
// provides), the portable constructors, and the componentwise operators OpenCL C has built in.
R"GPURT(
#define gpurt_make_float2(a, b) make_float2((float)(a), (float)(b))
#define gpurt_make_float4(a, b, c, d) make_float4((float)(a), (float)(b), (float)(c), (float)(d))
#define gpurt_make_int2(a, b) make_int2((int)(a), (int)(b))
#define gpurt_make_int4(a, b, c, d) make_int4((int)(a), (int)(b), (int)(c), (int)(d))
#define gpurt_make_uint2(a, b) make_uint2((unsigned)(a), (unsigned)(b))
#define gpurt_make_uint4(a, b, c, d) make_uint4((unsigned)(a), (unsigned)(b), (unsigned)(c), (unsigned)(d))
#define GPURT_VEC_OP2_(V, S, OP) \
  __device__ inline V operator OP(V a, V b) { V r; r.x = a.x OP b.x; r.y = a.y OP b.y; return r; } \
  __device__ inline V operator OP(V a, S s) { V r; r.x = a.x OP s; r.y = a.y OP s; return r; } \
  __device__ inline V operator OP(S s, V a) { V r; r.x = s OP a.x; r.y = s OP a.y; return r; } \
  __device__ inline V& operator OP##=(V& a, V b) { a = a OP b; return a; } \
  __device__ inline V& operator OP##=(V& a, S s) { a = a OP s; return a; }
#define GPURT_VEC_OP4_(V, S, OP) \
  __device__ inline V operator OP(V a, V b) { V r; r.x = a.x OP b.x; r.y = a.y OP b.y; r.z = a.z OP b.z; r.w = a.w OP b.w; return r; } \
  __device__ inline V operator OP(V a, S s) { V r; r.x = a.x OP s; r.y = a.y OP s; r.z = a.z OP s; r.w = a.w OP s; return r; } \
  __device__ inline V operator OP(S s, V a) { V r; r.x = s OP a.x; r.y = s OP a.y; r.z = s OP a.z; r.w = s OP a.w; return r; } \
  __device__ inline V& operator OP##=(V& a, V b) { a = a OP b; return a; } \
  __device__ inline V& operator OP##=(V& a, S s) { a = a OP s; return a; }
#define GPURT_VEC_OPS_(V2, V4, S) \
  GPURT_VEC_OP2_(V2, S, +) GPURT_VEC_OP2_(V2, S, -) GPURT_VEC_OP2_(V2, S, *) GPURT_VEC_OP2_(V2, S, /) \
  GPURT_VEC_OP4_(V4, S, +) GPURT_VEC_OP4_(V4, S, -) GPURT_VEC_OP4_(V4, S, *) GPURT_VEC_OP4_(V4, S, /) \
  __device__ inline V2 operator-(V2 a) { V2 r; r.x = -a.x; r.y = -a.y; return r; } \
  __device__ inline V4 operator-(V4 a) { V4 r; r.x = -a.x; r.y = -a.y; r.z = -a.z; r.w = -a.w; return r; }
GPURT_VEC_OPS_(float2, float4, float)
GPURT_VEC_OPS_(int2, int4, int)
GPURT_VEC_OPS_(uint2, uint4, unsigned)
#undef GPURT_VEC_OPS_
#undef GPURT_VEC_OP4_
#undef GPURT_VEC_OP2_
)GPURT"
// 16-bit floats (docs/kernel-language.md, "half and bfloat16"): two-byte storage structs whose values
// are read into float and rounded back to nearest even. half converts by the hardware's cvt.f32.f16
// and cvt.rn.f16.f32 (what cuda_fp16.h's __half2float and __float2half_rn use); bfloat16 by integer
// rounding, the same as in the OpenCL prelude. CUDA_NO_HALF keeps cuda_fp16.h, where a source
// includes it, from declaring a second `half`.
R"GPURT(
#define CUDA_NO_HALF 1
struct half { unsigned short gpurt_bits_; };
struct bfloat16 { unsigned short gpurt_bits_; };
__device__ inline float gpurt_half_bits_to_float(ushort b) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b)); return f; }
__device__ inline ushort gpurt_float_to_half_bits(float f) { ushort b; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
__device__ inline float gpurt_bf16_bits_to_float(ushort b) { return __uint_as_float((unsigned)b << 16); }
// A NaN keeps its sign and top payload bits and becomes quiet; everything else rounds to nearest even
// (a carry out of the mantissa raises the exponent, up to infinity).
__device__ inline ushort gpurt_float_to_bf16_bits(float f) {
  const unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ inline float gpurt_load_half(const half* p, size_t i) { return gpurt_half_bits_to_float(p[i].gpurt_bits_); }
__device__ inline void gpurt_store_half(half* p, size_t i, float f) { p[i].gpurt_bits_ = gpurt_float_to_half_bits(f); }
__device__ inline float gpurt_load_bf16(const bfloat16* p, size_t i) { return gpurt_bf16_bits_to_float(p[i].gpurt_bits_); }
__device__ inline void gpurt_store_bf16(bfloat16* p, size_t i, float f) { p[i].gpurt_bits_ = gpurt_float_to_bf16_bits(f); }
)GPURT"
// Sub-groups are warps of 32 lanes, numbered by the linearised local id (x fastest); a group whose
// size is not a multiple of 32 ends in a partial warp, whose lanes exist in gpurt_detail::mask().
// Every operation names exactly those lanes, so a partial warp never waits for lanes that do not
// exist. GPURT_SUB_GROUPS_SINGLE_ITEM (a -D build flag) makes every work-item its own sub-group.
R"GPURT(
namespace gpurt_detail {
__device__ inline unsigned linear_id() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ inline unsigned group_items() { return blockDim.x * blockDim.y * blockDim.z; }
// Integer sums wrap (two's complement), never overflow.
struct add_op {
  template <class T> __device__ T operator()(T a, T b) const { return a + b; }
  __device__ int operator()(int a, int b) const { return (int)((unsigned)a + (unsigned)b); }
  __device__ long long operator()(long long a, long long b) const {
    return (long long)((unsigned long long)a + (unsigned long long)b);
  }
};
struct min_op {
  template <class T> __device__ T operator()(T a, T b) const { return b < a ? b : a; }
  __device__ float operator()(float a, float b) const { return fminf(a, b); }
  __device__ double operator()(double a, double b) const { return fmin(a, b); }
};
struct max_op {
  template <class T> __device__ T operator()(T a, T b) const { return a < b ? b : a; }
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};
template <class T> struct limits;
template <> struct limits<int> { __device__ static int lowest() { return -2147483647 - 1; } __device__ static int highest() { return 2147483647; } };
template <> struct limits<unsigned> { __device__ static unsigned lowest() { return 0u; } __device__ static unsigned highest() { return 0xffffffffu; } };
template <> struct limits<long long> { __device__ static long long lowest() { return -9223372036854775807LL - 1; } __device__ static long long highest() { return 9223372036854775807LL; } };
template <> struct limits<unsigned long long> { __device__ static unsigned long long lowest() { return 0ull; } __device__ static unsigned long long highest() { return ~0ull; } };
template <> struct limits<float> { __device__ static float lowest() { return -__int_as_float(0x7f800000); } __device__ static float highest() { return __int_as_float(0x7f800000); } };
template <> struct limits<double> { __device__ static double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); } __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000LL); } };
template <class T, class Op> struct identity;
template <class T> struct identity<T, add_op> { __device__ static T value() { return T(0); } };
template <class T> struct identity<T, min_op> { __device__ static T value() { return limits<T>::highest(); } };
template <class T> struct identity<T, max_op> { __device__ static T value() { return limits<T>::lowest(); } };
// A NaN takes part in min and max as their identity (+-infinity): it is ignored, and values that are
// all NaN give the identity, in every lane and at every level. Sums keep every value as it is.
template <class T, class Op> __device__ inline T norm(T x, Op op) { return op(x, identity<T, Op>::value()); }
template <class T> __device__ inline T norm(T x, add_op) { return x; }
#ifdef GPURT_SUB_GROUPS_SINGLE_ITEM
#define GPURT_SUB_GROUP_MAX_SIZE 1
__device__ inline unsigned sg_size() { return 1u; }
__device__ inline unsigned sg_lane() { return 0u; }
__device__ inline unsigned sg_id() { return linear_id(); }
__device__ inline unsigned sg_count() { return group_items(); }
__device__ inline void sg_barrier() {}
template <class T> __device__ inline T shuffle(T x, unsigned) { return x; }
template <class T> __device__ inline T shuffle_up(T x, unsigned) { return x; }
template <class T> __device__ inline T shuffle_down(T x, unsigned) { return x; }
template <class T> __device__ inline T shuffle_xor(T x, unsigned) { return x; }
template <class T, class Op> __device__ inline T reduce(T x, Op) { return x; }
template <class T, class Op> __device__ inline T scan_inclusive(T x, Op) { return x; }
template <class T, class Op> __device__ inline T scan_exclusive(T, Op) { return identity<T, Op>::value(); }
__device__ inline unsigned long long ballot(int p) { return p ? 1ull : 0ull; }
__device__ inline int any(int p) { return p != 0; }
__device__ inline int all(int p) { return p != 0; }
#else
#define GPURT_SUB_GROUP_MAX_SIZE 32
__device__ inline unsigned sg_size() { const unsigned left = group_items() - (linear_id() & ~31u); return left < 32u ? left : 32u; }
__device__ inline unsigned sg_lane() { return linear_id() & 31u; }
__device__ inline unsigned sg_id() { return linear_id() >> 5; }
__device__ inline unsigned sg_count() { return (group_items() + 31u) >> 5; }
// The lanes of this warp that exist.
__device__ inline unsigned mask() { const unsigned n = sg_size(); return n == 32u ? 0xffffffffu : (1u << n) - 1u; }
__device__ inline void sg_barrier() { __syncwarp(mask()); }
template <class T> __device__ inline T shuffle(T x, unsigned src) { return __shfl_sync(mask(), x, src); }
// A source lane outside the sub-group gives the caller its own value.
template <class T> __device__ inline T shuffle_up(T x, unsigned d) {
  const T r = __shfl_up_sync(mask(), x, d);
  return d <= sg_lane() ? r : x;
}
template <class T> __device__ inline T shuffle_down(T x, unsigned d) {
  const T r = __shfl_down_sync(mask(), x, d);
  return d < sg_size() - sg_lane() ? r : x;
}
template <class T> __device__ inline T shuffle_xor(T x, unsigned m) {
  const T r = __shfl_xor_sync(mask(), x, m);
  return (sg_lane() ^ m) < sg_size() ? r : x;
}
// A full warp reduces by a butterfly (every lane ends with the same value); a partial one down
// to lane 0, whose value is then broadcast.
template <class T, class Op> __device__ inline T reduce_tree(T x, Op op) {
  const unsigned m = mask();
  if (m == 0xffffffffu) {
    for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(m, x, o));
    return x;
  }
  const unsigned lane = sg_lane(), n = sg_size();
  for (int o = 16; o > 0; o >>= 1) {
    const T y = __shfl_down_sync(m, x, o);
    if (lane + o < n) x = op(x, y);
  }
  return __shfl_sync(m, x, 0);
}
template <class T, class Op> __device__ inline T reduce(T x, Op op) { return reduce_tree(x, op); }
#if __CUDA_ARCH__ >= 800
__device__ inline int reduce(int x, add_op) { return __reduce_add_sync(mask(), x); }
__device__ inline int reduce(int x, min_op) { return __reduce_min_sync(mask(), x); }
__device__ inline int reduce(int x, max_op) { return __reduce_max_sync(mask(), x); }
__device__ inline unsigned reduce(unsigned x, add_op) { return __reduce_add_sync(mask(), x); }
__device__ inline unsigned reduce(unsigned x, min_op) { return __reduce_min_sync(mask(), x); }
__device__ inline unsigned reduce(unsigned x, max_op) { return __reduce_max_sync(mask(), x); }
#endif
template <class T, class Op> __device__ inline T scan_inclusive(T x, Op op) {
  const unsigned m = mask(), lane = sg_lane();
  for (unsigned o = 1; o < 32u; o <<= 1) {
    const T y = __shfl_up_sync(m, x, o);
    if (lane >= o) x = op(x, y);
  }
  return x;
}
template <class T, class Op> __device__ inline T scan_exclusive(T x, Op op) {
  const T r = __shfl_up_sync(mask(), scan_inclusive(x, op), 1);
  return sg_lane() == 0 ? identity<T, Op>::value() : r;
}
__device__ inline unsigned long long ballot(int p) { return __ballot_sync(mask(), p); }
__device__ inline int any(int p) { return __any_sync(mask(), p) != 0; }
__device__ inline int all(int p) { return __all_sync(mask(), p) != 0; }
#endif
// Group collectives: each sub-group's result in scratch[sub-group id], then the first sub-group
// combines them (striding when there are more of them than it has lanes).
template <class T, class Op> __device__ inline T group_reduce(T x, T* scratch, Op op) {
  const T r = reduce(x, op);
  if (sg_lane() == 0) scratch[sg_id()] = r;
  __syncthreads();
  T v = identity<T, Op>::value();
  if (sg_id() == 0) {
    for (unsigned i = sg_lane(); i < sg_count(); i += sg_size()) v = op(v, scratch[i]);
    v = reduce(v, op);
  }
  __syncthreads();
  if (linear_id() == 0) scratch[0] = v;
  __syncthreads();
  v = scratch[0];
  __syncthreads();
  return v;
}
// Each sub-group's total in scratch[sub-group id]; the first sub-group turns those into exclusive
// prefixes, chunk by chunk; each work-item adds its sub-group's prefix.
template <class T, class Op> __device__ inline T group_prefix(T inclusive, T* scratch, Op op) {
  if (sg_lane() == sg_size() - 1) scratch[sg_id()] = inclusive;
  __syncthreads();
  if (sg_id() == 0) {
    T carry = identity<T, Op>::value();
    for (unsigned base = 0; base < sg_count(); base += sg_size()) {
      const unsigned i = base + sg_lane();
      const T v = i < sg_count() ? scratch[i] : identity<T, Op>::value();
      const T e = scan_exclusive(v, op);
      if (i < sg_count()) scratch[i] = op(carry, e);
      carry = op(carry, reduce(v, op));
    }
  }
  __syncthreads();
  const T prefix = scratch[sg_id()];
  __syncthreads();
  return prefix;
}
template <class T, class Op> __device__ inline T group_scan_inclusive(T x, T* scratch, Op op) {
  const T inc = scan_inclusive(x, op);
  return op(group_prefix(inc, scratch, op), inc);
}
template <class T, class Op> __device__ inline T group_scan_exclusive(T x, T* scratch, Op op) {
  const T inc = scan_inclusive(x, op);
  const T exc = scan_exclusive(x, op);
  return op(group_prefix(inc, scratch, op), exc);
}
template <class T> __device__ inline T group_broadcast(T x, size_t from, T* scratch) {
  if (linear_id() == from) scratch[0] = x;
  __syncthreads();
  const T v = scratch[0];
  __syncthreads();
  return v;
}
}  // namespace gpurt_detail
#define GPURT_GROUP_SCRATCH(n) (((n) + GPURT_SUB_GROUP_MAX_SIZE - 1) / GPURT_SUB_GROUP_MAX_SIZE)
#define gpurt_sub_group_size() gpurt_detail::sg_size()
#define gpurt_sub_group_max_size() ((unsigned)GPURT_SUB_GROUP_MAX_SIZE)
#define gpurt_sub_group_local_id() gpurt_detail::sg_lane()
#define gpurt_sub_group_id() gpurt_detail::sg_id()
#define gpurt_sub_group_count() gpurt_detail::sg_count()
#define gpurt_sub_group_barrier() gpurt_detail::sg_barrier()
__device__ inline uint64_t gpurt_sub_group_ballot(int p) { return gpurt_detail::ballot(p); }
__device__ inline int gpurt_sub_group_any(int p) { return gpurt_detail::any(p); }
__device__ inline int gpurt_sub_group_all(int p) { return gpurt_detail::all(p); }
#define GPURT_SG_OP_(S, T, OP) \
  __device__ inline T gpurt_sub_group_reduce_##OP##_##S(T x) { return gpurt_detail::reduce(gpurt_detail::norm(x, gpurt_detail::OP##_op()), gpurt_detail::OP##_op()); } \
  __device__ inline T gpurt_sub_group_scan_inclusive_##OP##_##S(T x) { return gpurt_detail::scan_inclusive(gpurt_detail::norm(x, gpurt_detail::OP##_op()), gpurt_detail::OP##_op()); } \
  __device__ inline T gpurt_sub_group_scan_exclusive_##OP##_##S(T x) { return gpurt_detail::scan_exclusive(gpurt_detail::norm(x, gpurt_detail::OP##_op()), gpurt_detail::OP##_op()); } \
  __device__ inline T gpurt_group_reduce_##OP##_##S(T x, T* scratch) { return gpurt_detail::group_reduce(gpurt_detail::norm(x, gpurt_detail::OP##_op()), scratch, gpurt_detail::OP##_op()); } \
  __device__ inline T gpurt_group_scan_inclusive_##OP##_##S(T x, T* scratch) { return gpurt_detail::group_scan_inclusive(gpurt_detail::norm(x, gpurt_detail::OP##_op()), scratch, gpurt_detail::OP##_op()); } \
  __device__ inline T gpurt_group_scan_exclusive_##OP##_##S(T x, T* scratch) { return gpurt_detail::group_scan_exclusive(gpurt_detail::norm(x, gpurt_detail::OP##_op()), scratch, gpurt_detail::OP##_op()); }
#define GPURT_SG_TYPE_(S, T) \
  __device__ inline T gpurt_sub_group_shuffle_##S(T x, uint32_t src) { return gpurt_detail::shuffle(x, src); } \
  __device__ inline T gpurt_sub_group_shuffle_up_##S(T x, uint32_t d) { return gpurt_detail::shuffle_up(x, d); } \
  __device__ inline T gpurt_sub_group_shuffle_down_##S(T x, uint32_t d) { return gpurt_detail::shuffle_down(x, d); } \
  __device__ inline T gpurt_sub_group_shuffle_xor_##S(T x, uint32_t m) { return gpurt_detail::shuffle_xor(x, m); } \
  __device__ inline T gpurt_sub_group_broadcast_##S(T x, uint32_t src) { return gpurt_detail::shuffle(x, src); } \
  __device__ inline T gpurt_group_broadcast_##S(T x, size_t from, T* scratch) { return gpurt_detail::group_broadcast(x, from, scratch); } \
  GPURT_SG_OP_(S, T, add) GPURT_SG_OP_(S, T, min) GPURT_SG_OP_(S, T, max)
GPURT_SG_TYPE_(i32, int32_t)
GPURT_SG_TYPE_(u32, uint32_t)
GPURT_SG_TYPE_(f32, float)
GPURT_SG_TYPE_(i64, int64_t)
GPURT_SG_TYPE_(u64, uint64_t)
GPURT_SG_TYPE_(f64, double)
#undef GPURT_SG_TYPE_
#undef GPURT_SG_OP_
)GPURT"
// Typed atomics (docs/kernel-language.md, "Atomics"): relaxed, each returning the old value.
// Pointers are generic, so one word reaches global and shared memory. Signed 64-bit words go
// through the unsigned intrinsics where CUDA has no signed overload: two's complement makes the
// bits the same. Float min and max are compare-and-swap loops on the bits, combining as the
// sub-group words do (min_op, max_op: fminf/fmin, so a NaN operand leaves the value); the loop
// compares bits, so a stored NaN cannot keep it spinning. double add is native from sm_60. Loads
// and stores are volatile accesses of the natural size. -DGPURT_ATOMICS_COMPARE_AND_SWAP makes
// float and double add CAS loops too (the fallback form, to test it where the add is native).
R"GPURT(
#define GPURT_HAS_INT64_ATOMICS 1
namespace gpurt_detail {
__device__ inline int to_bits(float x) { return __float_as_int(x); }
__device__ inline unsigned long long to_bits(double x) { return (unsigned long long)__double_as_longlong(x); }
__device__ inline float from_bits(int b, float) { return __int_as_float(b); }
__device__ inline double from_bits(unsigned long long b, double) { return __longlong_as_double((long long)b); }
// *p = op(*p, v) atomically; a result equal to the value, bit for bit, is left unwritten.
template <class T, class Op> __device__ inline T atomic_cas_loop(T* p, T v, Op op) {
  typedef decltype(to_bits(v)) B;
  B old = to_bits(*(volatile T*)p);
  for (;;) {
    const B want = to_bits(op(from_bits(old, v), v));
    if (want == old) return from_bits(old, v);
    const B seen = atomicCAS((B*)p, old, want);
    if (seen == old) return from_bits(old, v);
    old = seen;
  }
}
__device__ inline double atomic_add_f64(double* p, double v) {
#if __CUDA_ARCH__ >= 600 && !defined(GPURT_ATOMICS_COMPARE_AND_SWAP)
  return atomicAdd(p, v);
#else
  return atomic_cas_loop(p, v, add_op());
#endif
}
}  // namespace gpurt_detail
__device__ inline int64_t gpurt_atomic_add_i64(int64_t* p, int64_t v) { return (int64_t)atomicAdd((uint64_t*)p, (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_add_u64(uint64_t* p, uint64_t v) { return atomicAdd(p, v); }
__device__ inline int64_t gpurt_atomic_sub_i64(int64_t* p, int64_t v) { return (int64_t)atomicAdd((uint64_t*)p, 0ull - (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_sub_u64(uint64_t* p, uint64_t v) { return atomicAdd(p, 0ull - v); }
__device__ inline int64_t gpurt_atomic_min_i64(int64_t* p, int64_t v) { return atomicMin(p, v); }
__device__ inline uint64_t gpurt_atomic_min_u64(uint64_t* p, uint64_t v) { return atomicMin(p, v); }
__device__ inline int64_t gpurt_atomic_max_i64(int64_t* p, int64_t v) { return atomicMax(p, v); }
__device__ inline uint64_t gpurt_atomic_max_u64(uint64_t* p, uint64_t v) { return atomicMax(p, v); }
__device__ inline int64_t gpurt_atomic_and_i64(int64_t* p, int64_t v) { return (int64_t)atomicAnd((uint64_t*)p, (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_and_u64(uint64_t* p, uint64_t v) { return atomicAnd(p, v); }
__device__ inline int64_t gpurt_atomic_or_i64(int64_t* p, int64_t v) { return (int64_t)atomicOr((uint64_t*)p, (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_or_u64(uint64_t* p, uint64_t v) { return atomicOr(p, v); }
__device__ inline int64_t gpurt_atomic_xor_i64(int64_t* p, int64_t v) { return (int64_t)atomicXor((uint64_t*)p, (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_xor_u64(uint64_t* p, uint64_t v) { return atomicXor(p, v); }
__device__ inline int64_t gpurt_atomic_xchg_i64(int64_t* p, int64_t v) { return (int64_t)atomicExch((uint64_t*)p, (uint64_t)v); }
__device__ inline uint64_t gpurt_atomic_xchg_u64(uint64_t* p, uint64_t v) { return atomicExch(p, v); }
__device__ inline int64_t gpurt_atomic_cmpxchg_i64(int64_t* p, int64_t cmp, int64_t v) {
  return (int64_t)atomicCAS((uint64_t*)p, (uint64_t)cmp, (uint64_t)v);
}
__device__ inline uint64_t gpurt_atomic_cmpxchg_u64(uint64_t* p, uint64_t cmp, uint64_t v) { return atomicCAS(p, cmp, v); }
#if !defined(GPURT_ATOMICS_COMPARE_AND_SWAP)
__device__ inline float gpurt_atomic_add_f32(float* p, float v) { return atomicAdd(p, v); }
#else
__device__ inline float gpurt_atomic_add_f32(float* p, float v) { return gpurt_detail::atomic_cas_loop(p, v, gpurt_detail::add_op()); }
#endif
__device__ inline float gpurt_atomic_min_f32(float* p, float v) { return gpurt_detail::atomic_cas_loop(p, v, gpurt_detail::min_op()); }
__device__ inline float gpurt_atomic_max_f32(float* p, float v) { return gpurt_detail::atomic_cas_loop(p, v, gpurt_detail::max_op()); }
__device__ inline double gpurt_atomic_add_f64(double* p, double v) { return gpurt_detail::atomic_add_f64(p, v); }
__device__ inline double gpurt_atomic_min_f64(double* p, double v) { return gpurt_detail::atomic_cas_loop(p, v, gpurt_detail::min_op()); }
__device__ inline double gpurt_atomic_max_f64(double* p, double v) { return gpurt_detail::atomic_cas_loop(p, v, gpurt_detail::max_op()); }
#define GPURT_ATOMIC_LOAD_STORE_(S, T) \
  __device__ inline T gpurt_atomic_load_##S(T* p) { return *(volatile T*)p; } \
  __device__ inline void gpurt_atomic_store_##S(T* p, T v) { *(volatile T*)p = v; }
GPURT_ATOMIC_LOAD_STORE_(i32, int32_t)
GPURT_ATOMIC_LOAD_STORE_(u32, uint32_t)
GPURT_ATOMIC_LOAD_STORE_(f32, float)
GPURT_ATOMIC_LOAD_STORE_(i64, int64_t)
GPURT_ATOMIC_LOAD_STORE_(u64, uint64_t)
GPURT_ATOMIC_LOAD_STORE_(f64, double)
#undef GPURT_ATOMIC_LOAD_STORE_
)GPURT";

}  // namespace gpurt::cuda
