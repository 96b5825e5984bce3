// What every conformance case starts from: the device under test, a queue, and its kernels; and
// what a case needs of the device beyond memory, queues and events (GPURT_NEEDS).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "kernels.hpp"

namespace gpurt::test {

struct Fixture {
  Device dev = device_under_test();
  Queue q = dev.create_queue();
  // Every kernel of kernels.hpp, in one portable program (Need::portable_kernels).
  Program program() const { return dev.build({SourceLanguage::portable, portable_suite, "conformance.gpurt"}); }
  // vector_add alone (Need::portable_dialect): the kernel a device that runs no kernel of the
  // suite's own may still run (the mock backend's built-in one).
  Kernel vector_add() const {
    return dev.build({SourceLanguage::portable, portable_vector_add, "vector_add.gpurt"}).kernel("vector_add");
  }
};

// Sizes that do and do not divide typical group sizes.
inline const std::size_t odd_sizes[] = {1, 2, 7, 31, 255, 256, 257, 1021, 4099, 65537};

// What a case needs of the device. A case whose need the device does not declare is skipped with
// the reason (GPURT_NEEDS), never run to fail on what the device never promised, and never passed
// with nothing checked: every other case runs on every device, the mock backend's included.
// A case that tests one native language's support (OpenCL C, CUDA C++, PTX) names that language
// instead: GPURT_NEEDS(f.dev, SourceLanguage::ptx). No case asks for a backend by name.
enum class Need {
  portable_dialect,  // Fixture::vector_add(): a program in the portable dialect
  portable_kernels,  // Fixture::program(), or any kernel of the case's own in the portable dialect
};

inline bool builds(const Device& d, SourceLanguage l) {
  for (SourceLanguage x : d.properties().languages)
    if (x == l) return true;
  return false;
}

// Empty when `d` declares what `need` asks for, else the reason it does not.
inline std::string missing(const Device& d, Need need) {
  const std::string who = d.selector() + " (" + d.properties().name + ")";
  if (!builds(d, SourceLanguage::portable)) return who + " does not declare the portable dialect";
  if (need == Need::portable_dialect) return {};
  // A device may take portable source and still run only kernels of its own (the mock backend runs
  // two built-in kernels): such a device refuses, as unsupported, a program with any other kernel.
  try {
    (void)d.build({SourceLanguage::portable, "GPURT_KERNEL void gpurt_conformance_probe(GPURT_GLOBAL uint32_t* out) {\n"
                                             "  out[gpurt_global_id(0)] = 1u;\n}\n",
                   "conformance_probe.gpurt"});
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported) throw;
    return who + " runs no portable kernel of the suite's own: " + e.what();
  }
  return {};
}

// Empty when `d` declares that it builds `language`, else the reason it does not.
inline std::string missing(const Device& d, SourceLanguage language) {
  if (builds(d, language)) return {};
  return d.selector() + " (" + d.properties().name + ") does not build " + to_string(language) + " programs";
}

// The second device of a case that needs two: GPURT_TEST_PEER (a selector) when set, else the next
// device of devices() after `dev` (wrapping around), else an invalid Device.
inline Device peer_of(const Device& dev) {
  if (const char* sel = std::getenv("GPURT_TEST_PEER"); sel != nullptr && *sel != '\0') {
    Device p = device(sel);
    return p == dev ? Device() : p;
  }
  const std::vector<Device> all = devices();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] == dev)
      for (std::size_t j = 1; j < all.size(); ++j)
        if (all[(i + j) % all.size()] != dev) return all[(i + j) % all.size()];
  return Device();
}

}  // namespace gpurt::test

// Skips the running case, with the reason, unless `device` declares `need` (a test::Need or a
// SourceLanguage).
#define GPURT_NEEDS(device, need)                                              \
  do {                                                                         \
    const std::string gpurt_missing_ = ::gpurt::test::missing(device, need);   \
    if (!gpurt_missing_.empty()) GPURT_SKIP(gpurt_missing_);                   \
  } while (0)

// The pair under test (a Device named `peer`, from test::peer_of); skips the case when there is no
// second device.
#define GPURT_PEER(f, peer)                                                                               \
  const ::gpurt::Device peer = ::gpurt::test::peer_of((f).dev);                                          \
  if (!peer.valid())                                                                                      \
    GPURT_SKIP("no second device besides " + (f).dev.description() +                                    \
               " (set GPURT_TEST_PEER to a selector, or enable another backend, e.g. GPURT_ENABLE_MOCK=1)"); \
  INFO("device " << (f).dev.description() << ", peer " << peer.description())
