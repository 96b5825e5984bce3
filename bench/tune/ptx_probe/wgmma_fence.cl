// Probe (approaches.md, NVIDIA OpenCL tensor cores): does NVIDIA's OpenCL compiler accept Hopper's
// warpgroup MMA (wgmma, PTX target sm_90a only) as inline PTX? The fence and a commit/wait are the
// smallest wgmma instructions; any of them needs the sm_90a target.
__kernel void probe_wgmma(__global float* d) {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  d[get_global_id(0)] = 1.0f;
}
