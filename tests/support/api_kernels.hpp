// The portable-dialect kernels of the API contract cases (contract_api.cpp): launch shapes, the
// index functions' types, and helpers taking local memory through GPURT_LOCAL_PTR. Shared with
// tests/backends/cuda/test_cuda_prelude.cpp, which compiles the same source with NVRTC on machines
// without a GPU.
#pragma once

namespace gpurt::test {

inline const char* api_source = R"(
GPURT_KERNEL void shape(GPURT_GLOBAL uint64_t* out, GPURT_GLOBAL uint32_t* hits, uint32_t n) {
  const size_t i = gpurt_global_id(0) + gpurt_global_id(1) * gpurt_global_size(0);
  if (i == 0) {
    out[0] = gpurt_global_size(0);
    out[1] = gpurt_global_size(1);
    out[2] = gpurt_num_groups(0);
    out[3] = gpurt_num_groups(1);
    out[4] = gpurt_local_size(0);
    out[5] = gpurt_local_size(1);
  }
  if (i < n) gpurt_atomic_add(&hits[i], 1u);
}

GPURT_KERNEL void index_types(GPURT_GLOBAL uint32_t* out) {
  if (gpurt_global_id(0) == 0) {
    out[0] = (uint32_t)sizeof(gpurt_global_id(0));
    out[1] = (uint32_t)sizeof(gpurt_local_id(0));
    out[2] = (uint32_t)sizeof(gpurt_group_id(0));
    out[3] = (uint32_t)sizeof(gpurt_local_size(0));
    out[4] = (uint32_t)sizeof(gpurt_num_groups(0));
    out[5] = (uint32_t)sizeof(gpurt_global_size(0));
    out[6] = (uint32_t)sizeof(size_t);
    /* unsigned: 0 - 1 wraps around to the largest value instead of -1 */
    out[7] = (gpurt_global_id(0) - 1) > gpurt_global_id(0) ? 1u : 0u;
  }
}

/* Helpers taking pointers to local memory, spelled the one portable way. */
GPURT_INLINE void add_upper_step(GPURT_LOCAL_PTR uint32_t* tile, size_t lid, size_t step) {
  tile[lid] += tile[lid + step];
}
GPURT_INLINE uint32_t first_of(GPURT_LOCAL_PTR const uint32_t* tile) { return tile[0]; }
GPURT_INLINE size_t clamp_index(size_t i, size_t n) { return i < n ? i : n; }

GPURT_KERNEL void group_sums(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, uint32_t n) {
  GPURT_LOCAL uint32_t tile[64];
  const size_t lid = gpurt_local_id(0);
  const size_t i = gpurt_global_id(0);
  GPURT_LOCAL_PTR uint32_t* mine = tile + lid;  /* a local pointer variable */
  *mine = clamp_index(i, n) < n ? in[i] : 0u;
  gpurt_local_barrier();
  for (size_t step = 32; step > 0; step /= 2) {
    if (lid < step) add_upper_step(tile, lid, step);
    gpurt_local_barrier();
  }
  if (lid == 0) out[gpurt_group_id(0)] = first_of(tile);
}

GPURT_KERNEL void group_sums_dynamic(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out,
                                     uint32_t n, GPURT_DYNAMIC_LOCAL(uint32_t, tile)) {
  const size_t lid = gpurt_local_id(0);
  const size_t i = gpurt_global_id(0);
  tile[lid] = i < n ? in[i] : 0u;
  gpurt_local_barrier();
  for (size_t step = gpurt_local_size(0) / 2; step > 0; step /= 2) {
    if (lid < step) add_upper_step(tile, lid, step);
    gpurt_local_barrier();
  }
  if (lid == 0) out[gpurt_group_id(0)] = first_of(tile);
}
)";

}  // namespace gpurt::test
