// The core's side of the plugin boundary (bridge.hpp): table calls turned into Status, and the
// plugin's sized C structs read into the core's types.
#include "model/bridge.hpp"

#include <cstdint>
#include <cstring>
#include <new>

#include "base/log.hpp"

namespace gpurt::bridge {

namespace {

void status_text(gpurt_status* status, gpurt_status_field field, const char* text, std::size_t length) {
  if (!status || !status->context || (!text && length != 0)) return;
  auto* t = static_cast<StatusText*>(status->context);
  try {
    Status* s = t->status ? &*t->status : &t->status.emplace();
    std::string* target = nullptr;
    switch (field) {
      case GPURT_STATUS_MESSAGE: target = &s->message; break;
      case GPURT_STATUS_NATIVE_NAME: target = &s->native_name; break;
      case GPURT_STATUS_CALL: target = &s->call; break;
      case GPURT_STATUS_BUILD_LOG: target = &s->build_log; break;
      case GPURT_STATUS_BUILD_OPTIONS: target = &s->build_options; break;
      case GPURT_STATUS_HINT: target = &s->hint; break;
      default: return;  // a field of a newer minor version: not shown by this core
    }
    target->assign(text ? text : "", length);
  } catch (...) {
    // Out of host memory while keeping a failure's text: the failure itself is still reported.
  }
}

void host_log(gpurt_log_level level, const char* backend, const char* message) {
  detail::plugin_log(level, backend, message);
}

const char* or_empty(const char* s) { return s ? s : ""; }

Status unsupported(const char* what) {
  return Status::failure(ErrorCategory::unsupported, std::string("the backend's plugin does not offer ") + what,
                         what);
}

gpurt_program_source c_source(const ProgramSource& s) {
  gpurt_program_source c{};
  c.size = sizeof c;
  c.language = static_cast<gpurt_language>(s.language);
  c.text = s.text.data();
  c.text_size = s.text.size();
  c.name = s.name.c_str();
  c.float_math = static_cast<std::int32_t>(s.float_math);
  return c;
}

std::vector<const char*> c_options(const std::vector<std::string>& options) {
  std::vector<const char*> out;
  out.reserve(options.size());
  for (const std::string& o : options) out.push_back(o.c_str());
  return out;
}

}  // namespace

void StringSink::write(void* context, const void* data, std::size_t size) noexcept {
  if (!context || (!data && size != 0)) return;
  try {
    static_cast<StringSink*>(context)->text.append(static_cast<const char*>(data), size);
  } catch (...) {  // out of host memory: the text is cut short, nothing crosses into the plugin
  }
}

void ListSink::write(void* context, const void* data, std::size_t size) noexcept {
  if (!context || (!data && size != 0)) return;
  try {
    static_cast<ListSink*>(context)->items.emplace_back(static_cast<const char*>(data), size);
  } catch (...) {
  }
}

const gpurt_host& host() noexcept {
  static const gpurt_host h{sizeof(gpurt_host), GPURT_ABI_VERSION, &host_log, &status_text};
  return h;
}

void log_escape(const char* function) noexcept {
  try {
    std::string what = "not a std::exception";
    try {
      throw;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    detail::log(detail::LogLevel::error, "loader",
                std::string("the backend's plugin let an exception escape from ") + function + " (" + what +
                    "); its output was ignored. A plugin's functions must catch everything: fix the plugin");
  } catch (...) {  // out of host memory while wording it: nothing more to do
  }
}

Status no_object(const char* function, const char* object) {
  return Status::failure(ErrorCategory::internal, std::string("the backend's plugin: ") + function +
                                                      " reported success but returned no " + object +
                                                      "; fix the plugin (a success writes the object asked for)",
                         function);
}

Status finish_status(gpurt_result result, StatusText&& text, const gpurt_status& st) {
  Status s = text.status ? std::move(*text.status) : Status{};
  s.failed = true;
  s.category = result >= GPURT_ERROR_INVALID_ARGUMENT && result <= GPURT_ERROR_TIMEOUT
                   ? static_cast<ErrorCategory>(result - 1)
                   : ErrorCategory::internal;
  s.native_code = st.native_code;
  if (s.message.empty()) s.message = "the backend reported a failure (result " + std::to_string(result) +
                                     ") without saying what went wrong";
  return s;
}

Kernel::Kernel(const Table* t, gpurt_kernel h) : t_(t), h_(h) {
  const gpurt_kernel_info* c = nullptr;
  quietly("kernel_info", [&] { c = t->kernel_info(h); });
  if (!c) return;
  gpurt_kernel_info i{};  // fields past the plugin's size stay zero
  std::memcpy(&i, c, c->size < sizeof i ? c->size : sizeof i);
  info_.name = or_empty(i.name);
  info_.params_known = i.params_known != 0 && (i.param_count == 0 || i.params);
  if (info_.params_known) {
    info_.params.reserve(i.param_count);
    for (std::uint32_t k = 0; k < i.param_count; ++k) {
      const gpurt_param_info& p = i.params[k];
      ParamInfo q;
      q.kind = p.kind >= GPURT_PARAM_UNKNOWN && p.kind <= GPURT_PARAM_SCALAR ? static_cast<ParamKind>(p.kind)
                                                                           : ParamKind::unknown;
      q.size = static_cast<std::size_t>(p.size);
      q.type_name = or_empty(p.type_name);
      info_.params.push_back(std::move(q));
    }
  }
  info_.max_group_size = static_cast<std::size_t>(i.max_group_size);
  info_.preferred_group_multiple = i.preferred_group_multiple ? static_cast<std::size_t>(i.preferred_group_multiple) : 1;
  info_.suggested_group_size = static_cast<std::size_t>(i.suggested_group_size);
  info_.static_local_bytes = static_cast<std::size_t>(i.static_local_bytes);
  info_.dynamic_local_is_parameter = i.dynamic_local_is_parameter != 0;
  info_.local_arguments = i.local_arguments != 0;
  info_.view_alignment = static_cast<std::size_t>(i.view_alignment);
}

Status Kernel::resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept {
  if (!t_->kernel_resident_groups) return unsupported("kernel_resident_groups");
  return call([&](gpurt_status* st) { return t_->kernel_resident_groups(h_, group_size, local_bytes, &out, st); });
}

Program::Program(const Table* t, gpurt_program h) : t_(t), h_(h) {
  StringSink log;
  if (quietly("program_build_log", [&] { t_->program_build_log(h_, &log.sink); })) log_ = std::move(log.text);
}

Status Program::kernel(const std::string& name, std::unique_ptr<Kernel>& out) noexcept {
  try {
    gpurt_kernel k = nullptr;
    Status s = call([&](gpurt_status* st) { return t_->program_kernel(h_, name.c_str(), &k, st); });
    if (s.ok() && !k) return no_object("program_kernel", "kernel");
    if (s.ok()) out = std::make_unique<Kernel>(t_, k);
    return s;
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Program::kernel");
  }
}

std::vector<std::string> Program::kernel_names() const {
  ListSink names;
  if (!quietly("program_kernel_names", [&] { t_->program_kernel_names(h_, &names.sink); })) return {};
  return std::move(names.items);
}

Status Program::binary(std::string& out) const noexcept {
  if (!t_->program_binary) return unsupported("program_binary");
  try {
    StringSink bin;
    Status s = call([&](gpurt_status* st) { return t_->program_binary(h_, &bin.sink, st); });
    if (s.ok()) out = std::move(bin.text);
    return s;
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Program::binary");
  }
}

Status Queue::record(bool timing, std::unique_ptr<Event>& out) noexcept {
  gpurt_event e = nullptr;
  Status s = call([&](gpurt_status* st) { return t_->queue_record(h_, timing ? 1 : 0, &e, st); });
  if (!s.ok()) return s;
  if (!e) return no_object("queue_record", "event");
  out.reset(new (std::nothrow) Event(t_, e));
  if (!out) {
    t_->event_release(e);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Queue::record");
  }
  return s;
}

Status Queue::wait_gate(std::uint64_t& gate) noexcept {
  if (!has_gates()) return Status::failure(ErrorCategory::unsupported, "the plugin has no gates", "queue_wait_gate");
  return call([&](gpurt_status* st) { return t_->queue_wait_gate(h_, &gate, st); });
}

Status Queue::open_gate(std::uint64_t gate) noexcept {
  if (!has_gates()) return Status::failure(ErrorCategory::unsupported, "the plugin has no gates", "queue_open_gate");
  return call([&](gpurt_status* st) { return t_->queue_open_gate(h_, gate, st); });
}

Status Queue::record_again(std::unique_ptr<Event>& event) noexcept {
  if (event && t_->queue_record_again) {
    Status s = call([&](gpurt_status* st) { return t_->queue_record_again(h_, event->handle(), st); });
    if (s.ok() || s.category != ErrorCategory::unsupported) return s;
  }
  return record(false, event);
}

Status Queue::wait(Event& event) noexcept {
  return call([&](gpurt_status* st) { return t_->queue_wait(h_, event.handle(), st); });
}

Device::Device(const Table* t, gpurt_device h) : t_(t), h_(h) {
  gpurt_device_properties c{};
  c.size = sizeof c;
  t->device_properties(h, &c);
  DeviceProperties& p = props_;
  p.name = or_empty(c.name);
  p.vendor = or_empty(c.vendor);
  p.platform = or_empty(c.platform);
  p.platform_version = or_empty(c.platform_version);
  p.driver_version = or_empty(c.driver_version);
  p.architecture = or_empty(c.architecture);
  p.pci_bus_id = or_empty(c.pci_bus_id);
  p.uuid = or_empty(c.uuid);
  compiler_id_ = or_empty(c.compiler_id);
  p.type = c.type >= GPURT_DEVICE_GPU && c.type <= GPURT_DEVICE_OTHER ? static_cast<DeviceType>(c.type)
                                                                     : DeviceType::other;
  p.compute_units = c.compute_units;
  p.global_memory = c.global_memory;
  p.max_allocation = c.max_allocation;
  p.max_group_size = static_cast<std::size_t>(c.max_group_size);
  p.max_group_dims = Dim3(c.max_group_dims[0], c.max_group_dims[1], c.max_group_dims[2]);
  p.max_groups = Dim3(c.max_groups[0], c.max_groups[1], c.max_groups[2]);
  p.max_local_memory = static_cast<std::size_t>(c.max_local_memory);
  p.simd_width = c.simd_width;
  for (int l = GPURT_LANGUAGE_PORTABLE; l <= GPURT_LANGUAGE_CUBIN; ++l)
    if (c.languages & GPURT_LANGUAGE_BIT(l)) p.languages.push_back(static_cast<SourceLanguage>(l));
  p.fp64 = (c.capabilities & GPURT_CAP_FP64) != 0;
  p.fp16 = (c.capabilities & GPURT_CAP_FP16) != 0;
  p.int32_atomics = (c.capabilities & GPURT_CAP_INT32_ATOMICS) != 0;
  p.float_atomic_add = (c.capabilities & GPURT_CAP_FLOAT_ATOMIC_ADD) != 0;
  p.int64_atomics = (c.capabilities & GPURT_CAP_INT64_ATOMICS) != 0;
  p.sub_groups = (c.capabilities & GPURT_CAP_SUB_GROUPS) != 0;
  p.tensor_cores = (c.capabilities & GPURT_CAP_TENSOR_CORES) != 0;
  p.view_alignment = c.view_alignment ? static_cast<std::size_t>(c.view_alignment) : 1;
  p.sub_group_shuffle = (c.capabilities & GPURT_CAP_SUB_GROUP_SHUFFLE) != 0;
  p.shared_memory = (c.capabilities & GPURT_CAP_SHARED_MEMORY) != 0;
  p.shared_memory_concurrent = p.shared_memory && (c.capabilities & GPURT_CAP_SHARED_CONCURRENT) != 0;
  p.shared_memory_after_finish = p.shared_memory && (c.capabilities & GPURT_CAP_SHARED_AFTER_FINISH) != 0;
  if (c.sub_group_sizes && c.sub_group_size_count <= 64)
    p.sub_group_sizes.assign(c.sub_group_sizes, c.sub_group_sizes + c.sub_group_size_count);
}

Status Device::create_queue(const QueueOptions& options, std::unique_ptr<Queue>& out) noexcept {
  gpurt_queue q = nullptr;
  Status s = call([&](gpurt_status* st) { return t_->device_create_queue(h_, options.timing ? 1 : 0, &q, st); });
  if (!s.ok()) return s;
  if (!q) return no_object("device_create_queue", "queue");
  out.reset(new (std::nothrow) Queue(t_, q));
  if (!out) {
    t_->queue_release(q);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::create_queue");
  }
  return s;
}

Status Device::advise(Buffer& buffer, std::size_t offset, std::size_t bytes, std::uint32_t advice, bool set) noexcept {
  if (!t_->device_advise)
    return Status::failure(ErrorCategory::unsupported, "the plugin has no access advice", "device_advise");
  return call([&](gpurt_status* st) { return t_->device_advise(h_, buffer.handle(), offset, bytes, advice, set ? 1 : 0, st); });
}

Status Device::allocate_shared(std::size_t bytes, std::unique_ptr<Buffer>& out, void*& host) noexcept {
  if (!t_->device_allocate_shared)
    return Status::failure(ErrorCategory::unsupported, "the plugin has no shared memory", "device_allocate_shared");
  gpurt_buffer b = nullptr;
  void* h = nullptr;
  Status s = call([&](gpurt_status* st) { return t_->device_allocate_shared(h_, bytes, &b, &h, st); });
  if (!s.ok()) return s;
  if (!b) return no_object("device_allocate_shared", "buffer");
  out.reset(new (std::nothrow) Buffer(t_, b));
  if (!out) {
    t_->buffer_release(b);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::allocate_shared");
  }
  host = h;
  return s;
}

Status Queue::prefetch(Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept {
  if (!t_->queue_prefetch)
    return Status::failure(ErrorCategory::unsupported, "the plugin cannot prefetch shared memory", "queue_prefetch");
  return call([&](gpurt_status* st) { return t_->queue_prefetch(h_, buffer.handle(), offset, bytes, to_host ? 1 : 0, st); });
}

Status Device::allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) noexcept {
  gpurt_buffer b = nullptr;
  Status s = call([&](gpurt_status* st) { return t_->device_allocate(h_, bytes, &b, st); });
  if (!s.ok()) return s;
  if (!b) return no_object("device_allocate", "buffer");
  out.reset(new (std::nothrow) Buffer(t_, b));
  if (!out) {
    t_->buffer_release(b);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::allocate");
  }
  return s;
}

Status Device::register_host(void* ptr, std::size_t bytes, bool& read_only,
                             std::unique_ptr<HostAllocation>& out) noexcept {
  if (!t_->device_register_host && !t_->device_register_host_flags)
    return Status::failure(ErrorCategory::unsupported, "the plugin cannot register host memory", "device_register_host");
  gpurt_host_memory h = nullptr;
  std::uint32_t registered = 0;
  const std::uint32_t flags = read_only ? GPURT_HOST_REGISTER_READ_ONLY : 0u;
  // A plugin without the flags entry registers const memory as any other (the core still refuses
  // downloads into it).
  Status s = call([&](gpurt_status* st) {
    return t_->device_register_host_flags ? t_->device_register_host_flags(h_, ptr, bytes, flags, &h, &registered, st)
                                          : t_->device_register_host(h_, ptr, bytes, &h, st);
  });
  if (!s.ok()) return s;
  if (!h) return no_object("device_register_host", "host memory");
  out.reset(new (std::nothrow) HostAllocation(t_, h, ptr));
  if (!out) {
    t_->host_memory_release(h);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::register_host");
  }
  read_only = read_only || (registered & GPURT_HOST_REGISTER_READ_ONLY) != 0;
  return s;
}

Status Device::allocate_host(std::size_t bytes, std::unique_ptr<HostAllocation>& out) noexcept {
  gpurt_host_memory h = nullptr;
  void* data = nullptr;
  Status s = call([&](gpurt_status* st) { return t_->device_allocate_host(h_, bytes, &h, &data, st); });
  if (!s.ok()) return s;
  if (!h || !data) {
    if (h) t_->host_memory_release(h);
    return no_object("device_allocate_host", h ? "address" : "host memory");
  }
  out.reset(new (std::nothrow) HostAllocation(t_, h, data));
  if (!out) {
    t_->host_memory_release(h);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::allocate_host");
  }
  return s;
}

Status Device::build(const ProgramSource& source, const std::vector<std::string>& options,
                     std::unique_ptr<Program>& out) noexcept {
  // gpurt_program_source::float_math came in 4.6: an older plugin would build as if contract.
  if (source.float_math != FloatMath::contract && GPURT_ABI_VERSION_MINOR(t_->abi_version) < 6)
    return Status::failure(ErrorCategory::unsupported,
                           std::string("the plugin was built for plugin ABI ") +
                               std::to_string(GPURT_ABI_VERSION_MAJOR(t_->abi_version)) + "." +
                               std::to_string(GPURT_ABI_VERSION_MINOR(t_->abi_version)) +
                               ", which has no BuildOptions::float_math (4.6); rebuild it against this gpurt to "
                               "build with FloatMath::" + to_string(source.float_math),
                           "device_build");
  try {
    const gpurt_program_source c = c_source(source);
    const std::vector<const char*> opts = c_options(options);
    gpurt_program p = nullptr;
    Status s = call([&](gpurt_status* st) { return t_->device_build(h_, &c, opts.data(), opts.size(), &p, st); });
    if (s.ok() && !p) return no_object("device_build", "program");
    if (s.ok()) out = std::make_unique<Program>(t_, p);
    return s;
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::build");
  }
}

Status Device::load_binary(const ProgramSource& source, const std::vector<std::string>& options,
                           const std::string& binary, std::unique_ptr<Program>& out) noexcept {
  if (!t_->device_load_binary) return unsupported("device_load_binary");
  try {
    const gpurt_program_source c = c_source(source);
    const std::vector<const char*> opts = c_options(options);
    gpurt_program p = nullptr;
    Status s = call([&](gpurt_status* st) {
      return t_->device_load_binary(h_, &c, opts.data(), opts.size(), binary.data(), binary.size(), &p, st);
    });
    if (s.ok() && !p) return no_object("device_load_binary", "program");
    if (s.ok()) out = std::make_unique<Program>(t_, p);
    return s;
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Device::load_binary");
  }
}

Status Device::memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept {
  if (!t_->device_memory_usage) return unsupported("device_memory_usage");
  return call([&](gpurt_status* st) { return t_->device_memory_usage(h_, &free_bytes, &total_bytes, st); });
}

Status native_handle(const Table* t, gpurt_native_kind kind, void* object, Native& out) noexcept {
  if (!t->native_handle) return unsupported("native_handle");
  gpurt_native n{};
  n.size = sizeof n;
  Status s = call([&](gpurt_status* st) { return t->native_handle(kind, object, &n, st); });
  if (!s.ok()) return s;
  try {
    out.handle = n.handle;
    out.type_name = or_empty(n.type_name);
  } catch (...) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "native_handle");
  }
  return s;
}

Status Queue::copy_peer(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset,
                        std::size_t bytes) noexcept {
  if (!t_->queue_copy_peer) return unsupported("queue_copy_peer");
  return call([&](gpurt_status* st) {
    return t_->queue_copy_peer(h_, src.handle(), src_offset, dst.handle(), dst_offset, bytes, st);
  });
}

Status Graph::set_args(std::size_t index, const gpurt_launch_shape& shape, const KernelArg* args,
                       std::size_t count) noexcept {
  return call([&](gpurt_status* st) { return t_->graph_set_args(h_, index, &shape, args, count, st); });
}

Status Device::create_graph(const gpurt_command* commands, std::size_t count, const std::string& name,
                            std::unique_ptr<Graph>& out) noexcept {
  if (!t_->device_graph_create) return unsupported("device_graph_create");
  gpurt_graph made = nullptr;
  Status s = call([&](gpurt_status* st) {
    return t_->device_graph_create(h_, commands, count, name.c_str(), &made, st);
  });
  if (!s.ok()) return s;
  if (!made) return no_object("device_graph_create", "graph");
  out.reset(new (std::nothrow) Graph(t_, made));
  if (!out) {
    t_->graph_release(made);
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "create_graph");
  }
  return s;
}

namespace {
// Runs device_import for `kind` and wraps what it made in an object of type O; releases it with
// `release` when no host memory is left for the wrapper.
template <class O, class H>
Status import_as(const Table* t, gpurt_device d, gpurt_native_kind kind, std::uint64_t native, std::size_t bytes,
                 bool adopt, std::int32_t* timing, std::unique_ptr<O>& out, void (*release)(H)) noexcept {
  if (!t->device_import) return unsupported("device_import");
  void* made = nullptr;
  Status s = call([&](gpurt_status* st) {
    return t->device_import(d, kind, native, bytes, adopt ? GPURT_ADOPT : GPURT_BORROW, timing, &made, st);
  });
  if (!s.ok()) return s;
  out.reset(new (std::nothrow) O(t, static_cast<H>(made)));
  if (!out) {
    release(static_cast<H>(made));
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "import");
  }
  return s;
}
}  // namespace

Status Device::import_buffer(std::uint64_t native, std::size_t bytes, bool adopt,
                             std::unique_ptr<Buffer>& out) noexcept {
  return import_as(t_, h_, GPURT_NATIVE_BUFFER, native, bytes, adopt, nullptr, out, t_->buffer_release);
}
Status Device::import_queue(std::uint64_t native, bool adopt, bool& timing, std::unique_ptr<Queue>& out) noexcept {
  std::int32_t t = 0;
  Status s = import_as(t_, h_, GPURT_NATIVE_QUEUE, native, 0, adopt, &t, out, t_->queue_release);
  timing = t != 0;
  return s;
}
Status Device::import_event(std::uint64_t native, bool adopt, std::unique_ptr<Event>& out) noexcept {
  return import_as(t_, h_, GPURT_NATIVE_EVENT, native, 0, adopt, nullptr, out, t_->event_release);
}
Status Device::peer_access(const Device& other, bool& possible) noexcept {
  possible = false;
  if (!t_->device_peer_access) return Status::success();
  std::int32_t p = 0;
  Status s = call([&](gpurt_status* st) { return t_->device_peer_access(h_, other.h_, &p, st); });
  possible = s.ok() && p != 0;
  return s;
}

Status Backend::import_device(std::uint64_t context, std::uint64_t device, bool adopt, Device*& out) noexcept {
  if (!t_->backend_import_device) return unsupported("backend_import_device");
  gpurt_device d = nullptr;
  Status s = call([&](gpurt_status* st) {
    return t_->backend_import_device(h_, context, device, adopt ? GPURT_ADOPT : GPURT_BORROW, &d, st);
  });
  if (!s.ok()) return s;
  try {
    std::lock_guard<std::mutex> lock(imported_mutex_);
    imported_.push_back(std::make_unique<Device>(t_, d));
    out = imported_.back().get();
  } catch (...) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "import_device");
  }
  return s;
}

Backend::Backend(const Table* t, gpurt_backend h) : t_(t), h_(h) {
  const std::size_t n = t->backend_device_count(h);
  devices_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) devices_.push_back(std::make_unique<Device>(t, t->backend_device(h, i)));
}

}  // namespace gpurt::bridge
