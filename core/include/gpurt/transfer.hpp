// The transfer engine: copies between ordinary (pageable) host memory and a device go through
// pinned staging buffers, cut into chunks, with the host-side memcpy of one chunk overlapping the
// DMA of the previous one (several host threads where the machine has cores to spare). Small
// copies take the direct path. Copies from and to HostBuffer memory (already pinned), also
// through raw pointers into it, always go direct.
//
// A staged copy returns once the host side is done: an upload has read all of the source (which
// may then be reused), a download has written all of the destination (which is then complete).
//
// Measured once per device: where staging starts to pay (per direction, from 1 MiB) and whether
// downloads land in pieces depend on the device, its driver and the host. No user copy waits for
// that measurement. When a buffer of 1 MiB or more is first allocated on a device (or at its
// first such copy, whichever comes first), a thread of gpurt's sets up the engine while the
// program goes on: it starts the copy threads, allocates the pinned staging buffers (3 of 8 MiB)
// and reads the device's stored measurement from the compile cache (GPURT_CACHE_DIR, see
// gpurt/cache.hpp: a small entry, "gpurt transfer measurement 1" and three lines, under the same
// trust rules as compiled programs). A copy that comes while that set-up runs waits for it (it
// would otherwise do the same work itself). Where there is no stored measurement - the first
// process on this device, driver, gpurt version and plugin, GPURT_CACHE=off, or an entry that was
// refused, corrupt or malformed (logged, then ignored) - copies use the defaults at once (staged
// from 4 MiB in both directions, downloads in whole chunks) while a background thread measures on
// a private queue, timing only while no user copy is staging, then switches to the result and
// stores it (unless the cache is off). A process that exits first stores nothing: the
// measurement stops at exit after at most one batch of probes, and the next process measures
// again. Removing the cache directory's files (or GPURT_CACHE=off) measures again. GPURT_STAGING=on
// or off, or set_staging, skips the decision where staging starts to pay: on stages every pageable
// copy (its downloads still land in pieces where the measurement says they pay, so under on the
// measurement is still loaded or taken, in the background as above), off stages none (nothing is
// set up or measured). GPURT_LOG=debug shows what was loaded,
// measured and stored, and what the staging buffers and threads cost to set up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpurt/types.hpp"

namespace gpurt {

enum class Staging {
  automatic,  // staged above the measured cut-over (default; GPURT_STAGING=auto)
  always,     // every pageable copy is staged (GPURT_STAGING=on)
  never,      // never staged: the driver's own pageable path (GPURT_STAGING=off)
};

void set_staging(Staging mode);
Staging staging();

// Host threads that copy between pageable memory and the staging buffers (the calling thread is
// one of them), for both directions: 1 to 256. 0 restores the defaults: uploads min(16, cores),
// downloads min(8, cores / 2), at least 1 - a download also needs a core for the DMA's completions,
// and on the H200 machine (16 cores) 8 threads moved 45 GB/s down where 16 moved 22. More than 256
// throws Error(invalid_argument) and changes nothing (GPURT_STAGING_THREADS takes the same range).
// GPURT_STAGING_THREADS sets it at start. Takes effect for the next staged copy.
void set_staging_threads(unsigned threads);
// The threads a staged copy in `direction` (host_to_device or device_to_host) uses.
unsigned staging_threads(CopyDirection direction);

// The size of one staging chunk in bytes: a staged copy moves its data in pieces of this size
// (its last one shorter), each through one pinned staging buffer.
std::size_t staging_chunk_bytes();

struct TransferStatistics {
  std::uint64_t staged_copies = 0;
  std::uint64_t direct_copies = 0;     // copies through raw host pointers or vectors that went direct
  std::uint64_t staged_bytes = 0;
  // Where staging pays, per device (see "Measured once per device" above): measurements read from
  // the compile cache, and measurements taken (in the background) in this process.
  std::uint64_t measurements_loaded = 0;
  std::uint64_t measurements_taken = 0;
};
TransferStatistics transfer_statistics();

}  // namespace gpurt
