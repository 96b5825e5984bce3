// Kernels of the sub-group and group-collective cases (test_sub_groups.cpp), also compiled by NVRTC
// alone (tests/backends/cuda/test_cuda_prelude.cpp). Each is built once per type with T (the type)
// and S (its suffix: i32 u32 f32 i64 u64 f64) defined.
#pragma once

namespace gpurt::test {

// sg_values: every shuffle, broadcast, reduce, scan and group collective of type T, 24 results per
// work-item; layout: what each work-item says of its sub-group and group (7 words).
// sg_votes: ballot, any and all of three predicate bits.
inline const char* sub_group_source = R"(
#define SG_CAT2(a, b) a##b
#define SG_CAT(a, b) SG_CAT2(a, b)
#define W(name) SG_CAT(name, S)
GPURT_INLINE size_t sg_global_linear(void) {
  return gpurt_global_id(0) + gpurt_global_size(0) * (gpurt_global_id(1) + gpurt_global_size(1) * gpurt_global_id(2));
}
GPURT_INLINE size_t sg_local_linear(void) {
  return gpurt_local_id(0) + gpurt_local_size(0) * (gpurt_local_id(1) + gpurt_local_size(1) * gpurt_local_id(2));
}
GPURT_INLINE void sg_layout(GPURT_GLOBAL uint32_t* layout, size_t i) {
  layout[i * 7 + 0] = gpurt_sub_group_size();
  layout[i * 7 + 1] = gpurt_sub_group_local_id();
  layout[i * 7 + 2] = gpurt_sub_group_id();
  layout[i * 7 + 3] = gpurt_sub_group_count();
  layout[i * 7 + 4] = gpurt_sub_group_max_size();
  layout[i * 7 + 5] = (uint32_t)(gpurt_group_id(0) + gpurt_num_groups(0) * gpurt_group_id(1));
  layout[i * 7 + 6] = (uint32_t)sg_local_linear();
}
GPURT_KERNEL void sg_values(GPURT_GLOBAL const T* in, GPURT_GLOBAL T* out, GPURT_GLOBAL uint32_t* layout, uint32_t arg) {
  GPURT_LOCAL T scratch[GPURT_GROUP_SCRATCH(1024)];
  const size_t i = sg_global_linear();
  const T x = in[i];
  const uint32_t n = gpurt_sub_group_size(), lane = gpurt_sub_group_local_id();
  GPURT_GLOBAL T* o = out + i * 24;
  o[0] = W(gpurt_sub_group_shuffle_)(x, (lane * 7u + arg) % n);
  o[1] = W(gpurt_sub_group_shuffle_up_)(x, arg);
  o[2] = W(gpurt_sub_group_shuffle_down_)(x, arg);
  o[3] = W(gpurt_sub_group_shuffle_xor_)(x, arg);
  o[4] = W(gpurt_sub_group_broadcast_)(x, arg % n);
  o[5] = W(gpurt_sub_group_reduce_add_)(x);
  o[6] = W(gpurt_sub_group_reduce_min_)(x);
  o[7] = W(gpurt_sub_group_reduce_max_)(x);
  o[8] = W(gpurt_sub_group_scan_inclusive_add_)(x);
  o[9] = W(gpurt_sub_group_scan_inclusive_min_)(x);
  o[10] = W(gpurt_sub_group_scan_inclusive_max_)(x);
  o[11] = W(gpurt_sub_group_scan_exclusive_add_)(x);
  o[12] = W(gpurt_sub_group_scan_exclusive_min_)(x);
  o[13] = W(gpurt_sub_group_scan_exclusive_max_)(x);
  gpurt_sub_group_barrier();
  o[14] = W(gpurt_group_reduce_add_)(x, scratch);
  o[15] = W(gpurt_group_reduce_min_)(x, scratch);
  o[16] = W(gpurt_group_reduce_max_)(x, scratch);
  o[17] = W(gpurt_group_scan_inclusive_add_)(x, scratch);
  o[18] = W(gpurt_group_scan_inclusive_min_)(x, scratch);
  o[19] = W(gpurt_group_scan_inclusive_max_)(x, scratch);
  o[20] = W(gpurt_group_scan_exclusive_add_)(x, scratch);
  o[21] = W(gpurt_group_scan_exclusive_min_)(x, scratch);
  o[22] = W(gpurt_group_scan_exclusive_max_)(x, scratch);
  o[23] = W(gpurt_group_broadcast_)(x, arg % (gpurt_local_size(0) * gpurt_local_size(1) * gpurt_local_size(2)), scratch);
  sg_layout(layout, i);
}
GPURT_KERNEL void sg_votes(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint64_t* out, GPURT_GLOBAL uint32_t* layout) {
  const size_t i = sg_global_linear();
  const uint32_t p = in[i];
  out[i * 3 + 0] = gpurt_sub_group_ballot((int)(p & 1u));
  out[i * 3 + 1] = (uint64_t)gpurt_sub_group_any((int)(p & 2u));
  out[i * 3 + 2] = (uint64_t)gpurt_sub_group_all((int)(p & 4u));
  sg_layout(layout, i);
}
)";

}  // namespace gpurt::test
