// CuDevice: properties, queues, memory and program builds for one CUdevice.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <new>

#include "cu_common.hpp"
#include "cu_prelude.hpp"

namespace gpurt::cuda {

namespace {

int attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  cuDeviceGetAttribute(&v, a, dev);
  return v;
}

}  // namespace

CuDevice::CuDevice(CUdevice dev, CUcontext ctx, int driver_version, bool primary)
    : dev_(dev), ctx_(ctx), primary_(primary) {
  DeviceProperties& p = props_;
  char name[256] = {};
  cuDeviceGetName(name, sizeof name - 1, dev);
  cc_major_ = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p.backend = "cuda";
  p.name = name;
  p.vendor = "NVIDIA Corporation";
  p.platform = "CUDA";
  const std::string version = std::to_string(driver_version / 1000) + "." + std::to_string((driver_version % 1000) / 10);
  p.platform_version = "CUDA " + version;
  p.driver_version = version;
  p.type = DeviceType::gpu;
  p.architecture = "sm_" + std::to_string(cc_major_) + std::to_string(cc_minor_);
  size_t total = 0;
  cuDeviceTotalMem(&total, dev);
  p.global_memory = total;
  p.max_allocation = total;
  p.compute_units = static_cast<unsigned>(attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  p.max_group_size = static_cast<std::size_t>(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  p.max_group_dims = Dim3(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                          attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                          attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
  p.max_groups = Dim3(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z));
  p.max_local_memory = static_cast<std::size_t>(
      std::max(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
               attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)));
  p.simd_width = static_cast<unsigned>(attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  p.fp64 = true;
  p.fp16 = compute_capability() >= 53;
  p.int32_atomics = true;
  p.float_atomic_add = true;
  p.int64_atomics = true;  // atomicAdd/Min/Max/And/Or/Xor/Exch/CAS on 64 bits: sm_35 and later
  p.sub_groups = p.sub_group_shuffle = true;
  p.sub_group_sizes = {static_cast<std::uint32_t>(p.simd_width)};  // warps, the prelude's sub-groups
  p.tensor_cores = cc_major_ >= 8;
  p.shared_memory = attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 0;
  p.shared_memory_concurrent = p.shared_memory && attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
  p.view_alignment = 1;
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
  p.pci_bus_id = pci;
  CUuuid uuid{};
  if (cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
    char hex[3];
    for (char b : uuid.bytes) {
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(b));
      p.uuid += hex;
    }
  }
  p.languages = {SourceLanguage::portable, SourceLanguage::cuda_cpp, SourceLanguage::ptx, SourceLanguage::cubin};
  int nvrtc_major = 0, nvrtc_minor = 0;
  nvrtcVersion(&nvrtc_major, &nvrtc_minor);
  compiler_id_ = "nvrtc " + std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor) + "|driver " +
                 std::to_string(driver_version) + "|" + p.architecture + "|prelude " +
                 std::to_string(std::hash<std::string>{}(portable_prelude));
}

CuDevice::~CuDevice() {
  if (primary_ && cuDevicePrimaryCtxRelease(dev_) != CUDA_SUCCESS)
    log(plugin::LogLevel::warn, "cuDevicePrimaryCtxRelease failed");
}

Status CuDevice::create_queue(const plugin::QueueOptions&, std::unique_ptr<plugin::Queue>& out) noexcept {
  return guarded("cuStreamCreate", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUstream stream = nullptr;
    const CUresult r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) return fail(r, "cuStreamCreate", "creating a queue");
    out = std::make_unique<CuQueue>(*this, ctx_, Owner<StreamTraits>(stream));
    return Status::success();
  });
}

Status CuDevice::allocate(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out) noexcept {
  return guarded("cuMemAlloc", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUdeviceptr p = 0;
    const CUresult r = cuMemAlloc(&p, bytes);
    if (r != CUDA_SUCCESS) return fail(r, "cuMemAlloc", "allocating " + std::to_string(bytes) + " bytes");
    Owner<DeviceMemoryTraits> guard(p);  // frees p if the buffer object cannot be made
    auto b = std::make_unique<CuBuffer>(ctx_, p, true, &allocations_);
    (void)guard.release();
    allocations_.add(p, bytes);  // if this throws, b frees p
    out = std::move(b);
    return Status::success();
  });
}

// Managed memory (cuMemAllocManaged, attached globally): a CUdeviceptr like cuMemAlloc's, which the
// host reaches at the same address; cuMemFree releases it.
Status CuDevice::allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept {
  return guarded("cuMemAllocManaged", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUdeviceptr p = 0;
    const CUresult r = cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
    if (r != CUDA_SUCCESS)
      return fail(r, "cuMemAllocManaged", "allocating " + std::to_string(bytes) + " bytes of managed memory");
    Owner<DeviceMemoryTraits> guard(p);
    auto b = std::make_unique<CuBuffer>(ctx_, p, true, &allocations_);
    (void)guard.release();
    allocations_.add(p, bytes, true);
    host = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
    out = std::move(b);
    return Status::success();
  });
}

Status CuDevice::advise(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, std::uint32_t advice,
                        bool set) noexcept {
  if (!props_.shared_memory_concurrent)
    return Status::failure(ErrorCategory::unsupported,
                           "this device has no concurrent managed access, without which CUDA takes no access advice",
                           "cuMemAdvise");
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = static_cast<int>(dev_);
  CUmem_advise a = CU_MEM_ADVISE_SET_READ_MOSTLY;
  switch (advice) {
    case GPURT_ADVICE_READ_MOSTLY: a = set ? CU_MEM_ADVISE_SET_READ_MOSTLY : CU_MEM_ADVISE_UNSET_READ_MOSTLY; break;
    case GPURT_ADVICE_PREFER_HOST:
      where.type = CU_MEM_LOCATION_TYPE_HOST;
      where.id = 0;
      [[fallthrough]];
    case GPURT_ADVICE_PREFER_DEVICE:  // one preferred location: either withdrawn removes it
      a = set ? CU_MEM_ADVISE_SET_PREFERRED_LOCATION : CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
      break;
    case GPURT_ADVICE_ACCESSED_BY_DEVICE: a = set ? CU_MEM_ADVISE_SET_ACCESSED_BY : CU_MEM_ADVISE_UNSET_ACCESSED_BY; break;
    default:
      return Status::failure(ErrorCategory::invalid_argument, "unknown advice " + std::to_string(advice), "cuMemAdvise");
  }
  const CUdeviceptr p = static_cast<CuBuffer&>(buffer).ptr() + offset;
  const CUresult r = cuMemAdvise(p, bytes, a, where);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemAdvise");
}

Status CuDevice::register_host(void* ptr, std::size_t bytes, std::uint32_t& flags,
                               std::unique_ptr<plugin::HostAllocation>& out) noexcept {
  return guarded("cuMemHostRegister", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    std::unique_ptr<CuHostRegistration> reg(new (std::nothrow) CuHostRegistration(ctx_, ptr));  // made first: no
    if (!reg) return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "cuMemHostRegister");
    constexpr unsigned read_only = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_READ_ONLY;
    const bool can_read_only = attribute(dev_, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED) != 0;
    // Const memory is registered read-only where the device can (the device never writes it).
    const bool asked = (flags & GPURT_HOST_REGISTER_READ_ONLY) != 0 && can_read_only;
    CUresult r = cuMemHostRegister(ptr, bytes, asked ? read_only : CU_MEMHOSTREGISTER_PORTABLE);
    bool registered_read_only = asked && r == CUDA_SUCCESS;
    // Pages the process may only read (a mapped file, constant data) lock only read-only.
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED && can_read_only && !asked) {
      const CUresult ro = cuMemHostRegister(ptr, bytes, read_only);
      if (ro == CUDA_SUCCESS) r = ro, registered_read_only = true;
    }
    if (r != CUDA_SUCCESS) {
      reg->forget();  // nothing to undo
      Status f = fail(r, "cuMemHostRegister", "pinning " + std::to_string(bytes) + " bytes of the application's memory");
      if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        f.category = ErrorCategory::invalid_argument;  // registered through the CUDA API already
      return f;
    }
    if (registered_read_only) flags |= GPURT_HOST_REGISTER_READ_ONLY;
    out = std::move(reg);
    return Status::success();
  });
}

Status CuDevice::allocate_host(std::size_t bytes, std::unique_ptr<plugin::HostAllocation>& out) noexcept {
  return guarded("cuMemHostAlloc", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    void* p = nullptr;
    const CUresult r = cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
      Status f = fail(r, "cuMemHostAlloc", "allocating " + std::to_string(bytes) + " bytes of pinned host memory");
      if (r == CUDA_ERROR_OUT_OF_MEMORY) f.category = ErrorCategory::out_of_host_memory;
      return f;
    }
    out = std::make_unique<CuHostAllocation>(ctx_, p);
    return Status::success();
  });
}

Status CuDevice::memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  size_t f = 0, t = 0;
  const CUresult r = cuMemGetInfo(&f, &t);
  if (r != CUDA_SUCCESS) return fail(r, "cuMemGetInfo");
  free_bytes = f;
  total_bytes = t;
  return Status::success();
}

}  // namespace gpurt::cuda
