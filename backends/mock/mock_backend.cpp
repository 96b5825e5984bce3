// The mock backend: a test-only plugin behind the same interface as the real ones. Device memory
// is host memory, every queue operation runs at once on the calling thread, and a few built-in
// kernels run on the host. It counts every object it creates and destroys, and fails on demand
// (see mock_control.h): out of memory, build failure, launch failure, device lost, and through
// GPURT_MOCK_INIT a failed or empty plugin start.
//
// It is built with the tree for tests and never installed; the core considers it only when
// GPURT_ENABLE_MOCK=1.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "gpurt/plugin/api.hpp"
#include "gpurt/plugin/signature.hpp"
#include "mock_control.h"

namespace gpurt::mock {

namespace {

using plugin::Status;

// ---- counters and injected failures ----

std::atomic<std::uint64_t> g_created[GPURT_MOCK_KINDS];
std::atomic<std::uint64_t> g_destroyed[GPURT_MOCK_KINDS];
std::atomic<std::uint64_t> g_device_bytes{0};
std::atomic<std::uint64_t> g_calls{0};
std::atomic<int> g_lost{0};

struct Injection {
  unsigned after = 0;  // successful calls still to let through
  unsigned count = 0;  // failures still to give
};
std::mutex g_inject_mutex;
Injection g_inject[GPURT_MOCK_OPS];

constexpr std::uint64_t device_memory = 1ull << 30;  // what the mock device pretends to have
constexpr std::uint64_t max_allocation = 256ull << 20;

template <int Kind>
struct Counted {
  Counted() { ++g_created[Kind]; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { ++g_destroyed[Kind]; }
};

const char* op_name(int op) {
  static const char* names[GPURT_MOCK_OPS] = {"allocate", "allocate_host", "build",  "launch",
                                              "copy",     "fill",          "queue",  "record", "finish"};
  return names[op];
}

// Device lost first, then any injected failure for `op`.
Status gate(int op, ErrorCategory category, const char* call) {
  ++g_calls;
  if (g_lost.load())
    return Status::failure(ErrorCategory::device_lost, "the mock device was lost (injected by the test)", call, -999,
                           "MOCK_DEVICE_LOST");
  std::lock_guard<std::mutex> lock(g_inject_mutex);
  Injection& in = g_inject[op];
  if (in.count == 0) return Status::success();
  if (in.after > 0) {
    --in.after;
    return Status::success();
  }
  --in.count;
  return Status::failure(category, std::string("injected ") + op_name(op) + " failure", call, -1,
                         "MOCK_INJECTED_FAILURE");
}

// ---- objects ----

class MockBuffer final : public plugin::Buffer, Counted<GPURT_MOCK_BUFFER> {
 public:
  explicit MockBuffer(std::size_t bytes) : bytes_(bytes), data_(static_cast<unsigned char*>(std::malloc(bytes ? bytes : 1))) {}
  ~MockBuffer() override {
    std::free(data_);
    g_device_bytes -= bytes_;
  }
  bool ok() const { return data_ != nullptr; }
  unsigned char* data() { return data_; }

 private:
  std::size_t bytes_;
  unsigned char* data_;
};

class MockHost final : public plugin::HostAllocation, Counted<GPURT_MOCK_HOST_ALLOCATION> {
 public:
  explicit MockHost(std::size_t bytes) : data_(std::malloc(bytes ? bytes : 1)) {}
  ~MockHost() override { std::free(data_); }
  void* data() noexcept override { return data_; }
  bool ok() const { return data_ != nullptr; }

 private:
  void* data_;
};

class MockEvent final : public plugin::Event, Counted<GPURT_MOCK_EVENT> {
 public:
  explicit MockEvent(bool timing) : timing_(timing), at_(std::chrono::steady_clock::now()) {}
  Status wait() noexcept override { return gate(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockEventWait"); }
  Status query(bool& complete) noexcept override {
    complete = true;
    return Status::success();
  }
  Status elapsed_ms(plugin::Event& end, double& ms) noexcept override {
    auto* e = dynamic_cast<MockEvent*>(&end);
    if (!timing_ || !e || !e->timing_)
      return Status::failure(ErrorCategory::invalid_argument, "an event was recorded without timing", "mockElapsed");
    ms = std::chrono::duration<double, std::milli>(e->at_ - at_).count();
    return Status::success();
  }

 private:
  bool timing_;
  std::chrono::steady_clock::time_point at_;
};

// The kernels the mock can run, by name; any other kernel found in a source launches as a no-op.
enum class Builtin { none, vector_add, fill_u32 };

class MockKernel final : public plugin::Kernel, Counted<GPURT_MOCK_KERNEL> {
 public:
  MockKernel(std::string name) : builtin_(Builtin::none) {
    info_.name = std::move(name);
    info_.max_group_size = 1024;
    info_.preferred_group_multiple = 32;
    info_.suggested_group_size = 256;
    auto ptr = [] { return plugin::ParamInfo{plugin::ParamKind::global_pointer, sizeof(void*), "float*"}; };
    if (info_.name == "vector_add") {  // (const float* a, const float* b, float* c, uint64_t n)
      builtin_ = Builtin::vector_add;
      info_.params_known = true;
      info_.params = {ptr(), ptr(), ptr(), {plugin::ParamKind::scalar, 8, "uint64_t"}};
    } else if (info_.name == "fill_u32") {  // (uint32_t* out, uint32_t value, uint64_t n)
      builtin_ = Builtin::fill_u32;
      info_.params_known = true;
      info_.params = {{plugin::ParamKind::global_pointer, sizeof(void*), "uint32_t*"},
                      {plugin::ParamKind::scalar, 4, "uint32_t"}, {plugin::ParamKind::scalar, 8, "uint64_t"}};
    }
  }
  const plugin::KernelInfo& info() const noexcept override { return info_; }
  // Host threads have no occupancy: 2048 work-items' worth, like a GPU compute unit.
  Status resident_groups(std::size_t group_size, std::size_t, std::size_t& out) noexcept override {
    out = std::max<std::size_t>(1, 2048 / std::max<std::size_t>(1, group_size));
    return Status::success();
  }
  Builtin builtin() const { return builtin_; }

 private:
  plugin::KernelInfo info_;
  Builtin builtin_;
};

class MockProgram final : public plugin::Program, Counted<GPURT_MOCK_PROGRAM> {
 public:
  MockProgram(std::string text, std::vector<std::string> names) : text_(std::move(text)), names_(std::move(names)) {}
  Status kernel(const std::string& name, std::unique_ptr<plugin::Kernel>& out) noexcept override {
    return plugin::guarded("mockGetKernel", [&] {
      if (std::find(names_.begin(), names_.end(), name) == names_.end())
        return Status::failure(ErrorCategory::invalid_argument, "no kernel named '" + name + "' in the program",
                               "mockGetKernel", -2, "MOCK_NO_SUCH_KERNEL");
      out = std::make_unique<MockKernel>(name);
      return Status::success();
    });
  }
  std::vector<std::string> kernel_names() const noexcept override { return names_; }
  const std::string& build_log() const noexcept override { return log_; }
  Status binary(std::string& out) const noexcept override {
    return plugin::guarded("mockBinary", [&] {
      out = "MOCKBIN\n" + text_;
      return Status::success();
    });
  }

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::string log_;
};

unsigned char* at(plugin::Buffer& b, std::size_t offset) { return static_cast<MockBuffer&>(b).data() + offset; }

class MockQueue final : public plugin::Queue, Counted<GPURT_MOCK_QUEUE> {
 public:
  explicit MockQueue(bool timing) : timing_(timing) {}
  Status copy_from_host(const void* src, plugin::Buffer& dst, std::size_t off, std::size_t bytes,
                        bool) noexcept override {  // synchronous: blocking or not
    Status s = gate(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyHtoD");
    if (s.ok() && bytes) std::memcpy(at(dst, off), src, bytes);
    return s;
  }
  Status copy_to_host(plugin::Buffer& src, std::size_t off, void* dst, std::size_t bytes, bool) noexcept override {
    Status s = gate(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyDtoH");
    if (s.ok() && bytes) std::memcpy(dst, at(src, off), bytes);
    return s;
  }
  Status copy(plugin::Buffer& src, std::size_t so, plugin::Buffer& dst, std::size_t doff,
              std::size_t bytes) noexcept override {
    Status s = gate(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyDtoD");
    if (s.ok() && bytes) std::memmove(at(dst, doff), at(src, so), bytes);
    return s;
  }
  Status fill(plugin::Buffer& dst, std::size_t off, std::size_t bytes, const void* pattern,
              std::size_t pattern_size) noexcept override {
    Status s = gate(GPURT_MOCK_OP_FILL, ErrorCategory::internal, "mockFill");
    if (!s.ok()) return s;
    for (std::size_t i = 0; i < bytes; i += pattern_size) std::memcpy(at(dst, off + i), pattern, pattern_size);
    return s;
  }
  Status launch(plugin::Kernel& kernel, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                std::size_t count) noexcept override {
    Status s = gate(GPURT_MOCK_OP_LAUNCH, ErrorCategory::internal, "mockLaunch");
    if (!s.ok()) return s;
    const auto& k = static_cast<MockKernel&>(kernel);
    const std::size_t items = shape.groups.x * shape.group_size.x * shape.groups.y * shape.group_size.y *
                              shape.groups.z * shape.group_size.z;
    auto ptr = [&](std::size_t i) -> unsigned char* {
      return args[i].buffer ? at(*args[i].buffer, args[i].offset) : nullptr;
    };
    auto u64 = [&](std::size_t i) {
      std::uint64_t v = 0;
      std::memcpy(&v, args[i].value, sizeof v);
      return v;
    };
    if (k.builtin() == Builtin::vector_add && count == 4) {
      const auto* a = reinterpret_cast<const float*>(ptr(0));
      const auto* b = reinterpret_cast<const float*>(ptr(1));
      auto* c = reinterpret_cast<float*>(ptr(2));
      const std::uint64_t n = std::min<std::uint64_t>(u64(3), items);
      for (std::uint64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    } else if (k.builtin() == Builtin::fill_u32 && count == 3) {
      auto* out = reinterpret_cast<std::uint32_t*>(ptr(0));
      std::uint32_t v = 0;
      std::memcpy(&v, args[1].value, sizeof v);
      const std::uint64_t n = std::min<std::uint64_t>(u64(2), items);
      for (std::uint64_t i = 0; i < n; ++i) out[i] = v;
    }
    return s;
  }
  Status record(bool timing, std::unique_ptr<plugin::Event>& out) noexcept override {
    return plugin::guarded("mockRecord", [&] {
      Status s = gate(GPURT_MOCK_OP_RECORD, ErrorCategory::internal, "mockRecord");
      if (s.ok()) out = std::make_unique<MockEvent>(timing && timing_);
      return s;
    });
  }
  Status wait(plugin::Event&) noexcept override { return gate(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockWait"); }
  Status finish() noexcept override { return gate(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockFinish"); }

 private:
  bool timing_;
};

class MockDevice final : public plugin::Device {
 public:
  MockDevice() {
    p_.backend = "mock";
    p_.name = "gpurt mock device";
    p_.vendor = "gpurt";
    p_.platform = "mock";
    p_.platform_version = "mock 1";
    p_.type = DeviceType::other;
    p_.driver_version = "1";
    p_.architecture = "host";
    p_.global_memory = device_memory;
    p_.max_allocation = max_allocation;
    p_.compute_units = 4;
    p_.max_group_size = 1024;
    p_.max_group_dims = Dim3(1024, 1024, 64);
    p_.max_groups = Dim3(2147483647u, 65535, 65535);
    p_.max_local_memory = 48 * 1024;
    p_.simd_width = 32;
    p_.fp64 = true;
    p_.int32_atomics = true;
    p_.languages = {SourceLanguage::portable};
  }
  const DeviceProperties& properties() const noexcept override { return p_; }
  Status create_queue(const plugin::QueueOptions& options, std::unique_ptr<plugin::Queue>& out) noexcept override {
    return plugin::guarded("mockCreateQueue", [&] {
      Status s = gate(GPURT_MOCK_OP_QUEUE, ErrorCategory::out_of_host_memory, "mockCreateQueue");
      if (s.ok()) out = std::make_unique<MockQueue>(options.timing);
      return s;
    });
  }
  Status allocate(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out) noexcept override {
    return plugin::guarded("mockAlloc", [&] {
      Status s = gate(GPURT_MOCK_OP_ALLOCATE, ErrorCategory::out_of_device_memory, "mockAlloc");
      if (!s.ok()) return s;
      if (g_device_bytes.fetch_add(bytes) + bytes > device_memory) {
        g_device_bytes -= bytes;
        return Status::failure(ErrorCategory::out_of_device_memory,
                               "the mock device's " + std::to_string(device_memory >> 20) + " MiB are used up",
                               "mockAlloc", -3, "MOCK_OUT_OF_MEMORY");
      }
      auto b = std::make_unique<MockBuffer>(bytes);
      if (!b->ok())
        return Status::failure(ErrorCategory::out_of_device_memory, "host memory behind the mock device ran out",
                               "mockAlloc");
      out = std::move(b);
      return Status::success();
    });
  }
  Status allocate_host(std::size_t bytes, std::unique_ptr<plugin::HostAllocation>& out) noexcept override {
    return plugin::guarded("mockHostAlloc", [&] {
      Status s = gate(GPURT_MOCK_OP_ALLOCATE_HOST, ErrorCategory::out_of_host_memory, "mockHostAlloc");
      if (!s.ok()) return s;
      auto h = std::make_unique<MockHost>(bytes);
      if (!h->ok()) return Status::failure(ErrorCategory::out_of_host_memory, "malloc failed", "mockHostAlloc");
      out = std::move(h);
      return Status::success();
    });
  }
  Status build(const plugin::ProgramSource& source, const std::vector<std::string>& options,
               std::unique_ptr<plugin::Program>& out) noexcept override {
    return plugin::guarded("mockBuild", [&] {
      Status s = gate(GPURT_MOCK_OP_BUILD, ErrorCategory::build_failed, "mockBuild");
      if (!s.ok()) {
        s.build_log = source.name + ":1: error: injected build failure";
        return s;
      }
      // "#error" anywhere fails the build, as a real compiler would.
      const auto e = source.text.find("#error");
      if (e != std::string::npos) {
        const auto line = 1 + std::count(source.text.begin(), source.text.begin() + static_cast<long>(e), '\n');
        Status f = Status::failure(ErrorCategory::build_failed, "the program did not compile", "mockBuild", -4,
                                   "MOCK_BUILD_ERROR");
        f.build_log = source.name + ":" + std::to_string(line) + ": error: #error directive";
        for (const auto& o : options) f.build_options += o + " ";
        return f;
      }
      std::vector<std::string> names;
      for (const plugin::KernelDecl& k : plugin::scan_kernels(source.text, {"GPURT_KERNEL"}))
        names.push_back(k.name);
      out = std::make_unique<MockProgram>(source.text, std::move(names));
      return Status::success();
    });
  }
  Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept override {
    total_bytes = device_memory;
    free_bytes = device_memory - std::min<std::uint64_t>(device_memory, g_device_bytes.load());
    return Status::success();
  }
  std::string compiler_id() const noexcept override { return "gpurt-mock-1"; }
  Status load_binary(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                     const std::string& binary, std::unique_ptr<plugin::Program>& out) noexcept override {
    if (binary.rfind("MOCKBIN\n", 0) != 0)
      return Status::failure(ErrorCategory::invalid_argument, "not a mock program binary", "mockLoadBinary");
    plugin::ProgramSource s = source;
    s.text = binary.substr(8);
    return build(s, options, out);
  }

 private:
  DeviceProperties p_;
};

class MockBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return 1; }
  plugin::Device& device(std::size_t) noexcept override { return device_; }
  std::string version() const noexcept override { return "gpurt mock backend 1"; }

 private:
  MockDevice device_;
};

}  // namespace
}  // namespace gpurt::mock

// ---- the control interface (mock_control.h) ----

extern "C" GPURT_MOCK_API int gpurt_mock_fail(int op, unsigned after, unsigned count) {
  if (op < 0 || op >= GPURT_MOCK_OPS) return -1;
  std::lock_guard<std::mutex> lock(gpurt::mock::g_inject_mutex);
  gpurt::mock::g_inject[op] = {after, count};
  return 0;
}

extern "C" GPURT_MOCK_API void gpurt_mock_lose_device(int lost) { gpurt::mock::g_lost = lost; }

extern "C" GPURT_MOCK_API void gpurt_mock_counts(gpurt_mock_counters* out) {
  for (int k = 0; k < GPURT_MOCK_KINDS; ++k) {
    out->created[k] = gpurt::mock::g_created[k];
    out->destroyed[k] = gpurt::mock::g_destroyed[k];
  }
  out->device_bytes = gpurt::mock::g_device_bytes;
  out->calls = gpurt::mock::g_calls;
}

extern "C" GPURT_MOCK_API void gpurt_mock_reset() {
  std::lock_guard<std::mutex> lock(gpurt::mock::g_inject_mutex);
  for (auto& in : gpurt::mock::g_inject) in = {};
  gpurt::mock::g_lost = 0;
}

GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version() { return gpurt::plugin::abi_version; }

GPURT_PLUGIN_EXPORT void gpurt_plugin_entry_v1(const gpurt::plugin::Host*, gpurt::plugin::EntryResult* out) noexcept {
  using namespace gpurt;
  const char* init = std::getenv("GPURT_MOCK_INIT");
  const std::string mode = init ? init : "";
  if (mode == "fail") {
    out->status = BackendStatus::init_failed;
    out->reason = "the mock backend was told to fail at start (GPURT_MOCK_INIT=fail)";
    out->native_text = "MOCK_INIT_FAILED";
    return;
  }
  if (mode == "no_device") {
    out->status = BackendStatus::no_device;
    out->reason = "the mock backend was told to offer no device (GPURT_MOCK_INIT=no_device)";
    return;
  }
  try {
    out->backend = std::make_unique<mock::MockBackend>();
    out->status = BackendStatus::available;
  } catch (...) {
    out->status = BackendStatus::init_failed;
    out->reason = "the mock backend could not allocate itself";
  }
}
