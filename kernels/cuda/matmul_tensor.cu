// Tensor-core matrix multiply for the CUDA backend (sm_80 and later), compiled by nvcc at build
// time into a fatbin embedded in libgpurt: C (fp32) = A * B, row-major, A is M x K, B is K x N,
// inputs as TF32 (fp32 in memory, rounded to TF32 in the kernel) or bf16, fp32 accumulation.
//
// Each 128-thread group (4 warps) computes a 64x64 block of C; each warp a 32x32 part of it as
// 2x2 WMMA fragments of 16x16. Tiles of A (64 x 32) and B (32 x 64) are staged in shared memory,
// zero-padded at the edges, so any M, N, K works.
#include <cuda_bf16.h>
#include <type_traits>
#include <mma.h>

using namespace nvcuda;

namespace {

constexpr int BM = 64, BN = 64, BK = 32, PAD = 8;

template <class In, class Frag, int FK>
__device__ void tensor_gemm(const In* __restrict__ A, const In* __restrict__ B, float* __restrict__ C, unsigned M,
                            unsigned N, unsigned K) {
  using Stage = typename std::conditional<std::is_same<In, float>::value, float, __nv_bfloat16>::type;
  __shared__ __align__(128) Stage As[BM][BK + PAD];
  __shared__ __align__(128) Stage Bs[BK][BN + PAD];
  __shared__ __align__(128) float Cs[BM][BN + 4];
  const unsigned tid = threadIdx.x, warp = tid / 32, wm = warp / 2, wn = warp % 2;
  const unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  const Stage zero = Stage(0.0f);
  for (unsigned k0 = 0; k0 < K; k0 += BK) {
    for (unsigned l = tid; l < BM * BK; l += 128) {
      const unsigned r = l / BK, c = l % BK, gr = row0 + r, gc = k0 + c;
      As[r][c] = (gr < M && gc < K) ? Stage(A[(size_t)gr * K + gc]) : zero;
    }
    for (unsigned l = tid; l < BK * BN; l += 128) {
      const unsigned r = l / BN, c = l % BN, gr = k0 + r, gc = col0 + c;
      Bs[r][c] = (gr < K && gc < N) ? Stage(B[(size_t)gr * N + gc]) : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += FK) {
      wmma::fragment<wmma::matrix_a, 16, 16, FK, Frag, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, FK, Frag, wmma::row_major> b[2];
      for (int i = 0; i < 2; ++i) {
        wmma::load_matrix_sync(a[i], &As[wm * 32 + i * 16][kk], BK + PAD);
        wmma::load_matrix_sync(b[i], &Bs[kk][wn * 32 + i * 16], BN + PAD);
        if constexpr (std::is_same<Frag, wmma::precision::tf32>::value) {
          for (int t = 0; t < a[i].num_elements; ++t) a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
          for (int t = 0; t < b[i].num_elements; ++t) b[i].x[t] = wmma::__float_to_tf32(b[i].x[t]);
        }
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + 4, wmma::mem_row_major);
  __syncthreads();
  for (unsigned l = tid; l < BM * BN; l += 128) {
    const unsigned r = l / BN, c = l % BN, gr = row0 + r, gc = col0 + c;
    if (gr < M && gc < N) C[(size_t)gr * N + gc] = Cs[r][c];
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128) gpurt_matmul_tf32(const float* A, const float* B, float* C,
                                                                    unsigned M, unsigned N, unsigned K) {
  tensor_gemm<float, wmma::precision::tf32, 8>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(128) gpurt_matmul_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                                                    float* C, unsigned M, unsigned N, unsigned K) {
  tensor_gemm<__nv_bfloat16, __nv_bfloat16, 16>(A, B, C, M, N, K);
}
