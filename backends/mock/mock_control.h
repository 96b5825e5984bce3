/* The mock backend's control interface, for tests: inject failures, lose the device, and read
 * how many objects of each kind the plugin created and destroyed. Tests reach these functions
 * with dlsym on the plugin the core loaded (see tests/support/mock.hpp). */
#ifndef GPURT_MOCK_CONTROL_H
#define GPURT_MOCK_CONTROL_H

#include <stdint.h>

#if defined(__GNUC__)
#define GPURT_MOCK_API __attribute__((visibility("default")))
#else
#define GPURT_MOCK_API
#endif

/* Operations that can be made to fail. */
enum {
  GPURT_MOCK_OP_ALLOCATE,      /* device allocation: out_of_device_memory */
  GPURT_MOCK_OP_ALLOCATE_HOST, /* pinned host allocation: out_of_host_memory */
  GPURT_MOCK_OP_BUILD,         /* program build: build_failed */
  GPURT_MOCK_OP_LAUNCH,        /* kernel launch: internal */
  GPURT_MOCK_OP_COPY,          /* any copy: internal */
  GPURT_MOCK_OP_FILL,          /* fill: internal */
  GPURT_MOCK_OP_QUEUE,         /* queue creation: out_of_host_memory */
  GPURT_MOCK_OP_RECORD,        /* event record: internal */
  GPURT_MOCK_OP_FINISH,        /* finish / wait: internal */
  GPURT_MOCK_OPS
};

/* Kinds of object the plugin counts. */
enum {
  GPURT_MOCK_BUFFER,
  GPURT_MOCK_HOST_ALLOCATION,
  GPURT_MOCK_QUEUE,
  GPURT_MOCK_EVENT,
  GPURT_MOCK_PROGRAM,
  GPURT_MOCK_KERNEL,
  GPURT_MOCK_KINDS
};

typedef struct gpurt_mock_counters {
  uint64_t created[GPURT_MOCK_KINDS];
  uint64_t destroyed[GPURT_MOCK_KINDS];
  uint64_t device_bytes; /* device memory held now */
  uint64_t calls;        /* operations attempted */
  /* References to native objects (the handles of buffers, queues and events) taken and dropped by
   * imports and by gpurt_mock_retain: a borrowed import takes one and drops it with its last handle;
   * an adopted one takes one too, drops the caller's at once in its stead, and drops its own with
   * its last handle (retained +1, released +2, the caller's reference gone). */
  uint64_t native_retained;
  uint64_t native_released;
} gpurt_mock_counters;

#ifdef __cplusplus
extern "C" {
#endif
/* After `after` more successful calls of `op`, the next `count` fail. Returns -1 for an unknown op. */
typedef int (*gpurt_mock_fail_fn)(int op, unsigned after, unsigned count);
/* Non-zero: every operation fails with device_lost until called with 0. */
typedef void (*gpurt_mock_lose_device_fn)(int lost);
typedef void (*gpurt_mock_counts_fn)(gpurt_mock_counters* out);
/* Clears injected failures and the lost state (not the counters). */
typedef void (*gpurt_mock_reset_fn)(void);
/* The mock's clRetain*: one more reference to the native buffer, queue or event `native` (a
 * handle from gpurt::native_handle), which an adopted import takes over. Returns the new count,
 * or -1 when `native` is no live mock object. */
typedef long (*gpurt_mock_retain_fn)(uint64_t native);
/* The references `native` holds now, or -1 when it is no live mock object (released). */
typedef long (*gpurt_mock_references_fn)(uint64_t native);
#ifdef __cplusplus
}
#endif

#endif
