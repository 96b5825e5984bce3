// 02_device_query: what gpurt sees on this machine - every backend (with the reason when it cannot
// be used) and every device with its limits - and a check that each device answers a round trip.
#include <cstdio>
#include <vector>

#include <gpurt/gpurt.hpp>

int main() try {
  for (const gpurt::BackendInfo& b : gpurt::backends()) {
    std::printf("backend %-7s %s", b.name.c_str(), gpurt::to_string(b.status));
    if (!b.available()) std::printf(": %s", b.reason.c_str());
    std::printf("\n");
  }
  int failures = 0;
  for (const gpurt::Device& d : gpurt::devices()) {
    const gpurt::DeviceProperties& p = d.properties();
    std::printf("%s %s: %s, %u compute units, %llu MiB, groups up to %zu, local memory %zu bytes, fp64 %s\n",
                d.selector().c_str(), p.name.c_str(), gpurt::to_string(p.type), p.compute_units,
                static_cast<unsigned long long>(p.global_memory >> 20), p.max_group_size, p.max_local_memory,
                p.fp64 ? "yes" : "no");
    // The device answers: a value goes there and comes back.
    gpurt::Queue q = d.create_queue();
    auto buf = d.alloc<int>(4);
    q.write(std::vector<int>{1, 2, 3, 4}, buf);
    if (q.read(buf) != std::vector<int>{1, 2, 3, 4}) ++failures;
  }
  std::printf("%s\n", failures ? "FAILED: a device did not round-trip" : "OK");
  return failures ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
