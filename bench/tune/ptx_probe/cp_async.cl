// Probe (approaches.md, NVIDIA OpenCL tensor cores): asynchronous global-to-local copies (cp.async,
// sm_80+) as inline PTX, the load pipeline the CUDA mma.sync kernels use.
__kernel void probe_cp_async(__global const float4* src, __global float4* dst) {
  __local float4 tile[256];
  const uint lid = get_local_id(0);
  uint saddr;
  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(saddr) : "l"(&tile[lid]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(saddr), "l"(src + get_global_id(0)) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  barrier(CLK_LOCAL_MEM_FENCE);
  dst[get_global_id(0)] = tile[255 - lid];
}
