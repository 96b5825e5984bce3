// The mock backend: a test-only plugin behind the same interface as the real ones. Device memory
// is host memory, every queue operation runs at once on the calling thread, and a few built-in
// kernels (vector_add, fill_u32, named by a portable-dialect program) run on the host. It counts every object it creates and destroys, and fails on demand
// (see mock_control.h): out of memory, build failure, launch failure, device lost, and through
// GPURT_MOCK_INIT a failed or empty plugin start. Its native handles (gpurt/native.hpp) are its own
// object pointers ("mock_buffer", "mock_queue", ...); buffers, queues and events behind them are
// reference-counted like OpenCL's, so imports honour borrow and adopt (mock_control.h counts it).
//
// It is built with the tree for tests and never installed; the core considers it only when
// GPURT_ENABLE_MOCK=1.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "gpurt/plugin/cxx.hpp"
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

// The lost device only, for calls no injection counts (an event's query and its times).
plugin::Outcome lost_outcome(const char* call) {
  if (g_lost.load())
    return Status::failure(ErrorCategory::device_lost, "the mock device was lost (injected by the test)", call, -999,
                           "MOCK_DEVICE_LOST");
  return {};
}
Status lost_gate(const char* call) { return lost_outcome(call).status(); }

// Device lost first, then any injected failure for `op`. A call that passes builds no Status (the
// launch path's promise, which tests/launch/unit_launch_cost.cpp holds the mock to as well); gate() is the same as a Status.
plugin::Outcome gate_outcome(int op, ErrorCategory category, const char* call) {
  ++g_calls;
  if (plugin::Outcome lost = lost_outcome(call); !lost.ok()) return lost;
  std::lock_guard<std::mutex> lock(g_inject_mutex);
  Injection& in = g_inject[op];
  if (in.count == 0) return {};
  if (in.after > 0) {
    --in.after;
    return {};
  }
  --in.count;
  return Status::failure(category, std::string("injected ") + op_name(op) + " failure", call, -1,
                         "MOCK_INJECTED_FAILURE");
}
Status gate(int op, ErrorCategory category, const char* call) { return gate_outcome(op, category, call).status(); }

// ---- objects ----

// ---- native objects ----
// What the mock's native handles point at (the mock's cl_mem, cl_command_queue, cl_event): an
// object with a reference count, like OpenCL's. The gpurt objects hold references; an import
// checks that the handle is a live object of the right kind in this registry, then borrows (one
// more reference, dropped with the import) or adopts (the caller's reference, dropped with it).
enum class NativeType { buffer, queue, event };

struct NativeObject {
  explicit NativeObject(NativeType t) : type(t) {}
  virtual ~NativeObject() = default;
  NativeType type;
  std::atomic<long> refs{1};
};

std::mutex g_native_mutex;
std::set<const NativeObject*> g_natives;  // the live ones
std::atomic<std::uint64_t> g_native_retained{0};
std::atomic<std::uint64_t> g_native_released{0};

template <class T, class... A>
T* make_native(A&&... args) {
  auto* o = new T(std::forward<A>(args)...);
  std::lock_guard<std::mutex> lock(g_native_mutex);
  g_natives.insert(o);
  return o;
}
void release_native(NativeObject* o) noexcept {
  if (!o) return;
  std::lock_guard<std::mutex> lock(g_native_mutex);
  if (--o->refs == 0) {
    g_natives.erase(o);
    delete o;
  }
}
// The live object behind `handle` with one more reference, or null.
NativeObject* retain_native(std::uint64_t handle) noexcept {
  auto* o = reinterpret_cast<NativeObject*>(static_cast<std::uintptr_t>(handle));
  std::lock_guard<std::mutex> lock(g_native_mutex);
  if (!g_natives.count(o)) return nullptr;
  ++o->refs;
  return o;
}
const char* type_name(NativeType t) {
  return t == NativeType::buffer ? "mock_buffer" : t == NativeType::queue ? "mock_queue" : "mock_event";
}
template <class H>
plugin::Native native_of(const H* object, const char* type) {
  return {static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(object)), type};
}

struct Storage final : NativeObject {
  Storage(std::size_t n, bool counted_)
      : NativeObject(NativeType::buffer), bytes(n), counted(counted_),
        data(static_cast<unsigned char*>(std::malloc(n ? n : 1))) {}
  ~Storage() override {
    std::free(data);
    if (counted) g_device_bytes -= bytes;
  }
  std::size_t bytes;
  bool counted;  // allocated by the device (counted in g_device_bytes)
  unsigned char* data;
};
struct QueueCore final : NativeObject {
  explicit QueueCore(bool t) : NativeObject(NativeType::queue), timing(t) {}
  bool timing;
  // Gates (host work): every operation waits while one is closed - the mock runs each at once on
  // the calling thread, so "later work waits" blocks that thread until the gate opens.
  std::mutex gate_mutex;
  std::condition_variable gate_opened;
  std::uint64_t gates_made = 0, gates_opened = 0;
};
struct EventCore final : NativeObject {
  explicit EventCore(bool t) : NativeObject(NativeType::event), timing(t), at(std::chrono::steady_clock::now()) {}
  bool timing;
  std::chrono::steady_clock::time_point at;
};

// A reference an import took (counted in native_retained) dropped (counted in native_released).
void drop_import(NativeObject* o) noexcept {
  ++g_native_released;
  release_native(o);
}

// Holds one reference to a native object of type T (taken over at construction); `imported`: one
// an import took, counted when dropped.
template <class T>
class Ref {
 public:
  explicit Ref(T* o, bool imported) : o_(o), imported_(imported) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() {
    if (imported_)
      drop_import(o_);
    else
      release_native(o_);
  }
  T* operator->() const { return o_; }
  T* get() const { return o_; }

 private:
  T* o_;
  bool imported_;
};

// ---- objects ----

class MockBuffer final : public plugin::Buffer, Counted<GPURT_MOCK_BUFFER> {
 public:
  MockBuffer(Storage* s, bool imported) : store_(s, imported) {}
  bool ok() const { return store_->data != nullptr; }
  unsigned char* data() { return store_->data; }
  Status native(plugin::Native& out) noexcept override {
    out = native_of(store_.get(), "mock_buffer");
    return Status::success();
  }

 private:
  Ref<Storage> store_;
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

// Registered host memory: the application's, named; counted as a host allocation.
class MockRegistration final : public plugin::HostAllocation, Counted<GPURT_MOCK_HOST_ALLOCATION> {
 public:
  explicit MockRegistration(void* p) : data_(p) {}
  void* data() noexcept override { return data_; }

 private:
  void* data_;
};

class MockEvent final : public plugin::Event, Counted<GPURT_MOCK_EVENT> {
 public:
  MockEvent(EventCore* core, bool imported) : core_(core, imported) {}
  Status wait() noexcept override { return gate(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockEventWait"); }
  Status query(bool& complete) noexcept override {
    complete = true;
    return lost_gate("mockEventQuery");
  }
  Status elapsed_ms(plugin::Event& end, double& ms) noexcept override {
    if (Status lost = lost_gate("mockElapsed"); !lost.ok()) return lost;
    auto* e = dynamic_cast<MockEvent*>(&end);
    if (!core_->timing || !e || !e->core_->timing)
      return Status::failure(ErrorCategory::invalid_argument, "an event was recorded without timing", "mockElapsed");
    ms = std::chrono::duration<double, std::milli>(e->core_->at - core_->at).count();
    return Status::success();
  }
  Status native(plugin::Native& out) noexcept override {
    out = native_of(core_.get(), "mock_event");
    return Status::success();
  }
  void rearm() noexcept { core_->at = std::chrono::steady_clock::now(); }

 private:
  Ref<EventCore> core_;
};

// The kernels the mock can run, by name; build() refuses a program that declares any other.
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
  Status native(plugin::Native& out) noexcept override {
    out = native_of(this, "mock_kernel");
    return Status::success();
  }

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
  Status native(plugin::Native& out) noexcept override {
    out = native_of(this, "mock_program");
    return Status::success();
  }
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
  MockQueue(QueueCore* core, bool imported) : core_(core, imported) {}
  Status copy_from_host(const void* src, plugin::Buffer& dst, std::size_t off, std::size_t bytes,
                        bool) noexcept override {  // synchronous: blocking or not
    Status s = enter(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyHtoD");
    if (s.ok() && bytes) std::memcpy(at(dst, off), src, bytes);
    return s;
  }
  Status copy_to_host(plugin::Buffer& src, std::size_t off, void* dst, std::size_t bytes, bool) noexcept override {
    Status s = enter(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyDtoH");
    if (s.ok() && bytes) std::memcpy(dst, at(src, off), bytes);
    return s;
  }
  Status copy(plugin::Buffer& src, std::size_t so, plugin::Buffer& dst, std::size_t doff,
              std::size_t bytes) noexcept override {
    Status s = enter(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockCopyDtoD");
    if (s.ok() && bytes) std::memmove(at(dst, doff), at(src, so), bytes);
    return s;
  }
  Status fill(plugin::Buffer& dst, std::size_t off, std::size_t bytes, const void* pattern,
              std::size_t pattern_size) noexcept override {
    Status s = enter(GPURT_MOCK_OP_FILL, ErrorCategory::internal, "mockFill");
    if (!s.ok()) return s;
    for (std::size_t i = 0; i < bytes; i += pattern_size) std::memcpy(at(dst, off + i), pattern, pattern_size);
    return s;
  }
  plugin::Outcome launch(plugin::Kernel& kernel, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                         std::size_t count) noexcept override {
    if (plugin::Outcome g = enter_outcome(GPURT_MOCK_OP_LAUNCH, ErrorCategory::internal, "mockLaunch"); !g.ok())
      return g;
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
    return {};
  }
  Status record(bool timing, std::unique_ptr<plugin::Event>& out) noexcept override {
    return plugin::guarded("mockRecord", [&] {
      Status s = enter(GPURT_MOCK_OP_RECORD, ErrorCategory::internal, "mockRecord");
      if (s.ok()) out = std::make_unique<MockEvent>(make_native<EventCore>(timing && core_->timing), false);
      return s;
    });
  }
  // The same event, its time taken again: no event is created (counted as a record all the same).
  Status record_again(plugin::Event& event) noexcept override {
    Status s = enter(GPURT_MOCK_OP_RECORD, ErrorCategory::internal, "mockRecordAgain");
    if (s.ok()) static_cast<MockEvent&>(event).rearm();
    return s;
  }
  Status wait(plugin::Event&) noexcept override { return enter(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockWait"); }
  Status finish() noexcept override { return enter(GPURT_MOCK_OP_FINISH, ErrorCategory::internal, "mockFinish"); }
  Status native(plugin::Native& out) noexcept override {
    out = native_of(core_.get(), "mock_queue");
    return Status::success();
  }
  // The memory is the host's already: a copy's worth of fault injection and ordering, no data moved.
  Status prefetch(plugin::Buffer&, std::size_t, std::size_t, bool) noexcept override {
    return enter(GPURT_MOCK_OP_COPY, ErrorCategory::internal, "mockPrefetch");
  }
  // GPURT_MOCK_GATES=off: the queue refuses gates (as a CUDA device without stream memory
  // operations does), so that the core's path without them runs.
  Status wait_gate(std::uint64_t& gate) noexcept override {
    if (const char* g = std::getenv("GPURT_MOCK_GATES"); g && std::string(g) == "off")
      return Status::failure(ErrorCategory::unsupported, "gates are off (GPURT_MOCK_GATES=off)", "mockWaitGate");
    if (Status s = enter(GPURT_MOCK_OP_RECORD, ErrorCategory::internal, "mockWaitGate"); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(core_->gate_mutex);
    gate = ++core_->gates_made;
    return Status::success();
  }
  Status open_gate(std::uint64_t gate) noexcept override {
    {
      std::lock_guard<std::mutex> lock(core_->gate_mutex);
      if (gate != core_->gates_opened + 1 || gate > core_->gates_made)
        return Status::failure(ErrorCategory::internal, "gate " + std::to_string(gate) + " opened out of order",
                               "mockOpenGate");
      core_->gates_opened = gate;
    }
    core_->gate_opened.notify_all();
    return Status::success();
  }

 private:
  // Fault injection (gate), then waits while a gate of the queue is closed.
  Status enter(int op, ErrorCategory category, const char* call) noexcept { return enter_outcome(op, category, call).status(); }
  plugin::Outcome enter_outcome(int op, ErrorCategory category, const char* call) noexcept {
    plugin::Outcome o = gate_outcome(op, category, call);
    std::unique_lock<std::mutex> lock(core_->gate_mutex);
    core_->gate_opened.wait(lock, [&] { return core_->gates_opened == core_->gates_made; });
    return o;
  }
  Ref<QueueCore> core_;
};

// An import's reference to the native object `native` of type `type` (counted as retained).
template <class T>
Status take(std::uint64_t native, NativeType type, plugin::Ownership, T*& out) {
  NativeObject* o = retain_native(native);
  if (!o)
    return Status::failure(ErrorCategory::invalid_argument,
                           std::string("the handle is no live ") + type_name(type) +
                               " (it was released, or is not a mock handle); pass a handle from gpurt::native_handle "
                               "of a live mock object",
                           "mockImport");
  if (o->type != type) {
    const NativeType actual = o->type;
    release_native(o);
    return Status::failure(ErrorCategory::invalid_argument,
                           std::string("the handle is a ") + type_name(actual) + ", not a " + type_name(type) +
                               "; pass the handle of a " + type_name(type),
                           "mockImport");
  }
  ++g_native_retained;
  out = static_cast<T*>(o);
  return Status::success();
}
// After a successful import: adopt drops the caller's reference, which the import now stands for.
void adopted(NativeObject* o, plugin::Ownership ownership) {
  if (ownership == plugin::Ownership::adopt) drop_import(o);
}

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
    p_.shared_memory = p_.shared_memory_concurrent = true;  // host memory throughout
    p_.languages = {SourceLanguage::portable};
  }
  const DeviceProperties& properties() const noexcept override { return p_; }
  Status create_queue(const plugin::QueueOptions& options, std::unique_ptr<plugin::Queue>& out) noexcept override {
    return plugin::guarded("mockCreateQueue", [&] {
      Status s = gate(GPURT_MOCK_OP_QUEUE, ErrorCategory::out_of_host_memory, "mockCreateQueue");
      if (s.ok()) out = std::make_unique<MockQueue>(make_native<QueueCore>(options.timing), false);
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
      auto b = std::make_unique<MockBuffer>(make_native<Storage>(bytes, true), false);
      if (!b->ok())
        return Status::failure(ErrorCategory::out_of_device_memory, "host memory behind the mock device ran out",
                               "mockAlloc");
      out = std::move(b);
      return Status::success();
    });
  }
  // The mock's device memory is host memory: shared memory is an allocation whose bytes it names.
  Status allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept override {
    Status s = allocate(bytes, out);
    if (s.ok()) host = static_cast<MockBuffer&>(*out).data();
    return s;
  }
  // Takes every advice (its memory is the host's: nothing to move); checks the value as a plugin must.
  Status advise(plugin::Buffer&, std::size_t, std::size_t, std::uint32_t advice, bool) noexcept override {
    if (advice > GPURT_ADVICE_ACCESSED_BY_DEVICE)
      return Status::failure(ErrorCategory::invalid_argument, "unknown advice", "mockAdvise");
    return Status::success();
  }
  // Fails as a pinned allocation does (GPURT_MOCK_OP_ALLOCATE_HOST); registers read-only what it is
  // asked to (flags unchanged).
  Status register_host(void* ptr, std::size_t, std::uint32_t&, std::unique_ptr<plugin::HostAllocation>& out) noexcept override {
    return plugin::guarded("mockHostRegister", [&] {
      Status s = gate(GPURT_MOCK_OP_ALLOCATE_HOST, ErrorCategory::out_of_host_memory, "mockHostRegister");
      if (s.ok()) out = std::make_unique<MockRegistration>(ptr);
      return s;
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
      // The portable dialect is how a program names the built-in kernels, the only ones the mock
      // runs: a program with any other kernel is refused as unsupported, never launched as a no-op.
      std::vector<std::string> names;
      for (const plugin::KernelDecl& k : plugin::scan_kernels(source.text, {"GPURT_KERNEL"})) {
        if (k.name != "vector_add" && k.name != "fill_u32")
          return Status::failure(ErrorCategory::unsupported,
                                 "the mock device runs only its built-in kernels vector_add and fill_u32, and " +
                                     source.name + " declares '" + k.name + "'",
                                 "mockBuild", -5, "MOCK_NOT_BUILT_IN");
        names.push_back(k.name);
      }
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

  // ---- interop: handles are the mock's own object pointers ----
  Status native(plugin::NativeKind kind, plugin::Native& out) noexcept override {
    switch (kind) {
      case plugin::NativeKind::platform: out = native_of(&platform_, "mock_platform"); break;
      case plugin::NativeKind::device: out = native_of(this, "mock_device"); break;
      case plugin::NativeKind::context: out = native_of(&context_, "mock_context"); break;
      default:
        return Status::failure(ErrorCategory::invalid_argument, "a mock device has platform, device and context "
                               "handles only", "mockDeviceNative");
    }
    return Status::success();
  }
  Status import_buffer(std::uint64_t native, std::size_t bytes, plugin::Ownership ownership,
                       std::unique_ptr<plugin::Buffer>& out) noexcept override {
    return plugin::guarded("mockImportBuffer", [&] {
      Storage* st = nullptr;
      Status s = take<Storage>(native, NativeType::buffer, ownership, st);
      if (!s.ok()) return s;
      if (st->bytes < bytes) {
        const std::size_t held = st->bytes;
        drop_import(st);  // ours only: the caller's reference is untouched
        return Status::failure(ErrorCategory::invalid_argument,
                               "the mock_buffer holds " + std::to_string(held) + " bytes, fewer than the " +
                                   std::to_string(bytes) + " claimed; import at most that many bytes",
                               "mockImportBuffer");
      }
      out = std::make_unique<MockBuffer>(st, true);
      adopted(st, ownership);
      return Status::success();
    });
  }
  Status import_queue(std::uint64_t native, plugin::Ownership ownership, bool& timing,
                      std::unique_ptr<plugin::Queue>& out) noexcept override {
    return plugin::guarded("mockImportQueue", [&] {
      QueueCore* q = nullptr;
      Status s = take<QueueCore>(native, NativeType::queue, ownership, q);
      if (!s.ok()) return s;
      timing = q->timing;
      out = std::make_unique<MockQueue>(q, true);
      adopted(q, ownership);
      return Status::success();
    });
  }
  Status import_event(std::uint64_t native, plugin::Ownership ownership,
                      std::unique_ptr<plugin::Event>& out) noexcept override {
    return plugin::guarded("mockImportEvent", [&] {
      EventCore* e = nullptr;
      Status s = take<EventCore>(native, NativeType::event, ownership, e);
      if (!s.ok()) return s;
      out = std::make_unique<MockEvent>(e, true);
      adopted(e, ownership);
      return Status::success();
    });
  }

 private:
  DeviceProperties p_;
  char platform_ = 0, context_ = 0;  // what the platform and context handles point at
};

class MockBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return 1; }
  plugin::Device& device(std::size_t) noexcept override { return device_; }

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
  out->native_retained = gpurt::mock::g_native_retained;
  out->native_released = gpurt::mock::g_native_released;
}

extern "C" GPURT_MOCK_API long gpurt_mock_retain(uint64_t native) {
  gpurt::mock::NativeObject* o = gpurt::mock::retain_native(native);
  if (!o) return -1;
  ++gpurt::mock::g_native_retained;
  return o->refs.load();
}

extern "C" GPURT_MOCK_API long gpurt_mock_references(uint64_t native) {
  auto* o = reinterpret_cast<gpurt::mock::NativeObject*>(static_cast<std::uintptr_t>(native));
  std::lock_guard<std::mutex> lock(gpurt::mock::g_native_mutex);
  return gpurt::mock::g_natives.count(o) ? o->refs.load() : -1;
}

extern "C" GPURT_MOCK_API void gpurt_mock_reset() {
  std::lock_guard<std::mutex> lock(gpurt::mock::g_inject_mutex);
  for (auto& in : gpurt::mock::g_inject) in = {};
  gpurt::mock::g_lost = 0;
}

namespace gpurt::mock {
namespace {
void declare(plugin::Declaration& d) {
  d.name = "mock";
  d.description = "test-only: host memory, two built-in kernels, failures on demand (mock_control.h)";
  d.install_hint = "nothing: the mock backend is built with gpurt's tests and needs no vendor library";
  d.languages = {SourceLanguage::portable};
  d.capabilities = GPURT_CAP_INT32_ATOMICS;
  d.priority = 0;
  d.test_only = true;
}

void open(plugin::EntryResult& out) {
  const char* init = std::getenv("GPURT_MOCK_INIT");
  const std::string mode = init ? init : "";
  if (mode == "fail") {
    out.status = BackendStatus::init_failed;
    out.reason = "the mock backend was told to fail at start (GPURT_MOCK_INIT=fail)";
    out.native_text = "MOCK_INIT_FAILED";
    return;
  }
  if (mode == "no_device") {
    out.status = BackendStatus::no_device;
    out.reason = "the mock backend was told to offer no device (GPURT_MOCK_INIT=no_device)";
    return;
  }
  if (!mode.empty()) {  // a value that is neither: said, not started as if unset
    out.status = BackendStatus::init_failed;
    out.reason = "GPURT_MOCK_INIT='" + mode + "' is malformed: expected fail or no_device (unset: the mock starts)";
    out.native_text = "MOCK_INIT_MALFORMED";
    return;
  }
  out.backend = std::make_unique<MockBackend>();
  out.version = "gpurt mock backend 1";
  out.status = BackendStatus::available;
}
}  // namespace
}  // namespace gpurt::mock

GPURT_PLUGIN_DEFINE(gpurt::mock::declare, gpurt::mock::open)
