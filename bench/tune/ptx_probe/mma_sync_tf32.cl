// Probe (approaches.md, NVIDIA OpenCL tensor cores): does NVIDIA's OpenCL compiler accept inline
// PTX mma.sync (sm_80+) in OpenCL C? One m16n8k8 TF32 product per warp, fp32 accumulators.
__kernel void probe_mma_sync(__global const uint* a, __global const uint* b, __global float* d) {
  const uint lane = get_local_id(0) % 32;
  uint a0 = a[lane * 4], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
  uint b0 = b[lane * 2], b1 = b[lane * 2 + 1];
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[lane * 4] = c0; d[lane * 4 + 1] = c1; d[lane * 4 + 2] = c2; d[lane * 4 + 3] = c3;
}
