// Deliberately broken plugins for tests/plugins/unit_plugin_attack.cpp, written in C++ against
// gpurt/plugin/abi.h alone (no cxx.hpp helper): what a third-party plugin written carelessly in C++
// can do to the core. One library per ATTACK_MODE, each named libgpurt_attack.so in its own folder:
//   1 describe throws          2 open throws              3 gpurt_plugin_table_get returns NULL
//   4 a table of 8 bytes       5 describe calls abort()   6 open answers a status no core knows,
//                                                           with a backend and no reason, and calls
//                                                           the host with NULL arguments
//   7 starts, but its operations throw or answer success without the object asked for
//   8 starts, then its device_properties throws
//   9 an ABI 4.0 plugin whose table's size ends before the 4.1 functions, with functions that
//     abort the process lying past that size
//  10 works, but every function that returns no result (releases, build log, kernel names, kernel
//     info) throws
//  11 gpurt_plugin_abi_version throws   12 open says AVAILABLE but gives no backend
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "gpurt/plugin/abi.h"

struct gpurt_backend_o { int unused; };
struct gpurt_device_o { int unused; };
struct gpurt_queue_o { int unused; };
struct gpurt_buffer_o { int unused; };
struct gpurt_program_o { int unused; };
struct gpurt_kernel_o { int unused; };

// Each ATTACK_MODE uses some of what follows, so all of it is [[maybe_unused]].
namespace {
[[maybe_unused]] gpurt_backend_o g_backend;
[[maybe_unused]] gpurt_device_o g_device;
[[maybe_unused]] gpurt_queue_o g_queue;
[[maybe_unused]] gpurt_buffer_o g_buffer;
[[maybe_unused]] gpurt_program_o g_program;
[[maybe_unused]] gpurt_kernel_o g_kernel;

// Every operation this plugin does not care about: returns a zero value (GPURT_SUCCESS, NULL).
template <class R, class... A>
[[maybe_unused]] R stub(A...) {
  return R();
}

[[maybe_unused]] void describe(gpurt_plugin_info* info) {
#if ATTACK_MODE == 1
  throw std::runtime_error("describe blew up");
#elif ATTACK_MODE == 5
  std::abort();
#endif
  info->name = "attack";
  info->description = "a deliberately broken plugin";
  info->install_hint = "nothing to install: this is a test";
  info->languages = GPURT_LANGUAGE_BIT(GPURT_LANGUAGE_PORTABLE);
  info->priority = 1;
}

[[maybe_unused]] void open_backend(const gpurt_host* host, gpurt_open_result* out) {
#if ATTACK_MODE == 2
  (void)host, (void)out;
  throw std::logic_error("open blew up");
#elif ATTACK_MODE == 12
  (void)host;
  out->status = GPURT_OPEN_AVAILABLE;  // and out->backend left NULL
#elif ATTACK_MODE == 6
  host->log(99, nullptr, nullptr);
  host->log(-5, "attack", nullptr);
  host->status_text(nullptr, GPURT_STATUS_MESSAGE, "nowhere", 7);
  out->reason.write(out->reason.context, nullptr, 12);
  out->status = 77;  // no gpurt_open_status has this value
  out->backend = &g_backend;
#else
  (void)host;
  out->status = GPURT_OPEN_AVAILABLE;
  out->backend = &g_backend;
#endif
}

[[maybe_unused]] std::size_t device_count(gpurt_backend) { return 1; }
[[maybe_unused]] gpurt_device device(gpurt_backend, std::size_t) { return &g_device; }
[[maybe_unused]] void properties(gpurt_device, gpurt_device_properties* p) {
#if ATTACK_MODE == 8
  throw std::out_of_range("device_properties blew up");
#endif
  p->name = "attack device";
  p->compiler_id = "attack 1";
  p->type = GPURT_DEVICE_CPU;
  p->compute_units = 1;
  p->global_memory = p->max_allocation = 1u << 20;
  p->max_group_size = 64;
  p->max_group_dims[0] = 64;
  p->max_group_dims[1] = p->max_group_dims[2] = 1;
  p->max_groups[0] = p->max_groups[1] = p->max_groups[2] = 1u << 16;
  p->simd_width = 1;
  p->languages = GPURT_LANGUAGE_BIT(GPURT_LANGUAGE_PORTABLE);
  p->view_alignment = 1;
}

// Mode 7: a timed queue (gpurt's default) is created, an untimed one throws.
[[maybe_unused]] gpurt_result create_queue(gpurt_device, std::int32_t timing, gpurt_queue* out, gpurt_status*) {
  if (!timing) throw std::runtime_error("create_queue blew up");
  *out = &g_queue;
  return GPURT_SUCCESS;
}
// Mode 7: 16 bytes succeed without a buffer; 32 throw bad_alloc; 48 throw an int.
[[maybe_unused]] gpurt_result allocate(gpurt_device, std::size_t bytes, gpurt_buffer* out, gpurt_status*) {
  if (bytes == 32) throw std::bad_alloc();
  if (bytes == 48) throw 42;
  (void)out;  // success, and *out left as the core passed it
  return GPURT_SUCCESS;
}
// Mode 7: a build that succeeds without a program.
[[maybe_unused]] gpurt_result build(gpurt_device, const gpurt_program_source*, const char* const*, std::size_t, gpurt_program*,
                   gpurt_status*) {
  return GPURT_SUCCESS;
}
// Mode 7: a record that succeeds without an event.
[[maybe_unused]] gpurt_result record(gpurt_queue, std::int32_t, gpurt_event*, gpurt_status*) { return GPURT_SUCCESS; }

// Mode 10: every object is made; every function without a result throws.
template <class... A>
[[maybe_unused]] void thrower(A...) {
  throw std::runtime_error("a function without a result blew up");
}
[[maybe_unused]] gpurt_result build_program(gpurt_device, const gpurt_program_source*, const char* const*, std::size_t,
                           gpurt_program* out, gpurt_status*) {
  *out = &g_program;
  return GPURT_SUCCESS;
}
[[maybe_unused]] gpurt_result get_kernel(gpurt_program, const char*, gpurt_kernel* out, gpurt_status*) {
  *out = &g_kernel;
  return GPURT_SUCCESS;
}
[[maybe_unused]] gpurt_result allocate_buffer(gpurt_device, std::size_t, gpurt_buffer* out, gpurt_status*) {
  *out = &g_buffer;
  return GPURT_SUCCESS;
}
[[maybe_unused]] const gpurt_kernel_info* throwing_info(gpurt_kernel) { throw std::runtime_error("kernel_info blew up"); }

[[noreturn, maybe_unused]] void never(...) { std::abort(); }  // lies past a 4.0 table's size: never called

gpurt_plugin_table make_table() {
  gpurt_plugin_table t{};
  t.size = sizeof t;
  t.abi_version = GPURT_ABI_VERSION;
  t.describe = describe;
  t.open = open_backend;
  t.backend_device_count = device_count;
  t.backend_device = device;
  t.device_properties = properties;
  t.device_create_queue = create_queue;
  t.device_allocate = allocate;
  t.device_allocate_host = stub;
  t.device_build = build;
  t.buffer_release = stub;
  t.host_memory_release = stub;
  t.program_kernel = stub;
  t.program_kernel_names = stub;
  t.program_build_log = stub;
  t.program_release = stub;
  t.kernel_info = stub;
  t.kernel_release = stub;
  t.queue_copy_from_host = stub;
  t.queue_copy_to_host = stub;
  t.queue_copy = stub;
  t.queue_fill = stub;
  t.queue_launch = stub;
  t.queue_record = record;
  t.queue_wait = stub;
  t.queue_finish = stub;
  t.queue_release = stub;
  t.event_wait = stub;
  t.event_query = stub;
  t.event_elapsed_ms = stub;
  t.event_release = stub;
#if ATTACK_MODE == 4
  t.size = 8;  // size and abi_version only
#elif ATTACK_MODE == 10
  t.device_build = build_program;
  t.program_kernel = get_kernel;
  t.device_allocate = allocate_buffer;
  t.program_build_log = thrower;
  t.program_kernel_names = thrower;
  t.kernel_info = throwing_info;
  t.buffer_release = thrower;
  t.program_release = thrower;
  t.kernel_release = thrower;
  t.queue_release = thrower;
#elif ATTACK_MODE == 9
  t.size = offsetof(gpurt_plugin_table, native_handle);
  t.abi_version = GPURT_ABI_MAKE_VERSION(GPURT_ABI_MAJOR, 0);
  t.native_handle = reinterpret_cast<decltype(t.native_handle)>(&never);
  t.device_peer_access = reinterpret_cast<decltype(t.device_peer_access)>(&never);
  t.device_graph_create = reinterpret_cast<decltype(t.device_graph_create)>(&never);
  t.graph_set_args = reinterpret_cast<decltype(t.graph_set_args)>(&never);
  t.queue_replay = reinterpret_cast<decltype(t.queue_replay)>(&never);
  t.graph_release = reinterpret_cast<decltype(t.graph_release)>(&never);
#endif
  return t;
}
const gpurt_plugin_table g_table = make_table();
}  // namespace

GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version(void) {
#if ATTACK_MODE == 9
  return GPURT_ABI_MAKE_VERSION(GPURT_ABI_MAJOR, 0);
#elif ATTACK_MODE == 11
  throw std::runtime_error("abi_version blew up");
#else
  return GPURT_ABI_VERSION;
#endif
}

GPURT_PLUGIN_EXPORT const gpurt_plugin_table* gpurt_plugin_table_get(std::uint32_t) {
#if ATTACK_MODE == 3
  return nullptr;  // "NULL if the plugin cannot work with that core version"
#else
  return &g_table;
#endif
}
