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
//
// Below them, candidates measured by bench/tune/tune_tensor.cpp (table `variants` in
// matmul_tensor.h), of which the library runs the one `gpurt_tensor::hopper` names on sm_90
// devices: Hopper wgmma kernels (sm_90a cubin only;
// elsewhere their body traps and the host must not launch them), and mma.sync kernels with
// ldmatrix from 128B-swizzled shared tiles (sm_80 and later).
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

namespace gpurt_tensor {

// ---- Hopper (sm_90a) kernels: warpgroup MMA (wgmma) with operands in shared memory.
//
// 256 threads = 2 warpgroups; the group computes a 128 x BN block of C, each warpgroup 64 x BN with
// wgmma.m64nBNk16 (bf16) or m64nBNk8 (TF32), fp32 accumulators in registers (BN / 2 per thread).
// A k-tile is 128 bytes deep (BK = 64 bf16 or 32 fp32), so every shared row is one 128-byte swizzle
// atom row: the canonical 128B-swizzled layouts (16-byte chunk c of row r at chunk c ^ (r % 8)),
// described to wgmma by matrix descriptors; stage bases are 1024-byte aligned.
//   A (M x K, K-major):       row m of the tile at m * 128 bytes; SBO 1024 (8 rows), LBO unused.
//   B bf16 (K x N, N-major):  64-column blocks of 64 k-rows x 128 bytes (8 KiB each), the block
//                             of columns n / 64 at (n / 64) * 8192, k-row at k * 128; wgmma reads it
//                             transposed (imm-trans-b 1): LBO 8192 (next 64 columns), SBO 1024 (next 8 k).
//   B TF32 (stored as N x K): wgmma takes TF32 B only K-major, so B's tile is transposed on the
//                             way in, through registers (rounded to TF32 there, cvt.rna); A is read
//                             as TF32 by the tensor cores directly (its low 13 mantissa bits ignored).
// A (and bf16 B) stream through a ring of STAGES buffers with cp.async (zero-filled outside the
// matrix); TF32 B is loaded into registers one tile ahead and stored while the tensor cores run.
// Not warp-specialised: every thread loads, then both warpgroups issue their wgmmas.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPURT_WGMMA 1
#endif

// The group's block of C, (row0, col0): groups numbered in bands of 8 block rows, as gemm() above.
__device__ __forceinline__ void block_origin(unsigned M, unsigned N, unsigned bm, unsigned bn, unsigned& row0,
                                             unsigned& col0) {
  const unsigned tiles_m = (M + bm - 1) / bm, tiles_n = (N + bn - 1) / bn;
  constexpr unsigned BAND = 8;
  const unsigned id = blockIdx.x, per_band = BAND * tiles_n, band = id / per_band;
  const unsigned first = band * BAND, rows = min(tiles_m - first, BAND), in_band = id % per_band;
  row0 = (first + in_band % rows) * bm;
  col0 = (in_band / rows) * bn;
}

// C[r][c], C[r][c + 1] = x0, x1 within bounds; one 8-byte store when `pairs` (N even, C 8-byte aligned).
__device__ __forceinline__ void store_pair(float* __restrict__ C, unsigned M, unsigned N, unsigned r, unsigned c,
                                           float x0, float x1, bool pairs) {
  if (r >= M) return;
  float* p = C + (size_t)r * N + c;
  if (pairs && c + 1 < N) {
    *reinterpret_cast<float2*>(p) = make_float2(x0, x1);
  } else {
    if (c < N) p[0] = x0;
    if (c + 1 < N) p[1] = x1;
  }
}

template <class In, int BN_, int STAGES_, bool SWAP_, bool BT_ = false>
struct WgShape {
  static constexpr int BM = 128, BN = BN_, STAGES = STAGES_, THREADS = 256;
  static constexpr int BK = 128 / int(sizeof(In));          // one 128-byte swizzle row of k
  static constexpr int KSTEP = 32 / int(sizeof(In));        // k of one wgmma: 16 bf16, 8 TF32 (32 bytes)
  static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 1024;  // + alignment slack
  static constexpr bool SWAP = SWAP_;                        // bf16 B: LBO and SBO exchanged (a check)
  static constexpr bool BT = BT_;  // TF32: B given as B^T (N x K, rounded to TF32 by gpurt_tf32_round_bt)
};

#ifdef GPURT_WGMMA
template <int TRANS_B>
__device__ __forceinline__ void wgmma_bf16_n128(float* d, std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, %67;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_bf16_n256(float* d, std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, %131;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TRANS_B));
}
__device__ __forceinline__ void wgmma_tf32_n128(float* d, std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_tf32_n256(float* d, std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ std::uint64_t descriptor(unsigned address, unsigned lbo, unsigned sbo) {
  return std::uint64_t((address & 0x3FFFF) >> 4) | (std::uint64_t((lbo >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((sbo >> 4) & 0x3FFF) << 32) | (std::uint64_t(1) << 62);  // 62-63: 1 = 128B swizzle
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
#endif  // GPURT_WGMMA: the loaders below serve the mma.sync kernel too (sm_80 and later)
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void store_shared(unsigned address, const void* value, int bytes) {
  if (bytes == 4)
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(*static_cast<const unsigned*>(value)));
  else
    asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(address), "h"(*static_cast<const unsigned short*>(value)));
}

// Byte offset of 16-byte chunk `chunk` of 128-byte row `row` in a 128B-swizzled area.
__device__ __forceinline__ unsigned swizzled(unsigned row, unsigned chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// A's k-tile at k0 (BM x BK, K-major) into the stage at shared address `as`.
// (ROWS = BN: a K-major B^T the same way.)
template <class In, class S, int ROWS = S::BM>
__device__ __forceinline__ void wg_load_a(unsigned as, const In* __restrict__ A, unsigned M, unsigned K, unsigned row0,
                                          unsigned k0, bool vector) {
  constexpr int VEC = 16 / sizeof(In);
  if (vector) {
#pragma unroll
    for (int l = threadIdx.x; l < ROWS * 8; l += S::THREADS) {
      const unsigned r = l / 8, c = l % 8, gr = row0 + r, gc = k0 + c * VEC;
      const bool in = gr < M && gc < K;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(as + swizzled(r, c)),
                   "l"(in ? A + (size_t)gr * K + gc : A), "r"(in ? 16 : 0));
    }
  } else {
    for (int l = threadIdx.x; l < ROWS * S::BK; l += S::THREADS) {
      const unsigned r = l / S::BK, k = l % S::BK, gr = row0 + r, gc = k0 + k;
      const In v = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : In(0.0f);
      store_shared(as + swizzled(r, k / VEC) + (k % VEC) * sizeof(In), &v, sizeof(In));
    }
  }
}

// bf16 B's k-tile at k0 (BK x BN, N-major, 64-column blocks) into the stage at shared address `bs`.
template <class S>
__device__ __forceinline__ void wg_load_b16(unsigned bs, const __nv_bfloat16* __restrict__ B, unsigned N, unsigned K,
                                            unsigned col0, unsigned k0, bool vector) {
  if (vector) {
#pragma unroll
    for (int l = threadIdx.x; l < S::BK * S::BN / 8; l += S::THREADS) {
      const unsigned k = l / (S::BN / 8), n = (l % (S::BN / 8)) * 8, gk = k0 + k, gn = col0 + n;
      const bool in = gk < K && gn < N;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(bs + (n / 64) * 8192 + swizzled(k, (n % 64) / 8)),
                   "l"(in ? B + (size_t)gk * N + gn : B), "r"(in ? 16 : 0));
    }
  } else {
    for (int l = threadIdx.x; l < S::BK * S::BN; l += S::THREADS) {
      const unsigned k = l / S::BN, n = l % S::BN, gk = k0 + k, gn = col0 + n;
      const __nv_bfloat16 v = (gk < K && gn < N) ? B[(size_t)gk * N + gn] : __nv_bfloat16(0.0f);
      store_shared(bs + (n / 64) * 8192 + swizzled(k, (n % 64) / 8) + (n % 8) * 2, &v, 2);
    }
  }
}

// TF32 B: each thread's part of the k-tile at k0 (BK x BN of B) into registers (rounded to TF32),
// then stored transposed (BN x BK, K-major). Per pass of 256 threads: 8 k-rows x 32 float4 of n;
// lane bits: 2 over n (4 x 16 bytes, 64 contiguous bytes), 3 over k (2-way bank conflicts at most).
template <class S>
struct TfB {
  static constexpr int PER = S::BK * S::BN / 4 / S::THREADS;  // float4 per thread
  float4 v[PER];
  __device__ __forceinline__ static void place(int i, unsigned& k, unsigned& n) {
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    const unsigned l = i * S::THREADS / 32 + warp;  // which 8 x 16-column patch
    constexpr unsigned PATCHES_N = S::BN / 16;      // 16 columns (4 lanes x 4) per patch
    k = (l / PATCHES_N) * 8 + lane / 4;
    n = (l % PATCHES_N) * 16 + (lane % 4) * 4;
  }
  __device__ __forceinline__ void load(const float* __restrict__ B, unsigned N, unsigned K, unsigned col0,
                                       unsigned k0, bool vector) {
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      unsigned k, n;
      place(i, k, n);
      const unsigned gk = k0 + k, gn = col0 + n;
      float x[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (vector) {
        if (gk < K && gn < N) {
          const float4 f = __ldg(reinterpret_cast<const float4*>(B + (size_t)gk * N + gn));
          x[0] = f.x, x[1] = f.y, x[2] = f.z, x[3] = f.w;
        }
      } else if (gk < K) {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (gn + e < N) x[e] = B[(size_t)gk * N + gn + e];
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        unsigned r;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x[e]));
        x[e] = __uint_as_float(r);
      }
      v[i] = make_float4(x[0], x[1], x[2], x[3]);
    }
  }
  __device__ __forceinline__ void store(unsigned bs) const {
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      unsigned k, n;
      place(i, k, n);
      const float x[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
      for (int e = 0; e < 4; ++e) store_shared(bs + swizzled(n + e, k / 4) + (k % 4) * 4, &x[e], 4);
    }
  }
};

#ifdef GPURT_WGMMA
template <class In, class S>
__device__ __forceinline__ void wg_mma(float* acc, unsigned as, unsigned bs, int step, int scale_d) {
  // A: this warpgroup's 64 rows; both operands advance 32 bytes of k per step inside the swizzle
  // atom (bf16 B: 16 k-rows = 2048 bytes).
  const unsigned wg = threadIdx.x / 128;
  const std::uint64_t da = descriptor(as + wg * 64 * 128 + step * 32, 16, 1024);
  if constexpr (std::is_same<In, float>::value) {
    const std::uint64_t db = descriptor(bs + step * 32, 16, 1024);
    if constexpr (S::BN == 256) wgmma_tf32_n256(acc, da, db, scale_d);
    else wgmma_tf32_n128(acc, da, db, scale_d);
  } else {
    const std::uint64_t db = S::SWAP ? descriptor(bs + step * 2048, 1024, 8192) : descriptor(bs + step * 2048, 8192, 1024);
    if constexpr (S::BN == 256) wgmma_bf16_n256<1>(acc, da, db, scale_d);
    else wgmma_bf16_n128<1>(acc, da, db, scale_d);
  }
}
#endif  // GPURT_WGMMA

template <class In, class S>
__device__ void wg_gemm(const In* __restrict__ A, const In* __restrict__ B, float* __restrict__ C, unsigned M,
                        unsigned N, unsigned K) {
#ifndef GPURT_WGMMA
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;
  __trap();  // built for sm_90a only; the host never launches it elsewhere
#else
  extern __shared__ __align__(128) unsigned char shared_raw[];  // aligned to 1024 below
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(shared_raw));
  const unsigned base = (raw + 1023) & ~1023u;
  constexpr bool TF32 = std::is_same<In, float>::value;
  constexpr bool REG_B = TF32 && !S::BT;  // TF32 B (k x n) transposed through registers

  unsigned row0, col0;
  block_origin(M, N, S::BM, S::BN, row0, col0);
  constexpr int VEC = 16 / sizeof(In);
  const bool vector = K % VEC == 0 && N % VEC == 0 &&
                      ((reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B)) & 15) == 0;

  // No zeroing (an instruction defining the accumulators would serialise the wgmmas): the first
  // wgmma ignores them (scale-d 0). K > 0 always: the host fills C with zeros for K = 0.
  float acc[S::BN / 2];

  const int tiles_k = int((K + S::BK - 1) / S::BK);
  auto stage_a = [&](int t) { return base + unsigned(t % S::STAGES) * S::STAGE_BYTES; };
  auto load_async = [&](int t) {  // the cp.async part of tile t
    wg_load_a<In, S>(stage_a(t), A, M, K, row0, t * S::BK, vector);
    if constexpr (!TF32)
      wg_load_b16<S>(stage_a(t) + S::A_BYTES, reinterpret_cast<const __nv_bfloat16*>(B), N, K, col0, t * S::BK, vector);
    else if constexpr (S::BT)
      wg_load_a<In, S, S::BN>(stage_a(t) + S::A_BYTES, B, N, K, col0, t * S::BK, vector);
  };
  using Breg = typename std::conditional<REG_B, TfB<S>, int>::type;
  Breg breg;
  (void)breg;
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < tiles_k) {
      load_async(s);
      if constexpr (REG_B) {
        breg.load(reinterpret_cast<const float*>(B), N, K, col0, s * S::BK, vector);
        breg.store(stage_a(s) + S::A_BYTES);
      }
    }
    commit();
  }
  if constexpr (REG_B)
    if (S::STAGES - 1 < tiles_k) breg.load(reinterpret_cast<const float*>(B), N, K, col0, (S::STAGES - 1) * S::BK, vector);

  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<S::STAGES - 2>();
    proxy_fence();    // this thread's shared writes (cp.async, st.shared) visible to wgmma's async proxy
    __syncthreads();  // tile kt is in for every thread
    const unsigned as = stage_a(kt);
    fence_acc(acc);
    wg_fence();
#pragma unroll
    for (int step = 0; step < S::BK / S::KSTEP; ++step) wg_mma<In, S>(acc, as, as + S::A_BYTES, step, kt > 0 || step > 0);
    wg_commit();
    fence_acc(acc);
    // While these run: the previous tile's wgmmas are done (wait 1) in both warpgroups (barrier),
    // so its stage takes tile kt + STAGES - 1.
    wg_wait<1>();
    fence_acc(acc);
    __syncthreads();
    const int next = kt + S::STAGES - 1;
    if (next < tiles_k) {
      load_async(next);
      if constexpr (REG_B) {
        breg.store(stage_a(next) + S::A_BYTES);
        if (next + 1 < tiles_k) breg.load(reinterpret_cast<const float*>(B), N, K, col0, (next + 1) * S::BK, vector);
      }
    }
    commit();
  }
  wg_wait<0>();
  fence_acc(acc);
  wait_pending<0>();

  // Accumulator layout of m64nBN (f32): register i of thread t (warp w of its warpgroup, lane l)
  // holds row 16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2.
  const unsigned t = threadIdx.x % 128, w = t / 32, l = t % 32;
  const unsigned r_base = row0 + (threadIdx.x / 128) * 64 + 16 * w + l / 4;
  const bool pairs = N % 2 == 0 && (reinterpret_cast<std::uintptr_t>(C) & 7) == 0;
#pragma unroll
  for (int j = 0; j < S::BN / 8; ++j) {
    const unsigned c = col0 + 8 * j + 2 * (l % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      store_pair(C, M, N, r_base + 8 * h, c, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1], pairs);
    }
  }
#endif
}

}  // namespace gpurt_tensor

namespace gpurt_tensor {

// The start of a block of the mma.sync kernels below (a macro, so that the code is exactly what it
// was when written out in each kernel): its dynamic shared memory aligned to 1024 (`base`), its
// origin in C (`row0`, `col0`), whether 16-byte loads serve (`vector`: K and N multiples of `per16`
// elements, A and B 16-byte aligned), and this thread's warp (2 x 4 warps of 64 x 64: `wm`, `wn`)
// and `lane`.
#define GPURT_MMA_BLOCK(per16)                                                                             \
  extern __shared__ __align__(128) unsigned char shared_raw[];                                             \
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(shared_raw));                        \
  const unsigned base = (raw + 1023) & ~1023u;                                                              \
  unsigned row0, col0;                                                                                      \
  block_origin(M, N, S::BM, S::BN, row0, col0);                                                             \
  const bool vector = K % (per16) == 0 && N % (per16) == 0 &&                                               \
                      ((reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B)) & 15) == 0; \
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;                                          \
  const unsigned wm = warp / 4, wn = warp % 4

// One warp's 64 x 64 tile of the mma.sync kernels below: 4 x 8 m16n8 accumulators of 4 floats.
__device__ __forceinline__ void zero_warp_tile(float (&acc)[4][8][4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
}

// The warp's 4 A fragments (16 rows each) of k step kk from the stage at shared address `as`, by
// ldmatrix.x4; TF32 rounds each to TF32 after it (cvt.rna).
template <bool Tf32>
__device__ __forceinline__ void load_a_fragments(unsigned (&a)[4][4], unsigned as, unsigned wm, unsigned lane, int kk) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned m = wm * 64 + i * 16 + lane % 16, chunk = 2 * kk + lane / 16;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                 : "r"(as + swizzled(m, chunk)));
    if constexpr (Tf32) {
#pragma unroll
      for (int e = 0; e < 4; ++e) asm("cvt.rna.tf32.f32 %0, %0;\n" : "+r"(a[i][e]));
    }
  }
}

// One k step over the tile: a holds the 4 A fragments (16 rows each), b the 4 B fragment pairs
// (16 columns each: n8 tiles 2 j and 2 j + 1). bf16: mma.m16n8k16; TF32: mma.m16n8k8 (the same
// registers: 8 x 8 b16 = 8 x 4 fp32).
template <bool Tf32>
__device__ __forceinline__ void mma_warp_tile(float (&acc)[4][8][4], const unsigned (&a)[4][4], const unsigned (&b)[4][4]) {
#define GPURT_MMA_OPERANDS                                                                                 \
  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                       \
  : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j / 2][(j % 2) * 2]), "r"(b[j / 2][(j % 2) * 2 + 1])
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float* d = acc[i][j];
      if constexpr (Tf32)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n" GPURT_MMA_OPERANDS);
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n" GPURT_MMA_OPERANDS);
    }
#undef GPURT_MMA_OPERANDS
}

// The tile's results into C from (row0, col0): m16n8 accumulators hold e 0, 1 at row lane / 4,
// columns 2 (lane % 4) + {0, 1}; e 2, 3 eight rows down.
__device__ __forceinline__ void store_warp_tile(float* __restrict__ C, unsigned M, unsigned N, unsigned row0, unsigned col0,
                                                unsigned lane, const float (&acc)[4][8][4]) {
  const bool pairs = N % 2 == 0 && (reinterpret_cast<std::uintptr_t>(C) & 7) == 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        store_pair(C, M, N, row0 + i * 16 + lane / 4 + 8 * h, col0 + j * 8 + 2 * (lane % 4), acc[i][j][2 * h],
                   acc[i][j][2 * h + 1], pairs);
}

// ---- bf16 with mma.sync (sm_80 and later): the wgmma kernels' shared layouts (128-byte-deep
// k-tiles, 128B-swizzled: ldmatrix reads 8 rows of one 16-byte column without bank conflicts), a
// cp.async ring of STAGES, 8 warps (2 x 4) of 64 x 64 each over a 128 x 256 block; A fragments by
// ldmatrix.x4, B (N-major in shared memory) by ldmatrix.x4.trans; mma.m16n8k16 with fp32
// accumulators. One barrier per k-tile.
template <class S>
__device__ void ms_gemm_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                             float* __restrict__ C, unsigned M, unsigned N, unsigned K) {
  GPURT_MMA_BLOCK(8);

  float acc[4][8][4];
  zero_warp_tile(acc);

  const int tiles_k = int((K + S::BK - 1) / S::BK);
  auto stage = [&](int t) { return base + unsigned(t % S::STAGES) * S::STAGE_BYTES; };
  auto load = [&](int t) {
    wg_load_a<__nv_bfloat16, S>(stage(t), A, M, K, row0, t * S::BK, vector);
    wg_load_b16<S>(stage(t) + S::A_BYTES, B, N, K, col0, t * S::BK, vector);
  };
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < tiles_k) load(s);
    commit();
  }
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<S::STAGES - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the stage refilled next
    const int next = kt + S::STAGES - 1;
    if (next < tiles_k) load(next);
    commit();
    const unsigned as = stage(kt), bs = as + S::A_BYTES;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // k16 steps: 16-byte columns 2 kk and 2 kk + 1
      unsigned a[4][4], b[4][4];
      load_a_fragments<false>(a, as, wm, lane, kk);
#pragma unroll
      for (int j = 0; j < 4; ++j) {  // 16 columns: n8 tiles 2 j and 2 j + 1
        const unsigned mat = lane / 8, k = kk * 16 + (mat % 2) * 8 + lane % 8;
        const unsigned n = wn * 64 + j * 16 + (mat / 2) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j][2]), "=r"(b[j][3])
                     : "r"(bs + (n / 64) * 8192 + swizzled(k, (n % 64) / 8)));
      }
      mma_warp_tile<false>(acc, a, b);
    }
  }
  wait_pending<0>();

  store_warp_tile(C, M, N, row0 + wm * 64, col0 + wn * 64, lane, acc);
}

}  // namespace gpurt_tensor

namespace gpurt_tensor {

// ---- TF32 with mma.sync (sm_80 and later): as the bf16 kernel above, with the TF32 wgmma
// kernel's shared layouts (A K-major by cp.async; B transposed to N x K through registers, rounded
// to TF32 there). Every fragment by ldmatrix.x4 (8 x 8 b16 = 8 x 4 fp32: exactly the m16n8k8 TF32
// fragments), A rounded to TF32 after it (cvt.rna); mma.m16n8k8.
template <class S>
__device__ void ms_gemm_tf32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             unsigned M, unsigned N, unsigned K) {
  GPURT_MMA_BLOCK(4);

  float acc[4][8][4];
  zero_warp_tile(acc);

  const int tiles_k = int((K + S::BK - 1) / S::BK);
  auto stage = [&](int t) { return base + unsigned(t % S::STAGES) * S::STAGE_BYTES; };
  TfB<S> breg;
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < tiles_k) {
      wg_load_a<float, S>(stage(s), A, M, K, row0, s * S::BK, vector);
      breg.load(B, N, K, col0, s * S::BK, vector);
      breg.store(stage(s) + S::A_BYTES);
    }
    commit();
  }
  if (S::STAGES - 1 < tiles_k) breg.load(B, N, K, col0, (S::STAGES - 1) * S::BK, vector);
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<S::STAGES - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the stage refilled next
    const int next = kt + S::STAGES - 1;
    if (next < tiles_k) {
      wg_load_a<float, S>(stage(next), A, M, K, row0, next * S::BK, vector);
      breg.store(stage(next) + S::A_BYTES);
      if (next + 1 < tiles_k) breg.load(B, N, K, col0, (next + 1) * S::BK, vector);
    }
    commit();
    const unsigned as = stage(kt), bs = as + S::A_BYTES;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // k8 steps: 16-byte columns 2 kk and 2 kk + 1
      unsigned a[4][4], b[4][4];
      load_a_fragments<true>(a, as, wm, lane, kk);
#pragma unroll
      for (int j = 0; j < 4; ++j) {  // 16 columns: n8 tiles 2 j and 2 j + 1
        const unsigned mat = lane / 8, n = wn * 64 + j * 16 + (mat / 2) * 8 + lane % 8, chunk = 2 * kk + mat % 2;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j][2]), "=r"(b[j][3])
                     : "r"(bs + swizzled(n, chunk)));
      }
      mma_warp_tile<true>(acc, a, b);
    }
  }
  wait_pending<0>();

  store_warp_tile(C, M, N, row0 + wm * 64, col0 + wn * 64, lane, acc);
}

}  // namespace gpurt_tensor

// The mma.sync kernels: IN is the element type of A and B, GEMM the kernel body above.
#define GPURT_MMA_KERNEL(NAME, IN, GEMM, STAGES)                                                           \
  static_assert(gpurt_tensor::WgShape<IN, 256, STAGES, false>::SHARED_BYTES ==                              \
                    gpurt_tensor::wgmma_shared_bytes(256, STAGES), "host and kernel agree");                \
  extern "C" __global__ void __launch_bounds__(256, 1)                                                     \
      NAME(const IN* A, const IN* B, float* C, unsigned M, unsigned N, unsigned K) {                         \
    gpurt_tensor::GEMM<gpurt_tensor::WgShape<IN, 256, STAGES, false>>(A, B, C, M, N, K);                    \
  }
GPURT_MMA_KERNEL(gpurt_matmul_tf32_mma_s3, float, ms_gemm_tf32, 3)
GPURT_MMA_KERNEL(gpurt_matmul_tf32_mma_s4, float, ms_gemm_tf32, 4)
GPURT_MMA_KERNEL(gpurt_matmul_bf16_mma_s3, __nv_bfloat16, ms_gemm_bf16, 3)
GPURT_MMA_KERNEL(gpurt_matmul_bf16_mma_s4, __nv_bfloat16, ms_gemm_bf16, 4)

// MIN_GROUPS: groups per SM the registers must allow (2: at most 128 per thread).
#define GPURT_WGMMA_KERNEL(NAME, IN, BN, STAGES, SWAP, MIN_GROUPS)                                         \
  static_assert(gpurt_tensor::WgShape<IN, BN, STAGES, SWAP>::SHARED_BYTES ==                                \
                    gpurt_tensor::wgmma_shared_bytes(BN, STAGES), "host and kernel agree");                 \
  extern "C" __global__ void __launch_bounds__(256, MIN_GROUPS)                                            \
      NAME(const IN* A, const IN* B, float* C, unsigned M, unsigned N, unsigned K) {                       \
    gpurt_tensor::wg_gemm<IN, gpurt_tensor::WgShape<IN, BN, STAGES, SWAP>>(A, B, C, M, N, K);               \
  }
GPURT_WGMMA_KERNEL(gpurt_matmul_bf16_wgmma_n256_s4, __nv_bfloat16, 256, 4, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_bf16_wgmma_n256_s3, __nv_bfloat16, 256, 3, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_bf16_wgmma_n128_s5, __nv_bfloat16, 128, 5, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_bf16_wgmma_n256_s4_swap, __nv_bfloat16, 256, 4, true, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_tf32_wgmma_n256_s4, float, 256, 4, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_tf32_wgmma_n256_s3, float, 256, 3, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_tf32_wgmma_n128_s5, float, 128, 5, false, 1)
GPURT_WGMMA_KERNEL(gpurt_matmul_tf32_wgmma_n128_s3_x2, float, 128, 3, false, 2)
GPURT_WGMMA_KERNEL(gpurt_matmul_bf16_wgmma_n128_s3_x2, __nv_bfloat16, 128, 3, false, 2)

// ---- TF32 with B^T: a pre-pass writes B^T (N x K) rounded to TF32 (cvt.rna), then a wgmma
// kernel reads both operands K-major by cp.async, as the bf16 kernels do (TF32 wgmma takes only
// K-major operands from shared memory). The host runs both (and gpurt_tf32_round over A, below), in
// order on one queue: one group of
// 256 per 32 x 32 tile of B (tiles numbered in one dimension, ceil(N / 32) per band of k).
extern "C" __global__ void __launch_bounds__(256)
    gpurt_tf32_round_bt(const float* __restrict__ B, float* __restrict__ BT, unsigned K, unsigned N) {
  __shared__ float tile[32][33];
  const unsigned tiles_n = (N + 31) / 32;
  const unsigned n0 = (blockIdx.x % tiles_n) * 32, k0 = (blockIdx.x / tiles_n) * 32;
  const unsigned tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
  for (unsigned r = ty; r < 32; r += 8) {
    const unsigned k = k0 + r, n = n0 + tx;
    float v = 0.0f;
    if (k < K && n < N) v = B[(size_t)k * N + n];
    unsigned u;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(v));
    tile[r][tx] = __uint_as_float(u);
  }
  __syncthreads();
#pragma unroll
  for (unsigned r = ty; r < 32; r += 8) {
    const unsigned n = n0 + r, k = k0 + tx;
    if (n < N && k < K) BT[(size_t)n * K + k] = tile[tx][r];
  }
}

// ---- TF32 A for the B^T kernels: A copied rounded to TF32 (cvt.rna), so that the wgmma kernel,
// which feeds the tensor cores the bits it finds (they drop the low 13), computes with A rounded to
// nearest as every other TF32 kernel here does. A grid-stride loop of 256-item groups.
extern "C" __global__ void __launch_bounds__(256)
    gpurt_tf32_round(const float* __restrict__ in, float* __restrict__ out, unsigned long long n) {
  const unsigned long long stride = (unsigned long long)gridDim.x * 256;
  for (unsigned long long i = (unsigned long long)blockIdx.x * 256 + threadIdx.x; i < n; i += stride) {
    unsigned u;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(in[i]));
    out[i] = __uint_as_float(u);
  }
}

#define GPURT_WGMMA_BT_KERNEL(NAME, BN, STAGES)                                                            \
  static_assert(gpurt_tensor::WgShape<float, BN, STAGES, false, true>::SHARED_BYTES ==                      \
                    gpurt_tensor::wgmma_shared_bytes(BN, STAGES), "host and kernel agree");                 \
  extern "C" __global__ void __launch_bounds__(256, 1)                                                     \
      NAME(const float* A, const float* BT, float* C, unsigned M, unsigned N, unsigned K) {                  \
    gpurt_tensor::wg_gemm<float, gpurt_tensor::WgShape<float, BN, STAGES, false, true>>(A, BT, C, M, N, K);  \
  }
GPURT_WGMMA_BT_KERNEL(gpurt_matmul_tf32_wgmma_bt_n256_s3, 256, 3)
GPURT_WGMMA_BT_KERNEL(gpurt_matmul_tf32_wgmma_bt_n256_s4, 256, 4)
GPURT_WGMMA_BT_KERNEL(gpurt_matmul_tf32_wgmma_bt_n128_s4, 128, 4)
