/* Test plugins for the loader, written in C99 against gpurt/plugin/abi.h alone: one per FAKE_MODE,
 * each failing in one way a real plugin can, and one (FAKE_MODE 6) that works: a host-memory
 * backend of a newer minor ABI version with the optional functions left out. FAKE_MODE 10 works
 * too but bends every rule the core can survive (NULL strings and text, unknown codes and fields,
 * bits beyond the known ones, a kernel without info); FAKE_MODE 11 claims SIZE_MAX devices. */
#include <stdlib.h>
#include <string.h>

#include "gpurt/plugin/abi.h"

#define EXPORT GPURT_PLUGIN_EXPORT

#if FAKE_MODE == 4
int gpurt_fake_vendor_function(void);
/* Read by the core from the file when the plugin cannot be loaded (its vendor library is missing). */
GPURT_PLUGIN_INSTALL_HINT("install libgpurt_fake_vendor.so, the fake vendor library (a test)");
#endif

#if FAKE_MODE != 0 /* mode 0 exports no entry point at all */

__attribute__((unused)) static void put(gpurt_sink* sink, const char* text) {
  if (sink->write) sink->write(sink->context, text, strlen(text));
}

static const gpurt_host* g_host;

static void describe(gpurt_plugin_info* info) {
#if FAKE_MODE == 9
  (void)info; /* writes nothing: the name stays NULL */
  return;
#elif FAKE_MODE == 7
  info->name = "other"; /* not what its file name says */
#else
  info->name = "fake";
#endif
  info->description = "a loader test plugin";
  info->install_hint = "nothing to install: this is a test";
  info->languages = GPURT_LANGUAGE_BIT(GPURT_LANGUAGE_PORTABLE);
  info->priority = 1;
}

/* ---- FAKE_MODE 6: a working host-memory backend ---- */
struct gpurt_backend_o { int unused; };
struct gpurt_device_o { int unused; };
struct gpurt_buffer_o { size_t bytes; unsigned char* data; };
struct gpurt_queue_o { int unused; };
static struct gpurt_backend_o g_backend __attribute__((unused));
static struct gpurt_device_o g_device;
static struct gpurt_queue_o g_queue;

static void open_backend(const gpurt_host* host, gpurt_open_result* out) {
  g_host = host;
#if FAKE_MODE == 2
  out->status = GPURT_OPEN_NO_DEVICE;
  put(&out->reason, "the fake driver sees no device");
  put(&out->native_text, "FAKE_ERROR_NO_DEVICE (100)");
#elif FAKE_MODE == 4
  out->status = gpurt_fake_vendor_function() == 42 ? GPURT_OPEN_INIT_FAILED : GPURT_OPEN_NO_DEVICE;
#elif FAKE_MODE == 10
  {
    static char chunk[1024];
    int i;
    memset(chunk, 'v', sizeof chunk);
    out->status = GPURT_OPEN_AVAILABLE;
    out->backend = &g_backend;
    out->notes.write(out->notes.context, NULL, 5); /* NULL data: ignored */
    out->notes.write(out->notes.context, "", 0);
    out->reason.write(out->reason.context, NULL, 100);
    for (i = 0; i < 1024; ++i) out->version.write(out->version.context, chunk, sizeof chunk); /* 1 MiB */
    out->version.write(out->version.context, NULL, 1);
  }
#elif FAKE_MODE == 6 || FAKE_MODE == 11
  out->status = GPURT_OPEN_AVAILABLE;
  out->backend = &g_backend;
  put(&out->version, "fake 4.9");
  put(&out->notes, "first note");
  put(&out->notes, "second note");
#else
  out->status = GPURT_OPEN_INIT_FAILED;
  put(&out->reason, "the fake driver failed to initialise");
  put(&out->native_text, "fakeInit: FAKE_ERROR_NOT_INITIALIZED (3)");
#endif
}

#if FAKE_MODE == 11
static size_t device_count(gpurt_backend b) { (void)b; return (size_t)-1; }
#else
static size_t device_count(gpurt_backend b) { (void)b; return 1; }
#endif
static gpurt_device device(gpurt_backend b, size_t i) { (void)b; (void)i; return &g_device; }
static void properties(gpurt_device d, gpurt_device_properties* p) {
  (void)d;
#if FAKE_MODE == 10
  /* Every string left NULL; a type and bits no core knows. */
  p->type = 77;
  p->languages = 0xffffffffu;
  p->capabilities = 0xffffffffu;
  p->max_group_size = 64;
  p->max_group_dims[0] = p->max_group_dims[1] = p->max_group_dims[2] = 64;
  p->max_groups[0] = p->max_groups[1] = p->max_groups[2] = 1u << 16;
  p->global_memory = p->max_allocation = 1u << 20;
  return;
#endif
  p->name = "fake device";
  p->vendor = p->platform = p->platform_version = p->driver_version = p->architecture = "";
  p->pci_bus_id = p->uuid = "";
  p->compiler_id = "fake compiler 1";
  p->type = GPURT_DEVICE_CPU;
  p->compute_units = 1;
  p->global_memory = p->max_allocation = 4u << 20; /* more than allocate gives: its failure is the plugin's */
  p->max_group_size = 64;
  p->max_group_dims[0] = 64;
  p->max_group_dims[1] = p->max_group_dims[2] = 1;
  p->max_groups[0] = p->max_groups[1] = p->max_groups[2] = 1u << 16;
  p->max_local_memory = 0;
  p->simd_width = 1;
  p->languages = GPURT_LANGUAGE_BIT(GPURT_LANGUAGE_PORTABLE);
  p->capabilities = GPURT_CAP_INT32_ATOMICS;
  p->view_alignment = 1;
}
static gpurt_result fail(gpurt_status* st, gpurt_result r, const char* message) {
  st->native_code = -7;
  g_host->status_text(st, GPURT_STATUS_MESSAGE, message, strlen(message));
  g_host->status_text(st, GPURT_STATUS_NATIVE_NAME, "FAKE_FAILED", 11);
  g_host->status_text(st, GPURT_STATUS_CALL, "fakeCall", 8);
  return r;
}
static gpurt_result create_queue(gpurt_device d, int32_t timing, gpurt_queue* out, gpurt_status* st) {
  (void)d; (void)timing; (void)st;
#if FAKE_MODE == 10
  if (!timing) { /* an untimed queue: an unknown result code, with text the core cannot take */
    g_host->status_text(st, 99, "a field of the future", 21);
    g_host->status_text(st, GPURT_STATUS_MESSAGE, NULL, 5);
    g_host->status_text(NULL, GPURT_STATUS_MESSAGE, "nowhere", 7);
    return 1234;
  }
#endif
  *out = &g_queue;
  return GPURT_SUCCESS;
}
static gpurt_result allocate(gpurt_device d, size_t bytes, gpurt_buffer* out, gpurt_status* st) {
  struct gpurt_buffer_o* b;
  (void)d;
#if FAKE_MODE == 10
  if (bytes == 3) return GPURT_ERROR_DEVICE_LOST; /* a category with no message */
#endif
  if (bytes > (1u << 20)) return fail(st, GPURT_ERROR_OUT_OF_DEVICE_MEMORY, "the fake device has 1 MiB");
  b = malloc(sizeof *b);
  if (!b) return fail(st, GPURT_ERROR_OUT_OF_HOST_MEMORY, "malloc failed");
  b->bytes = bytes;
  b->data = calloc(bytes ? bytes : 1, 1);
  *out = b;
  return GPURT_SUCCESS;
}
static gpurt_result allocate_host(gpurt_device d, size_t bytes, gpurt_host_memory* out, void** data,
                                  gpurt_status* st) {
  (void)d; (void)bytes; (void)out; (void)data;
  return fail(st, GPURT_ERROR_UNSUPPORTED, "no pinned memory here");
}
#if FAKE_MODE == 10
struct gpurt_program_o { int unused; };
struct gpurt_kernel_o { int params_null; };
static struct gpurt_program_o g_program;
static struct gpurt_kernel_o g_no_info = {0}, g_null_params = {1};
#endif
static gpurt_result build(gpurt_device d, const gpurt_program_source* s, const char* const* o, size_t n,
                          gpurt_program* out, gpurt_status* st) {
  (void)d; (void)s; (void)o; (void)n; (void)out;
#if FAKE_MODE == 10
  *out = &g_program;
  return GPURT_SUCCESS;
#endif
  g_host->status_text(st, GPURT_STATUS_BUILD_LOG, "fake.cl:1: no compiler here", 27);
  return fail(st, GPURT_ERROR_BUILD_FAILED, "the fake backend compiles nothing");
}
static void buffer_release(gpurt_buffer b) { free(b->data); free(b); }
static void host_memory_release(gpurt_host_memory h) { (void)h; }
static gpurt_result program_kernel(gpurt_program p, const char* n, gpurt_kernel* out, gpurt_status* st) {
  (void)p; (void)n; (void)out;
#if FAKE_MODE == 10
  if (strcmp(n, "no_info") == 0) { *out = &g_no_info; return GPURT_SUCCESS; }
  if (strcmp(n, "null_params") == 0) { *out = &g_null_params; return GPURT_SUCCESS; }
#endif
  return fail(st, GPURT_ERROR_INVALID_ARGUMENT, "no kernels");
}
static void program_kernel_names(gpurt_program p, gpurt_sink* s) {
  (void)p;
#if FAKE_MODE == 10
  s->write(s->context, NULL, 3); /* ignored */
  put(s, "no_info");
  put(s, "null_params");
#else
  (void)s;
#endif
}
static void program_build_log(gpurt_program p, gpurt_sink* s) {
  (void)p;
#if FAKE_MODE == 10
  s->write(s->context, NULL, 7); /* ignored */
#else
  (void)s;
#endif
}
static void program_release(gpurt_program p) { (void)p; }
#if FAKE_MODE == 10
static const gpurt_kernel_info* kernel_info(gpurt_kernel k) {
  /* NULL name, parameters said known but NULL with a count of 3 */
  static gpurt_kernel_info info;
  info.size = sizeof info;
  info.params_known = 1;
  info.param_count = 3;
  info.params = NULL;
  info.max_group_size = 64;
  return k->params_null ? &info : NULL;
}
#else
static const gpurt_kernel_info* kernel_info(gpurt_kernel k) { (void)k; return NULL; }
#endif
static void kernel_release(gpurt_kernel k) { (void)k; }
static gpurt_result copy_from_host(gpurt_queue q, const void* src, gpurt_buffer dst, size_t off, size_t bytes,
                                   int32_t blocking, gpurt_status* st) {
  (void)q; (void)blocking; (void)st;
  memcpy(dst->data + off, src, bytes);
  return GPURT_SUCCESS;
}
static gpurt_result copy_to_host(gpurt_queue q, gpurt_buffer src, size_t off, void* dst, size_t bytes,
                                 int32_t blocking, gpurt_status* st) {
  (void)q; (void)blocking; (void)st;
  memcpy(dst, src->data + off, bytes);
  return GPURT_SUCCESS;
}
static gpurt_result copy(gpurt_queue q, gpurt_buffer src, size_t so, gpurt_buffer dst, size_t d_off, size_t bytes,
                         gpurt_status* st) {
  (void)q; (void)st;
  memmove(dst->data + d_off, src->data + so, bytes);
  return GPURT_SUCCESS;
}
static gpurt_result fill(gpurt_queue q, gpurt_buffer dst, size_t off, size_t bytes, const void* pattern, size_t n,
                         gpurt_status* st) {
  size_t i;
  (void)q; (void)st;
  for (i = 0; i < bytes; ++i) dst->data[off + i] = ((const unsigned char*)pattern)[i % n];
  return GPURT_SUCCESS;
}
__attribute__((unused)) static gpurt_result launch(gpurt_queue q, gpurt_kernel k, const gpurt_launch_shape* s, const gpurt_kernel_arg* a,
                           size_t n, gpurt_status* st) {
  (void)q; (void)k; (void)s; (void)a; (void)n;
  return fail(st, GPURT_ERROR_UNSUPPORTED, "no kernels");
}
static gpurt_result record(gpurt_queue q, int32_t timing, gpurt_event* out, gpurt_status* st) {
  (void)q; (void)timing; (void)out;
  return fail(st, GPURT_ERROR_UNSUPPORTED, "no events");
}
static gpurt_result queue_wait(gpurt_queue q, gpurt_event e, gpurt_status* st) {
  (void)q; (void)e; (void)st;
  return GPURT_SUCCESS;
}
static gpurt_result finish(gpurt_queue q, gpurt_status* st) {
  (void)q; (void)st;
  return GPURT_SUCCESS;
}
static void queue_release(gpurt_queue q) { (void)q; }
static gpurt_result event_wait(gpurt_event e, gpurt_status* st) {
  (void)e; (void)st;
  return GPURT_SUCCESS;
}
static gpurt_result event_query(gpurt_event e, int32_t* c, gpurt_status* st) {
  (void)e; (void)st;
  *c = 1;
  return GPURT_SUCCESS;
}
static gpurt_result elapsed(gpurt_event a, gpurt_event b, double* ms, gpurt_status* st) {
  (void)a; (void)b; (void)st;
  *ms = 0;
  return GPURT_SUCCESS;
}
static void event_release(gpurt_event e) { (void)e; }

#if FAKE_MODE == 6
static gpurt_result graph_create(gpurt_device d, const gpurt_command* c, size_t n, const char* name, gpurt_graph* out,
                                 gpurt_status* st) {
  (void)d, (void)c, (void)n, (void)name, (void)out, (void)st;
  return GPURT_ERROR_INTERNAL;
}
static gpurt_result replay(gpurt_queue q, gpurt_graph g, gpurt_status* st) {
  (void)q, (void)g, (void)st;
  return GPURT_ERROR_INTERNAL;
}
#endif

/* A table of a newer minor version: this core's functions, then one it does not know. */
struct newer_table {
  gpurt_plugin_table base;
  void (*from_the_future)(void);
};
static void future(void) {}

static struct newer_table g_table;

EXPORT uint32_t gpurt_plugin_abi_version(void) {
#if FAKE_MODE == 1
  return GPURT_ABI_MAKE_VERSION(999, 0);
#elif FAKE_MODE == 5
  return 3; /* a plugin of gpurt before ABI 4 */
#elif FAKE_MODE == 6 || FAKE_MODE == 10
  return GPURT_ABI_MAKE_VERSION(GPURT_ABI_MAJOR, 9);
#else
  return GPURT_ABI_VERSION;
#endif
}

EXPORT const gpurt_plugin_table* gpurt_plugin_table_get(uint32_t core_version) {
  gpurt_plugin_table* t = &g_table.base;
  (void)core_version;
  t->size = FAKE_MODE == 6 || FAKE_MODE == 10 ? (uint32_t)sizeof g_table : (uint32_t)sizeof *t;
  t->abi_version = gpurt_plugin_abi_version();
  t->describe = describe;
  t->open = open_backend;
  t->backend_device_count = device_count;
  t->backend_device = device;
  t->device_properties = properties;
  t->device_create_queue = create_queue;
  t->device_allocate = allocate;
  t->device_allocate_host = allocate_host;
  t->device_build = build;
  t->device_load_binary = NULL;  /* optional, left out */
  t->device_memory_usage = NULL; /* optional, left out */
  t->buffer_release = buffer_release;
  t->host_memory_release = host_memory_release;
  t->program_kernel = program_kernel;
  t->program_kernel_names = program_kernel_names;
  t->program_build_log = program_build_log;
  t->program_binary = NULL; /* optional, left out */
  t->program_release = program_release;
  t->kernel_info = kernel_info;
  t->kernel_resident_groups = NULL; /* optional, left out */
  t->kernel_release = kernel_release;
  t->queue_copy_from_host = copy_from_host;
  t->queue_copy_to_host = copy_to_host;
  t->queue_copy = copy;
  t->queue_fill = fill;
#if FAKE_MODE == 8
  t->queue_launch = NULL; /* required: the plugin is refused */
#else
  t->queue_launch = launch;
#endif
  t->queue_record = record;
  t->queue_wait = queue_wait;
  t->queue_finish = finish;
  t->queue_release = queue_release;
  t->event_wait = event_wait;
  t->event_query = event_query;
  t->event_elapsed_ms = elapsed;
  t->event_release = event_release;
#if FAKE_MODE == 6
  /* Half of the graph set (ABI 4.2): the core must treat graphs as absent and replay them itself. */
  t->device_graph_create = graph_create;
  t->queue_replay = replay;
#endif
  g_table.from_the_future = future;
  return t;
}
#endif
