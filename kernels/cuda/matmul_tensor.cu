// Tensor-core matrix multiply for the CUDA backend (sm_80 and later), compiled by nvcc at build
// time into a fatbin embedded in libgpurt: C (fp32) = A * B, row-major, A is M x K, B is K x N,
// inputs as TF32 (fp32 in memory, rounded to TF32 in the kernel) or bf16, fp32 accumulation.
//
// Each 256-thread group (8 warps, 2 x 4) computes a 128 x 256 block of C; each warp a 64 x 64 part
// as 4 x 4 WMMA fragments of 16 x 16 (shapes in matmul_tensor.h). Tiles of A (128 x bk) and B
// (bk x 256) stream through a ring of 3 buffers in dynamic shared memory with cp.async (16-byte
// copies, zero-filled outside the matrix), so the loads of the next tiles overlap the multiplies of
// this one. Two k-depths per precision, for devices with more or less shared memory. Groups are
// ordered in bands of 8 block rows so that neighbouring groups share tiles of A and B in L2.
// When K or N is not a multiple of 16 bytes' worth of elements, or a pointer is not 16-byte aligned,
// the same pipeline loads element by element instead (any M, N, K works). The host side
// (kernels/library.cpp) launches them with the shapes of matmul_tensor.h.
#include "matmul_tensor.h"

#include <cuda_bf16.h>
#include <mma.h>
#include <cstdint>
#include <type_traits>

using namespace nvcuda;

namespace gpurt_tensor {

template <class In>
struct Traits;
template <>
struct Traits<float> {
  using Frag = wmma::precision::tf32;
  static constexpr int FK = 8;  // k of one WMMA step
};
template <>
struct Traits<__nv_bfloat16> {
  using Frag = __nv_bfloat16;
  static constexpr int FK = 16;
};

template <class In, int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct Shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int VEC = 16 / sizeof(In);                  // elements per 16-byte copy
  static constexpr int LDA = BK + VEC, LDB = BN + VEC;          // padded rows: no bank conflicts
  static constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;  // one warp's part of the block
  static constexpr int FM = WTM / 16, FN = WTN / 16;
  static constexpr int STAGE_ELEMS = BM * LDA + BK * LDB;
  static constexpr int SHARED_BYTES = STAGES * STAGE_ELEMS * int(sizeof(In));
  static_assert(BM % (16 * WARPS_M) == 0 && BN % (16 * WARPS_N) == 0 && BK % Traits<In>::FK == 0, "shape");
  static_assert((BM * BK / VEC) % THREADS == 0 && (BK * BN / VEC) % THREADS == 0, "whole copies per thread");
  static_assert(WARPS_M * WARPS_N * 256 * 4 <= SHARED_BYTES, "epilogue scratch fits the pipeline buffers");
};

__device__ __forceinline__ void copy16(void* shared, const void* global, bool inside) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(inside ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copies the ROWS x COLS window at (r0, c0) of the row-major rows x cols matrix src into dst (row
// pitch LD), zeros outside the matrix: 16-byte cp.async copies, or element by element when rows
// are not 16-byte aligned.
template <class In, int ROWS, int COLS, int LD, int THREADS>
__device__ __forceinline__ void load_window(In* dst, const In* __restrict__ src, unsigned rows, unsigned cols,
                                            unsigned r0, unsigned c0, bool vector) {
  constexpr int VEC = 16 / sizeof(In);
  const unsigned tid = threadIdx.x;
  if (vector) {
#pragma unroll
    for (int l = tid; l < ROWS * COLS / VEC; l += THREADS) {
      const unsigned r = l / (COLS / VEC), c = (l % (COLS / VEC)) * VEC, gr = r0 + r, gc = c0 + c;
      const bool in = gr < rows && gc < cols;
      copy16(dst + r * LD + c, in ? src + (size_t)gr * cols + gc : src, in);
    }
  } else {
    const In zero = In(0.0f);
    for (int l = tid; l < ROWS * COLS; l += THREADS) {
      const unsigned r = l / COLS, c = l % COLS, gr = r0 + r, gc = c0 + c;
      dst[r * LD + c] = (gr < rows && gc < cols) ? src[(size_t)gr * cols + gc] : zero;
    }
  }
}

// Loads the k-tile starting at k0 into stage buffers As (BM x BK of A) and Bs (BK x BN of B).
template <class In, class S>
__device__ __forceinline__ void load_tile(In* As, In* Bs, const In* __restrict__ A, const In* __restrict__ B,
                                          unsigned M, unsigned N, unsigned K, unsigned row0, unsigned col0,
                                          unsigned k0, bool vector) {
  load_window<In, S::BM, S::BK, S::LDA, S::THREADS>(As, A, M, K, row0, k0, vector);
  load_window<In, S::BK, S::BN, S::LDB, S::THREADS>(Bs, B, K, N, k0, col0, vector);
}

template <class In, class S>
__device__ void gemm(const In* __restrict__ A, const In* __restrict__ B, float* __restrict__ C, unsigned M,
                     unsigned N, unsigned K) {
  using Frag = typename Traits<In>::Frag;
  constexpr int FK = Traits<In>::FK;
  extern __shared__ __align__(128) unsigned char shared_raw[];
  In* const smem = reinterpret_cast<In*>(shared_raw);

  // Bands of 8 block rows: consecutive groups walk down a band before moving right.
  const unsigned tiles_m = (M + S::BM - 1) / S::BM, tiles_n = (N + S::BN - 1) / S::BN;
  constexpr unsigned BAND = 8;
  const unsigned id = blockIdx.x, per_band = BAND * tiles_n, band = id / per_band;
  const unsigned first = band * BAND, rows = min(tiles_m - first, BAND), in_band = id % per_band;
  const unsigned row0 = (first + in_band % rows) * S::BM, col0 = (in_band / rows) * S::BN;

  const unsigned warp = threadIdx.x / 32, wm = warp / S::WARPS_N, wn = warp % S::WARPS_N;
  const bool vector = K % S::VEC == 0 && N % S::VEC == 0 &&
                      ((reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B)) & 15) == 0;

  wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[S::FM][S::FN];
#pragma unroll
  for (int i = 0; i < S::FM; ++i)
#pragma unroll
    for (int j = 0; j < S::FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int tiles_k = int((K + S::BK - 1) / S::BK);
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < tiles_k) {
      In* st = smem + s * S::STAGE_ELEMS;
      load_tile<In, S>(st, st + S::BM * S::LDA, A, B, M, N, K, row0, col0, s * S::BK, vector);
    }
    commit();
  }
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<S::STAGES - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the stage about to be refilled
    const int next = kt + S::STAGES - 1;
    if (next < tiles_k) {
      In* st = smem + (next % S::STAGES) * S::STAGE_ELEMS;
      load_tile<In, S>(st, st + S::BM * S::LDA, A, B, M, N, K, row0, col0, next * S::BK, vector);
    }
    commit();
    const In* As = smem + (kt % S::STAGES) * S::STAGE_ELEMS;
    const In* Bs = As + S::BM * S::LDA;
#pragma unroll
    for (int kk = 0; kk < S::BK; kk += FK) {
      wmma::fragment<wmma::matrix_b, 16, 16, FK, Frag, wmma::row_major> b[S::FN];
#pragma unroll
      for (int j = 0; j < S::FN; ++j) {
        wmma::load_matrix_sync(b[j], Bs + kk * S::LDB + wn * S::WTN + j * 16, S::LDB);
        if constexpr (std::is_same<In, float>::value)
#pragma unroll
          for (int t = 0; t < b[j].num_elements; ++t) b[j].x[t] = wmma::__float_to_tf32(b[j].x[t]);
      }
#pragma unroll
      for (int i = 0; i < S::FM; ++i) {
        wmma::fragment<wmma::matrix_a, 16, 16, FK, Frag, wmma::row_major> a;
        wmma::load_matrix_sync(a, As + (wm * S::WTM + i * 16) * S::LDA + kk, S::LDA);
        if constexpr (std::is_same<In, float>::value)
#pragma unroll
          for (int t = 0; t < a.num_elements; ++t) a.x[t] = wmma::__float_to_tf32(a.x[t]);
#pragma unroll
        for (int j = 0; j < S::FN; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
      }
    }
  }
  wait_pending<0>();
  __syncthreads();  // the pipeline buffers become the epilogue's scratch

  // Whole fragments inside C go straight to memory when rows stay 32-byte aligned; the others pass
  // through a 16 x 16 scratch of the warp and are stored element by element within bounds.
  const bool direct = N % 8 == 0 && (reinterpret_cast<std::uintptr_t>(C) & 31) == 0;
  float* scratch = reinterpret_cast<float*>(shared_raw) + warp * 256;
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < S::FM; ++i)
#pragma unroll
    for (int j = 0; j < S::FN; ++j) {
      const unsigned r = row0 + wm * S::WTM + i * 16, c = col0 + wn * S::WTN + j * 16;
      if (r >= M || c >= N) continue;
      if (direct && r + 16 <= M && c + 16 <= N) {
        wmma::store_matrix_sync(C + (size_t)r * N + c, acc[i][j], N, wmma::mem_row_major);
      } else {
        wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
        for (unsigned e = lane; e < 256; e += 32) {
          const unsigned rr = r + e / 16, cc = c + e % 16;
          if (rr < M && cc < N) C[(size_t)rr * N + cc] = scratch[e];
        }
        __syncwarp();
      }
    }
}

}  // namespace gpurt_tensor

namespace gpurt_tensor {

// The kernel for entry I of the host's shape table (matmul_tensor.h).
template <class In>
constexpr BlockShape entry(int i) {
  return std::is_same<In, float>::value ? tf32_shapes[i] : bf16_shapes[i];
}
template <class In, int I>
using ShapeOf = Shape<In, entry<In>(I).bm, entry<In>(I).bn, entry<In>(I).bk, entry<In>(I).warps_m,
                      entry<In>(I).warps_n, entry<In>(I).stages>;
template <class In, int I>
constexpr bool agrees() {
  return ShapeOf<In, I>::SHARED_BYTES == entry<In>(I).shared_bytes() && ShapeOf<In, I>::THREADS == entry<In>(I).threads() &&
         entry<In>(I).elem_bytes == int(sizeof(In));
}
static_assert(agrees<float, 0>() && agrees<float, 1>() && agrees<__nv_bfloat16, 0>() && agrees<__nv_bfloat16, 1>(),
              "the host launches what the kernels expect");

}  // namespace gpurt_tensor

#define GPURT_TENSOR_KERNEL(NAME, IN, I)                                                                  \
  static_assert(gpurt_tensor::same_name(gpurt_tensor::entry<IN>(I).kernel, #NAME),                        \
                "the host looks this kernel up by the name in its shape table");                          \
  extern "C" __global__ void __launch_bounds__(gpurt_tensor::ShapeOf<IN, I>::THREADS)                      \
      NAME(const IN* A, const IN* B, float* C, unsigned M, unsigned N, unsigned K) {                       \
    gpurt_tensor::gemm<IN, gpurt_tensor::ShapeOf<IN, I>>(A, B, C, M, N, K);                                 \
  }
GPURT_TENSOR_KERNEL(gpurt_matmul_tf32_k32, float, 0)
GPURT_TENSOR_KERNEL(gpurt_matmul_tf32_k16, float, 1)
GPURT_TENSOR_KERNEL(gpurt_matmul_bf16_k64, __nv_bfloat16, 0)
GPURT_TENSOR_KERNEL(gpurt_matmul_bf16_k32, __nv_bfloat16, 1)
