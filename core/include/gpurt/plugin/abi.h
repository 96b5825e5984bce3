/* The gpurt backend plugin ABI, version 4.5: the only thing that crosses between libgpurt and a
 * backend plugin. Plain C99: opaque handles, sized structs, result codes with status text, and
 * one versioned table of functions that the plugin fills. docs/writing-a-backend.md explains
 * how to write a backend against it; gpurt/plugin/cxx.hpp is an optional header-only C++ helper
 * that turns C++ classes into this table inside the plugin.
 *
 * A plugin is a shared library named libgpurt_<name>.so (name: lower-case letters, digits and
 * '_') that exports exactly two functions:
 *
 *   uint32_t gpurt_plugin_abi_version(void);
 *       GPURT_ABI_VERSION as the plugin was built. Frozen for every version: the core calls it
 *       first and calls nothing else in a plugin of another major version (it reports both).
 *   const gpurt_plugin_table* gpurt_plugin_table_get(uint32_t core_abi_version);
 *       The plugin's function table (static storage, never freed), or NULL if the plugin cannot
 *       work with that core version.
 *
 * Versions are (major << 16) | minor. Within one major version, fields and functions are only
 * ever appended: each struct starts with `size` (bytes, as its writer knew the struct) and a
 * reader ignores what lies beyond the size it was given, so a plugin built for an older minor
 * version loads in a newer core (functions past its table's size count as absent) and the
 * reverse. Optional functions may be NULL (marked below); the core then reports `unsupported`.
 *
 * Rules of the boundary:
 *  - No function lets an exception or a longjmp escape. Every function may be called from any
 *    thread, and from several threads at once on the same object (gpurt's queues, programs and
 *    kernels may be shared by threads: a plugin serialises what its native API does not), except
 *    the *_release functions, which the core calls once no other call on that object can run.
 *  - Results: a function that can fail returns a gpurt_result (GPURT_SUCCESS or an error
 *    category) and, on failure only, describes it in the gpurt_status the core passed, writing
 *    text through gpurt_host::status_text. On success the status is left untouched.
 *  - Ownership: every object the plugin returns is released by the core through the matching
 *    *_release function, exactly once. Strings and arrays the plugin hands out (properties,
 *    kernel info) stay valid as long as the object they describe. Text the plugin produces on
 *    request (build logs, binaries, names, reasons) goes through a gpurt_sink the core supplies;
 *    nothing allocated on one side is freed on the other.
 *  - The core has checked every argument (sizes, offsets and ranges, device ownership, launch
 *    limits, argument kinds) before it calls a function; the plugin performs the operation and
 *    maps native failures.
 *  - The core never unloads a plugin (dlclose), so static strings stay valid for the process. */
#ifndef GPURT_PLUGIN_ABI_H
#define GPURT_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPURT_ABI_MAJOR 4u
#define GPURT_ABI_MINOR 7u
#define GPURT_ABI_MAKE_VERSION(major, minor) ((((uint32_t)(major)) << 16) | ((uint32_t)(minor) & 0xffffu))
#define GPURT_ABI_VERSION GPURT_ABI_MAKE_VERSION(GPURT_ABI_MAJOR, GPURT_ABI_MINOR)
/* Plugins of gpurt before 4.0 returned their major version alone (1, 2, 3) from
 * gpurt_plugin_abi_version; a value below 0x10000 is read as that major version. */
#define GPURT_ABI_VERSION_MAJOR(v) (((uint32_t)(v)) < 0x10000u ? ((uint32_t)(v)) : ((uint32_t)(v)) >> 16)
#define GPURT_ABI_VERSION_MINOR(v) (((uint32_t)(v)) < 0x10000u ? 0u : ((uint32_t)(v)) & 0xffffu)

/* Put before the two exported functions' definitions: default visibility (a plugin is built with
 * -fvisibility=hidden, which would hide them too) and, in C++, C linkage. */
#if defined(__cplusplus)
#define GPURT_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define GPURT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when the struct at `s` (which starts with `size`) has room for `field`: a plugin writes a
 * field of a struct the core hands it (gpurt_plugin_info, gpurt_open_result,
 * gpurt_device_properties) only if it fits, since an older core passes a smaller struct. */
#define GPURT_FITS(s, type, field) ((s)->size >= offsetof(type, field) + sizeof(((type*)0)->field))

#define GPURT_PLUGIN_ABI_VERSION_SYMBOL "gpurt_plugin_abi_version"
#define GPURT_PLUGIN_TABLE_SYMBOL "gpurt_plugin_table_get"

/* ---- handles: the plugin's objects, opaque to the core ---- */
typedef struct gpurt_backend_o* gpurt_backend;
typedef struct gpurt_device_o* gpurt_device;
typedef struct gpurt_buffer_o* gpurt_buffer;
typedef struct gpurt_host_memory_o* gpurt_host_memory;
typedef struct gpurt_queue_o* gpurt_queue;
typedef struct gpurt_event_o* gpurt_event;
typedef struct gpurt_program_o* gpurt_program;
typedef struct gpurt_kernel_o* gpurt_kernel;

/* ---- results: GPURT_SUCCESS or the category of the failure (gpurt::ErrorCategory) ---- */
typedef int32_t gpurt_result;
#define GPURT_SUCCESS 0
#define GPURT_ERROR_INVALID_ARGUMENT 1
#define GPURT_ERROR_OUT_OF_DEVICE_MEMORY 2
#define GPURT_ERROR_OUT_OF_HOST_MEMORY 3
#define GPURT_ERROR_BUILD_FAILED 4
#define GPURT_ERROR_BACKEND_UNAVAILABLE 5
#define GPURT_ERROR_DEVICE_LOST 6
#define GPURT_ERROR_UNSUPPORTED 7
#define GPURT_ERROR_INTERNAL 8 /* also what the core reads from a code it does not know */
#define GPURT_ERROR_TIMEOUT 9

/* What a failure's text describes (gpurt_host::status_text). */
typedef int32_t gpurt_status_field;
#define GPURT_STATUS_MESSAGE 0       /* what went wrong, for a person */
#define GPURT_STATUS_NATIVE_NAME 1   /* the native code's name ("CUDA_ERROR_OUT_OF_MEMORY") */
#define GPURT_STATUS_CALL 2          /* the native call that failed ("cuMemAlloc") */
#define GPURT_STATUS_BUILD_LOG 3     /* compiler output, for GPURT_ERROR_BUILD_FAILED */
#define GPURT_STATUS_BUILD_OPTIONS 4 /* the options the compiler was given */
#define GPURT_STATUS_HINT 5          /* what the user can do about it, where the core words the message
                                      * (e.g. program_kernel's unknown name); appended to it */

/* Filled on failure. The core sets size and context; the plugin sets native_code and passes the
 * status to gpurt_host::status_text for each text field it has. */
typedef struct gpurt_status {
  uint32_t size;
  int64_t native_code;
  void* context; /* the core's; the plugin never reads or writes it */
} gpurt_status;

/* Where the plugin writes variable-length output: `write` appends `size` bytes (a call with
 * size 0 is allowed). Lists (kernel names, notes) are written one item per call. */
typedef struct gpurt_sink {
  void* context;
  void (*write)(void* context, const void* data, size_t size);
} gpurt_sink;

typedef int32_t gpurt_log_level;
#define GPURT_LOG_ERROR 1
#define GPURT_LOG_WARN 2
#define GPURT_LOG_INFO 3
#define GPURT_LOG_DEBUG 4

/* What the core offers a plugin; valid for the life of the process. */
typedef struct gpurt_host {
  uint32_t size;
  uint32_t abi_version; /* the core's GPURT_ABI_VERSION */
  /* A line for gpurt's log (GPURT_LOG); the core filters by level. */
  void (*log)(gpurt_log_level level, const char* backend, const char* message);
  /* Sets one text field of a failure's status: `length` bytes of `text`, no terminating NUL needed
   * (the text is copied; a later call for the same field replaces it). */
  void (*status_text)(gpurt_status* status, gpurt_status_field field, const char* text, size_t length);
} gpurt_host;

/* ---- languages and capabilities ---- */
typedef int32_t gpurt_language; /* gpurt::SourceLanguage */
#define GPURT_LANGUAGE_PORTABLE 0 /* gpurt's kernel dialect (docs/kernel-language.md) */
#define GPURT_LANGUAGE_OPENCL_C 1
#define GPURT_LANGUAGE_CUDA_CPP 2
#define GPURT_LANGUAGE_PTX 3
#define GPURT_LANGUAGE_CUBIN 4
#define GPURT_LANGUAGE_BIT(language) (1u << (language))

#define GPURT_CAP_FP64 (1u << 0)
#define GPURT_CAP_FP16 (1u << 1)
#define GPURT_CAP_INT32_ATOMICS (1u << 2)
#define GPURT_CAP_FLOAT_ATOMIC_ADD (1u << 3)
#define GPURT_CAP_SUB_GROUPS (1u << 4)
#define GPURT_CAP_TENSOR_CORES (1u << 5)
#define GPURT_CAP_SUB_GROUP_SHUFFLE (1u << 6) /* 4.4: shuffles are native (not a loop of broadcasts) */
#define GPURT_CAP_INT64_ATOMICS (1u << 7) /* 4.4: the portable prelude's 64-bit integer atomics build */
#define GPURT_CAP_SHARED_MEMORY (1u << 8) /* 4.5: device_allocate_shared works (one pointer, host and device) */
#define GPURT_CAP_SHARED_CONCURRENT (1u << 9) /* 4.5: the host may touch shared memory while kernels run */
/* 4.7: the host may touch shared memory only after the finish of every queue whose work used it
 * (the plugin maps it there: OpenCL coarse-grained SVM), not after an event's wait alone */
#define GPURT_CAP_SHARED_AFTER_FINISH (1u << 10)

/* device_advise's advice (4.7; gpurt::MemoryAdvice). */
#define GPURT_ADVICE_READ_MOSTLY 0u
#define GPURT_ADVICE_PREFER_DEVICE 1u
#define GPURT_ADVICE_PREFER_HOST 2u
#define GPURT_ADVICE_ACCESSED_BY_DEVICE 3u

/* device_register_host_flags's flags (4.6). */
#define GPURT_HOST_REGISTER_READ_ONLY (1u << 0) /* the device only reads the memory */

typedef int32_t gpurt_device_type; /* gpurt::DeviceType */
#define GPURT_DEVICE_GPU 0
#define GPURT_DEVICE_CPU 1
#define GPURT_DEVICE_ACCELERATOR 2
#define GPURT_DEVICE_OTHER 3

/* ---- the plugin's declaration: static, read before the backend starts ---- */
#define GPURT_PLUGIN_TEST_ONLY (1u << 0) /* considered only when GPURT_ENABLE_MOCK=1 */

typedef struct gpurt_plugin_info {
  uint32_t size;
  const char* name;         /* equals <name> in libgpurt_<name>.so */
  const char* description;  /* one line for `gpurt info` ("NVIDIA GPUs through the CUDA driver API") */
  const char* install_hint; /* what to install when its vendor library is missing */
  uint32_t languages;       /* GPURT_LANGUAGE_BIT set of what its devices may build */
  uint32_t capabilities;    /* GPURT_CAP_* any of its devices may have (each device says exactly) */
  /* Default-device preference among devices of the same type (GPUs first, then accelerators,
   * CPUs, others): a higher priority comes first. */
  int32_t priority;
  uint32_t flags; /* GPURT_PLUGIN_* */
} gpurt_plugin_info;

/* Backend start-up outcome (gpurt::BackendStatus where a backend loaded). */
typedef int32_t gpurt_open_status;
#define GPURT_OPEN_AVAILABLE 0
#define GPURT_OPEN_NO_DEVICE 1
#define GPURT_OPEN_VENDOR_LIBRARY_MISSING 2
#define GPURT_OPEN_INIT_FAILED 3

typedef struct gpurt_open_result {
  uint32_t size;
  gpurt_open_status status; /* written by the plugin */
  gpurt_backend backend;    /* written by the plugin; non-NULL when AVAILABLE */
  gpurt_sink reason;        /* one sentence a person can act on, when not AVAILABLE */
  gpurt_sink native_text;   /* the driver's code and name, or the dlerror() text */
  gpurt_sink notes;         /* one item per platform or device left out, and why */
  gpurt_sink version;       /* backend and driver version */
} gpurt_open_result;

/* ---- objects' descriptions ---- */
typedef struct gpurt_device_properties {
  uint32_t size;
  /* Strings: plugin-owned, valid for the process; never NULL (use ""). */
  const char* name;
  const char* vendor;
  const char* platform;
  const char* platform_version;
  const char* driver_version;
  const char* architecture;
  const char* pci_bus_id; /* "0000:19:00.0" or "" */
  const char* uuid;       /* 32 hex digits or "" */
  /* Identifies compiler and driver: part of the compile cache's key, so that an update of either
   * never reuses an old binary. */
  const char* compiler_id;
  gpurt_device_type type;
  uint32_t compute_units;
  uint64_t global_memory;
  uint64_t max_allocation;
  uint64_t max_group_size;
  uint64_t max_group_dims[3];
  uint64_t max_groups[3];
  uint64_t max_local_memory;
  uint32_t simd_width;
  uint32_t languages;    /* GPURT_LANGUAGE_BIT set: what device_build accepts */
  uint32_t capabilities; /* GPURT_CAP_* */
  uint64_t view_alignment; /* a buffer view passed to a kernel starts on a multiple of this */
  /* 4.4: the sizes a portable kernel's full sub-groups may have ({1} where every work-item is its
   * own sub-group); plugin-owned, valid as long as the device. A plugin of 4.3 or older leaves
   * them 0 and NULL: the sizes are then unknown. */
  uint32_t sub_group_size_count;
  const uint32_t* sub_group_sizes;
} gpurt_device_properties;

typedef int32_t gpurt_param_kind;
#define GPURT_PARAM_UNKNOWN 0        /* only the size (or nothing) is known */
#define GPURT_PARAM_GLOBAL_POINTER 1 /* takes a buffer */
#define GPURT_PARAM_LOCAL_POINTER 2  /* takes a local-memory size (OpenCL __local pointer) */
#define GPURT_PARAM_SCALAR 3         /* takes a value of `size` bytes */

/* One parameter, as far as the compiled kernel tells. Fixed layout within a major version. */
typedef struct gpurt_param_info {
  gpurt_param_kind kind;
  uint64_t size;         /* bytes; 0 when unknown */
  const char* type_name; /* as the compiler spells it ("float*", "uint"), or "" */
} gpurt_param_info;

typedef struct gpurt_kernel_info {
  uint32_t size;
  const char* name;
  int32_t params_known; /* 0: the backend cannot introspect; the core checks no argument */
  uint32_t param_count;
  const gpurt_param_info* params; /* param_count entries, valid while the kernel lives */
  uint64_t max_group_size;        /* for this kernel on this device */
  uint64_t preferred_group_multiple;
  uint64_t suggested_group_size;  /* 1D group size the backend recommends (occupancy); 0: none */
  uint64_t static_local_bytes;
  /* 1: dynamic local memory is the kernel's last parameter (OpenCL __local pointer), which the
   * core passes as a GPURT_ARG_LOCAL; 0: the backend takes gpurt_launch_shape::local_bytes. */
  int32_t dynamic_local_is_parameter;
  int32_t local_arguments; /* 1: the backend accepts GPURT_ARG_LOCAL arguments */
  /* Where a buffer view passed to this kernel must start, in bytes: 1 for any element offset,
   * 0 for the device's view_alignment. */
  uint64_t view_alignment;
} gpurt_kernel_info;

typedef struct gpurt_program_source {
  uint32_t size;
  gpurt_language language;
  const char* text; /* source text, or the binary's bytes (cubin) */
  size_t text_size;
  const char* name; /* shown in build logs ("vector_add.cl") */
  /* 4.6: GPURT_FLOAT_MATH_*, how the compiler may evaluate floating point (gpurt::FloatMath). Read
   * it only where `size` covers it; 0 otherwise. The core asks a plugin of 4.5 or older for nothing
   * but GPURT_FLOAT_MATH_CONTRACT (it refuses other modes for it as unsupported). */
  int32_t float_math;
} gpurt_program_source;
#define GPURT_FLOAT_MATH_CONTRACT 0 /* the compiler's default: a*b+c may become one fma */
#define GPURT_FLOAT_MATH_EXACT 1    /* no contraction: each operation rounded on its own */
#define GPURT_FLOAT_MATH_FAST 2     /* fast, relaxed math */

/* ---- launch ---- */
typedef int32_t gpurt_arg_kind;
#define GPURT_ARG_BUFFER 0
#define GPURT_ARG_SCALAR 1
#define GPURT_ARG_LOCAL 2

/* One kernel argument. Fixed layout within a major version (the launch path builds an array of
 * them on the stack, with no other conversion). */
typedef struct gpurt_kernel_arg {
  gpurt_arg_kind kind;
  gpurt_buffer buffer; /* BUFFER: NULL for an empty buffer */
  size_t offset;       /* BUFFER: byte offset of the view */
  size_t size;         /* BUFFER: bytes of the view; SCALAR: value bytes; LOCAL: bytes */
  const void* value;   /* SCALAR */
} gpurt_kernel_arg;

typedef struct gpurt_launch_shape {
  size_t groups[3];
  size_t group_size[3];
  size_t local_bytes; /* dynamic local memory (native form, see gpurt_kernel_info) */
} gpurt_launch_shape;

/* ---- native handles (ABI 4.1): interop with code that uses the vendor API directly ---- */
typedef int32_t gpurt_native_kind;
#define GPURT_NATIVE_PLATFORM 0 /* of a device: cl_platform_id (CUDA has none: UNSUPPORTED) */
#define GPURT_NATIVE_DEVICE 1   /* of a device: CUdevice, cl_device_id */
#define GPURT_NATIVE_CONTEXT 2  /* of a device: CUcontext, cl_context */
#define GPURT_NATIVE_QUEUE 3    /* of a queue: CUstream, cl_command_queue */
#define GPURT_NATIVE_BUFFER 4   /* of a buffer: CUdeviceptr, cl_mem (the allocation, not a view) */
#define GPURT_NATIVE_EVENT 5    /* of an event: CUevent, cl_event */
#define GPURT_NATIVE_PROGRAM 6  /* of a program: CUmodule, cl_program */
#define GPURT_NATIVE_KERNEL 7   /* of a kernel: CUfunction, cl_kernel */

/* A native handle: its bits (a pointer or an integer such as CUdevice, zero-extended) and its
 * type's name as the vendor spells it ("CUstream"; static text). */
typedef struct gpurt_native {
  uint32_t size;
  gpurt_native_kind kind;
  uint64_t handle;
  const char* type_name;
} gpurt_native;

/* Who releases an imported native object. */
typedef int32_t gpurt_ownership;
#define GPURT_BORROW 0 /* the application: it keeps the object alive while gpurt may use it */
#define GPURT_ADOPT 1  /* gpurt: it releases the object (cuMemFree, clReleaseMemObject, ...) when the
                        * gpurt object made from it goes; if the import fails, nothing is released */

/* ---- recorded command sequences (ABI 4.2) ---- */
typedef struct gpurt_graph_o* gpurt_graph;

typedef int32_t gpurt_command_kind;
#define GPURT_COMMAND_LAUNCH 0         /* kernel, shape, args */
#define GPURT_COMMAND_COPY 1           /* src + src_offset -> dst + dst_offset, bytes (one device) */
#define GPURT_COMMAND_COPY_FROM_HOST 2 /* host -> dst + dst_offset, bytes */
#define GPURT_COMMAND_COPY_TO_HOST 3   /* src + src_offset -> host, bytes */
#define GPURT_COMMAND_FILL 4           /* pattern (pattern_size bytes) over dst + dst_offset, bytes */
#define GPURT_COMMAND_WAIT 5           /* later commands wait for event */
#define GPURT_COMMAND_NOTHING 6        /* an empty copy or fill: does nothing, keeps the numbering */

/* One recorded command. The core has checked it as it checks the queue call it stands for. */
typedef struct gpurt_command {
  uint32_t size;
  gpurt_command_kind kind;
  gpurt_kernel kernel;          /* LAUNCH */
  gpurt_launch_shape shape;     /* LAUNCH */
  const gpurt_kernel_arg* args; /* LAUNCH: arg_count arguments (scalar values valid during the call only) */
  size_t arg_count;
  gpurt_buffer src; /* COPY, COPY_TO_HOST */
  size_t src_offset;
  gpurt_buffer dst; /* COPY, COPY_FROM_HOST, FILL */
  size_t dst_offset;
  size_t bytes;            /* COPY*, FILL: more than 0 */
  void* host;              /* COPY_FROM_HOST: source; COPY_TO_HOST: destination; from device_allocate_host */
  const void* pattern;     /* FILL: valid during the call only; 1..128 bytes dividing dst_offset and bytes */
  size_t pattern_size;
  gpurt_event event;       /* WAIT: an event of this device */
} gpurt_command;

/* ---- the table ---- */
typedef struct gpurt_plugin_table {
  uint32_t size;        /* sizeof(gpurt_plugin_table) as the plugin was built */
  uint32_t abi_version; /* GPURT_ABI_VERSION as the plugin was built */

  /* The plugin's declaration; cheap, touches no vendor library. */
  void (*describe)(gpurt_plugin_info* info);
  /* Starts the backend: loads its vendor library and lists its devices. Called at most once. */
  void (*open)(const gpurt_host* host, gpurt_open_result* out);

  size_t (*backend_device_count)(gpurt_backend backend);
  gpurt_device (*backend_device)(gpurt_backend backend, size_t index); /* lives for the process */

  void (*device_properties)(gpurt_device device, gpurt_device_properties* out);
  gpurt_result (*device_create_queue)(gpurt_device device, int32_t timing, gpurt_queue* out, gpurt_status* status);
  gpurt_result (*device_allocate)(gpurt_device device, size_t bytes, gpurt_buffer* out, gpurt_status* status);
  /* Page-locked host memory the device copies to and from asynchronously. */
  gpurt_result (*device_allocate_host)(gpurt_device device, size_t bytes, gpurt_host_memory* out, void** data,
                                       gpurt_status* status);
  gpurt_result (*device_build)(gpurt_device device, const gpurt_program_source* source, const char* const* options,
                               size_t option_count, gpurt_program* out, gpurt_status* status);
  /* Optional: recreates a program from program_binary output of the same source and options. */
  gpurt_result (*device_load_binary)(gpurt_device device, const gpurt_program_source* source,
                                     const char* const* options, size_t option_count, const void* binary,
                                     size_t binary_size, gpurt_program* out, gpurt_status* status);
  /* Optional. */
  gpurt_result (*device_memory_usage)(gpurt_device device, uint64_t* free_bytes, uint64_t* total_bytes,
                                      gpurt_status* status);

  void (*buffer_release)(gpurt_buffer buffer);
  void (*host_memory_release)(gpurt_host_memory memory);

  /* GPURT_ERROR_INVALID_ARGUMENT when the program has no kernel of that name: the core then says
   * so and lists program_kernel_names, followed by the status's GPURT_STATUS_HINT if the plugin
   * knows why the name may be missing (a compiler that renames kernels, C++ name mangling). */
  gpurt_result (*program_kernel)(gpurt_program program, const char* name, gpurt_kernel* out, gpurt_status* status);
  void (*program_kernel_names)(gpurt_program program, gpurt_sink* names);
  void (*program_build_log)(gpurt_program program, gpurt_sink* log);
  /* Optional: the built program in a form device_load_binary takes back (for the compile cache). */
  gpurt_result (*program_binary)(gpurt_program program, gpurt_sink* binary, gpurt_status* status);
  void (*program_release)(gpurt_program program);

  const gpurt_kernel_info* (*kernel_info)(gpurt_kernel kernel); /* valid while the kernel lives */
  /* Optional: how many groups of group_size work-items, each with local_bytes of dynamic local
   * memory, one compute unit runs at once. */
  gpurt_result (*kernel_resident_groups)(gpurt_kernel kernel, size_t group_size, size_t local_bytes, size_t* out,
                                         gpurt_status* status);
  void (*kernel_release)(gpurt_kernel kernel);

  /* blocking != 0: the host memory is ordinary (pageable) memory and the call returns only once
   * the host side is done with it (an upload's source may be overwritten, a download's data is
   * in dst). 0: the memory came from device_allocate_host and the copy may be asynchronous. */
  gpurt_result (*queue_copy_from_host)(gpurt_queue queue, const void* src, gpurt_buffer dst, size_t dst_offset,
                                       size_t bytes, int32_t blocking, gpurt_status* status);
  gpurt_result (*queue_copy_to_host)(gpurt_queue queue, gpurt_buffer src, size_t src_offset, void* dst,
                                     size_t bytes, int32_t blocking, gpurt_status* status);
  gpurt_result (*queue_copy)(gpurt_queue queue, gpurt_buffer src, size_t src_offset, gpurt_buffer dst,
                             size_t dst_offset, size_t bytes, gpurt_status* status);
  /* Repeats pattern (pattern_size bytes, 1..128, dividing offset and bytes) over the range. */
  gpurt_result (*queue_fill)(gpurt_queue queue, gpurt_buffer dst, size_t offset, size_t bytes, const void* pattern,
                             size_t pattern_size, gpurt_status* status);
  gpurt_result (*queue_launch)(gpurt_queue queue, gpurt_kernel kernel, const gpurt_launch_shape* shape,
                               const gpurt_kernel_arg* args, size_t arg_count, gpurt_status* status);
  gpurt_result (*queue_record)(gpurt_queue queue, int32_t timing, gpurt_event* out, gpurt_status* status);
  /* Later work on the queue waits for the event (which may come from another queue of the backend, or
   * from a queue of another of its devices). UNSUPPORTED when the backend cannot make this queue wait
   * for that device's event: the core then waits for the event on the host. */
  gpurt_result (*queue_wait)(gpurt_queue queue, gpurt_event event, gpurt_status* status);
  gpurt_result (*queue_finish)(gpurt_queue queue, gpurt_status* status);
  void (*queue_release)(gpurt_queue queue);

  gpurt_result (*event_wait)(gpurt_event event, gpurt_status* status); /* blocks the calling thread */
  gpurt_result (*event_query)(gpurt_event event, int32_t* complete, gpurt_status* status);
  /* Milliseconds from start to end (same device, both recorded with timing). */
  gpurt_result (*event_elapsed_ms)(gpurt_event start, gpurt_event end, double* ms, gpurt_status* status);
  void (*event_release)(gpurt_event event);

  /* ---- 4.1: native handles, imported objects, several devices; all optional ---- */
  /* The native handle behind `object`: a gpurt_device for PLATFORM, DEVICE and CONTEXT, else the
   * handle of the kind's object (gpurt_queue for QUEUE, ...). UNSUPPORTED when the backend has no
   * such native object. The handle stays owned by the plugin object: valid while it lives, never
   * released by the caller. */
  gpurt_result (*native_handle)(gpurt_native_kind kind, void* object, gpurt_native* out, gpurt_status* status);
  /* The native object `native` of `kind` (BUFFER, QUEUE or EVENT) as an object of `device`; *out
   * receives a gpurt_buffer, gpurt_queue or gpurt_event. The plugin checks that the object belongs
   * to the device (its context and device: INVALID_ARGUMENT saying which differs) and, for a
   * buffer, that it holds at least `bytes` where the native API can tell. For a QUEUE, *timing is
   * set to 1 when events recorded on it can be timed. A failed import releases nothing. */
  gpurt_result (*device_import)(gpurt_device device, gpurt_native_kind kind, uint64_t native, size_t bytes,
                                gpurt_ownership ownership, int32_t* timing, void** out, gpurt_status* status);
  /* A device of this backend that works in the application's context `native_context` on its device
   * `native_device` (CUcontext and CUdevice; cl_context and cl_device_id; 0 for the device: the
   * context's own, where it has only one). It lives for the process (the core never releases a
   * device); with GPURT_ADOPT the plugin releases the context at exit, if ever. */
  gpurt_result (*backend_import_device)(gpurt_backend backend, uint64_t native_context, uint64_t native_device,
                                        gpurt_ownership ownership, gpurt_device* out, gpurt_status* status);
  /* Whether a kernel or copy of `a` can reach `b`'s memory directly (CUDA peer access). */
  gpurt_result (*device_peer_access)(gpurt_device a, gpurt_device b, int32_t* possible, gpurt_status* status);
  /* A copy between buffers of two devices of this backend, enqueued on `queue` (of either device):
   * ordered after the queue's earlier work, and later work waits for it. UNSUPPORTED when the
   * backend cannot copy between these two directly (the core then stages through host memory). */
  gpurt_result (*queue_copy_peer)(gpurt_queue queue, gpurt_buffer src, size_t src_offset, gpurt_buffer dst,
                                  size_t dst_offset, size_t bytes, gpurt_status* status);

  /* ---- 4.2: recorded command sequences (graphs); optional, all four or none ---- */
  /* A graph of `count` commands that run in order, each after the one before, when replayed on a
   * queue of `device`; made ready to run here (instantiated), so that a replay costs as little as
   * the backend allows. `name` (may be "") is for messages. The plugin copies what it needs of
   * the commands (argument values, shapes, patterns); the buffers, kernels, events and host memory
   * they name stay alive as long as the graph (the core keeps them). A failure's status text names
   * the command by its index ("command 3"). UNSUPPORTED: the core replays the commands itself,
   * through the queue functions above. */
  gpurt_result (*device_graph_create)(gpurt_device device, const gpurt_command* commands, size_t count,
                                      const char* name, gpurt_graph* out, gpurt_status* status);
  /* New arguments (and shape: its local_bytes may change with them) for the LAUNCH command at
   * `index`: the same kernel and argument count, checked by the core. Replays enqueued before this
   * call keep the old arguments; later ones take the new. A failure leaves the old arguments. */
  gpurt_result (*graph_set_args)(gpurt_graph graph, size_t index, const gpurt_launch_shape* shape,
                                 const gpurt_kernel_arg* args, size_t arg_count, gpurt_status* status);
  /* Enqueues the graph's commands on `queue` (of the graph's device) after its earlier work. */
  gpurt_result (*queue_replay)(gpurt_queue queue, gpurt_graph graph, gpurt_status* status);
  /* Replays already enqueued still run to completion; the plugin frees what they need after them. */
  void (*graph_release)(gpurt_graph graph);
  /* The core never calls graph_set_args, queue_replay or graph_release on one graph from two threads
   * at once (it serialises them), so a plugin's graph needs no lock of its own. */

  /* ---- 4.3: events used again; optional ---- */
  /* Records `event` again on `queue`: from now on it completes when the work enqueued on the queue
   * so far has (as if queue_record had made it here), without creating a native event. `event` was
   * made by queue_record without timing on a queue of the same device, and nothing else waits for
   * it, queries it or records it meanwhile (the core uses this for its staging buffers' events).
   * UNSUPPORTED, or NULL: the core records a new event instead. A failure leaves the event as it was. */
  gpurt_result (*queue_record_again)(gpurt_queue queue, gpurt_event event, gpurt_status* status);

  /* ---- 4.5: host work in the queue; optional, both or none ---- */
  /* Enqueues a gate: later work on `queue` waits until the core opens it (queue_open_gate); earlier
   * work does not. *gate receives a value of the plugin's choosing that names it. The core opens
   * every gate it made exactly once, the gates of one queue in the order they were made, from a
   * thread of its own (never from a driver callback, so the plugin may call its native API there),
   * and all of them before it releases the queue. NULL or UNSUPPORTED: the core runs host work on
   * the thread that enqueues it, after waiting for the queue's earlier work. */
  gpurt_result (*queue_wait_gate)(gpurt_queue queue, uint64_t* gate, gpurt_status* status);
  gpurt_result (*queue_open_gate)(gpurt_queue queue, uint64_t gate, gpurt_status* status);

  /* ---- 4.5: shared memory; optional ---- */
  /* `bytes` (> 0) of memory that kernels, copies and fills use as a buffer (*out) and the host reaches
   * at *host, the same bytes (CUDA managed memory, OpenCL buffer SVM). The core has checked
   * the device's free memory. UNSUPPORTED where the device has none (GPURT_CAP_SHARED_MEMORY unset). */
  gpurt_result (*device_allocate_shared)(gpurt_device device, size_t bytes, gpurt_buffer* out, void** host,
                                         gpurt_status* status);
  /* Moves [offset, offset + bytes) of a shared buffer towards the device (to_host 0) or the host,
   * ordered on the queue like other work; UNSUPPORTED where the device cannot. */
  gpurt_result (*queue_prefetch)(gpurt_queue queue, gpurt_buffer buffer, size_t offset, size_t bytes,
                                 int32_t to_host, gpurt_status* status);
  /* Registered host memory: pins the application's [ptr, ptr + bytes) in place so that copies from
   * and to it run as from device_allocate_host's memory (asynchronously); host_memory_release
   * unregisters it (the memory stays the application's). The core has refused a null pointer and a
   * range that overlaps a registration or pinned allocation it knows. UNSUPPORTED, or NULL: the
   * device cannot (the core says so). */
  gpurt_result (*device_register_host)(gpurt_device device, void* ptr, size_t bytes, gpurt_host_memory* out,
                                       gpurt_status* status);
  /* As device_register_host, with `flags`: GPURT_HOST_REGISTER_READ_ONLY when the application gave
   * const memory (the device must only read it); and *registered: GPURT_HOST_REGISTER_READ_ONLY
   * when the registration lets the device only read (asked, or the pages are read-only) - the core
   * then refuses downloads into it. 4.6, optional; where set, the core calls it instead of
   * device_register_host. */
  /* ---- 4.6: registration flags; optional ---- */
  gpurt_result (*device_register_host_flags)(gpurt_device device, void* ptr, size_t bytes, uint32_t flags,
                                             gpurt_host_memory* out, uint32_t* registered, gpurt_status* status);

  /* ---- 4.7: access advice for shared memory; optional ---- */
  /* Sets (set 1) or withdraws (set 0) GPURT_ADVICE_* `advice` for [offset, offset + bytes) of a
   * shared buffer (device_allocate_shared's) of this device, for every queue from now on; not
   * ordered on a queue. The core has checked the buffer, the range (bytes > 0) and the advice.
   * UNSUPPORTED, or NULL: the device has no such advice (the core then reports it as not taken). */
  gpurt_result (*device_advise)(gpurt_device device, gpurt_buffer buffer, size_t offset, size_t bytes,
                                uint32_t advice, int32_t set, gpurt_status* status);
} gpurt_plugin_table;

/* Stores the plugin's install hint (a string literal) in the ELF section ".gpurt_install_hint" as
 * well, where the core reads it without loading the plugin: when the plugin cannot be loaded
 * because a library it links (its vendor library) is missing, `gpurt info` still shows what to
 * install. Use at file scope, once; give gpurt_plugin_info::install_hint the same text. */
#if defined(__GNUC__)
#define GPURT_PLUGIN_INSTALL_HINT(text) \
  __attribute__((section(".gpurt_install_hint"), used)) static const char gpurt_plugin_install_hint_[] = text
#else
#define GPURT_PLUGIN_INSTALL_HINT(text) static const char gpurt_plugin_install_hint_[] = text
#endif

typedef uint32_t (*gpurt_plugin_abi_version_fn)(void);
typedef const gpurt_plugin_table* (*gpurt_plugin_table_get_fn)(uint32_t core_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* GPURT_PLUGIN_ABI_H */
