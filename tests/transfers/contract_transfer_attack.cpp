// Contract cases (transfers, devices, attack): the transfer engine's settings and copies
// (gpurt/transfer.hpp, queue.hpp), device selection and the environment (runtime.hpp), devices that
// share one native device (device.hpp) and the value types (types.hpp). Each case quotes the promise
// it tries to break and runs on every device. Split from contract_interop_attack.cpp.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "child.hpp"
#include "contract_support.hpp"
#include "staging_support.hpp"
#include "fixture.hpp"
#include "gpurt/graph.hpp"
#include "gpurt/native.hpp"
#include "gpurt/runtime.hpp"
#include "gpurt/transfer.hpp"
#ifdef GPURT_CONTRACT_OPENCL
#include "gpurt/opencl.hpp"
#endif
#ifdef GPURT_CONTRACT_CUDA
#include "gpurt/cuda.hpp"
#endif

using namespace gpurt;


TEST_CASE("transfer.hpp: set_staging_threads takes effect for the next staged copy - 0 restores the documented defaults") {
  // transfer.hpp: "set_staging_threads: Host threads that copy between pageable memory and the
  // staging buffers (the calling thread is one of them), for both directions. 0 restores the
  // defaults: uploads min(16, cores), downloads min(8, cores / 2) ... Takes effect for the next
  // staged copy"; README: "GPURT_STAGING_THREADS: host threads ..., 1-256"; "staging_chunk_bytes:
  // a staged copy moves its data in pieces of this size"; README: "pinned staging buffers, 8 MiB
  // chunks". Every thread count, the extremes included, must copy every byte.
  test::Fixture f;
  test::StagingGuard guard;
  CHECK(staging_chunk_bytes() == (8u << 20));
  set_staging_threads(0);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(staging_threads(CopyDirection::host_to_device) == std::min(16u, cores));
  CHECK(staging_threads(CopyDirection::device_to_host) == std::min(8u, std::max(1u, cores / 2)));
  set_staging(Staging::always);
  const std::size_t bytes = 2 * staging_chunk_bytes() + 4097;
  const std::vector<std::uint8_t> in = test::random_vector<std::uint8_t>(bytes, 0, 255);
  auto d = f.dev.alloc<std::uint8_t>(bytes + 7);
  for (unsigned t : {1u, 3u, 256u}) {
    INFO("threads " << t);
    set_staging_threads(t);
    CHECK(staging_threads(CopyDirection::host_to_device) == t);
    CHECK(staging_threads(CopyDirection::device_to_host) == t);
    const TransferStatistics before = transfer_statistics();
    f.q.copy(in, d.view(7, bytes));
    std::vector<std::uint8_t> out(bytes);
    f.q.copy(d.view(7, bytes), out);
    const TransferStatistics after = transfer_statistics();
    CHECK(after.staged_copies == before.staged_copies + 2);
    CHECK(after.staged_bytes == before.staged_bytes + 2 * bytes);
    CHECK(test::mismatches(out, in) == 0);
  }
  // README: "Copies from and to ordinary (pageable) host memory of 1 MiB and more go through a
  // transfer engine ... HostBuffer memory (... and its views ...) is already pinned and always goes
  // direct": under automatic staging a copy one element short of 1 MiB is never staged, and a
  // HostBuffer view never is, not even under Staging::always.
  {
    set_staging(Staging::automatic);
    const std::size_t below = (1u << 20) - 1;
    const TransferStatistics before = transfer_statistics();
    f.q.copy(std::vector<std::uint8_t>(in.begin(), in.begin() + static_cast<long>(below)), d.view(1, below));
    std::vector<std::uint8_t> out(below);
    f.q.copy(d.view(1, below), out);
    CHECK(transfer_statistics().staged_copies == before.staged_copies);
    set_staging(Staging::always);
    auto pinned = f.dev.alloc_host<std::uint8_t>(bytes);
    f.q.copy(pinned.view(5, bytes - 5), d.view(0, bytes - 5));
    f.q.copy(d.view(2, bytes - 5), pinned.view(0, bytes - 5));
    f.q.finish();
    CHECK(transfer_statistics().staged_copies == before.staged_copies);
  }
  // More than the 256 the environment accepts is refused the same way, and changes nothing.
  set_staging_threads(3);
  GPURT_REQUIRE_ERROR(set_staging_threads(257), ErrorCategory::invalid_argument, "256");
  CHECK(staging_threads(CopyDirection::host_to_device) == 3);
  set_staging_threads(0);
  CHECK(staging_threads(CopyDirection::host_to_device) == std::min(16u, cores));
}

TEST_CASE("queue.hpp: zero-byte copies at a buffer's end take null host pointers - one element more is refused, on every path") {
  // queue.hpp: "Every call validates its arguments first and throws Error without enqueueing
  // anything"; api-guide.md: "Every copy checks that its range lies inside its buffer"; an empty
  // view at the end of a buffer is a valid view (buffer.hpp view: "[offset, offset + count)").
  // A null host pointer with nothing to copy is no error; with something to copy it is.
  test::Fixture f;
  test::StagingGuard guard;
  const std::size_t n = (5u << 20) / sizeof(float) + 1;  // above the staging threshold
  auto d = f.dev.alloc<float>(n);
  f.q.fill(d, 8.0f);
  for (Staging mode : {Staging::never, Staging::automatic, Staging::always}) {
    INFO("staging " << static_cast<int>(mode));
    set_staging(mode);
    const float* no_src = nullptr;
    float* no_dst = nullptr;
    f.q.copy(no_src, d.view(n, 0));
    f.q.copy(d.view(n, 0), no_dst);
    f.q.copy(d.view(0, 0), no_dst);
    f.q.copy(d.view(n, 0), d.view(0, 0));
    f.q.copy(std::vector<float>(), d.view(n, 0));
    GPURT_REQUIRE_ERROR(d.view(n + 1, 0), ErrorCategory::invalid_argument, "");
    GPURT_REQUIRE_ERROR(f.q.copy(no_src, d.view(n - 1, 1)), ErrorCategory::invalid_argument, "null");
    GPURT_REQUIRE_ERROR(f.q.copy(d.view(0, n), no_dst), ErrorCategory::invalid_argument, "null");
    // A host range of one element more than the view, at the end.
    GPURT_REQUIRE_ERROR(f.q.copy(std::vector<float>(2, 1.0f), d.view(n - 1, 1)), ErrorCategory::invalid_argument,
                        "size mismatch");
    f.q.finish();
  }
  CHECK(f.q.read(d) == std::vector<float>(n, 8.0f));
}

TEST_CASE("queue.hpp: pinned and pageable copies of overlapping ranges land in queue order, staged or not") {
  // queue.hpp: "Everything enqueued on one queue runs in order"; "Pinned memory ... is copied
  // asynchronously"; pageable copies are "blocking" (and large ones staged through the transfer
  // engine, transfer.hpp). An asynchronous pinned upload followed by a staged pageable upload of an
  // overlapping range must leave the staged one's bytes, and a pinned download after a staged upload
  // must read what that upload wrote.
  test::Fixture f;
  test::StagingGuard guard;
  const std::size_t n = (24u << 20) / sizeof(float) + 9;
  auto d = f.dev.alloc<float>(n);
  auto pinned = f.dev.alloc_host<float>(n);
  for (Staging mode : {Staging::always, Staging::never}) {
    INFO("staging " << static_cast<int>(mode));
    set_staging(mode);
    std::fill(pinned.begin(), pinned.end(), 1.0f);
    f.q.copy(pinned, d);  // asynchronous, 24 MiB
    const std::vector<float> later = test::random_vector<float>(n / 2);
    f.q.copy(later, d.view(n / 4, n / 2));  // pageable, overlapping, after it
    f.q.finish();
    std::vector<float> want(n, 1.0f);
    std::copy(later.begin(), later.end(), want.begin() + static_cast<long>(n / 4));
    CHECK(test::mismatches(f.q.read(d), want) == 0);
    // A staged upload, then a pinned download of an overlapping range, then another upload.
    const std::vector<float> up = test::random_vector<float>(n - 3);
    f.q.copy(up, d.view(3, n - 3));
    f.q.copy(d.view(0, n), pinned);
    f.q.finish();
    std::vector<float> got(pinned.begin(), pinned.end());
    std::copy(up.begin(), up.end(), want.begin() + 3);
    CHECK(test::mismatches(got, want) == 0);
  }
}


TEST_CASE("types.hpp: BackendInfo, DeviceProperties, to_string and Dim3 tell the truth about this machine") {
  // types.hpp BackendInfo: "available means it can"; reason: "one sentence a person can act on;
  // empty when available"; device_count; runtime.hpp backend(name): "One backend's availability ...
  // Throws invalid_argument for a name gpurt does not know"; DeviceProperties: "index: position
  // within the backend's device list (selector \"backend:index\")", "languages: what Device::build
  // accepts" (device.hpp build: "unsupported when the backend does not take that language"); Dim3:
  // "Unused dimensions are 1".
  test::Fixture f;
  const std::vector<Device> all = devices();
  bool found_mine = false;
  for (const BackendInfo& b : backends()) {
    INFO("backend " << b.name << ": " << to_string(b.status) << " " << b.reason);
    CHECK(b.available() == (b.status == BackendStatus::available));
    CHECK(std::string(to_string(b.status)).size() > 0);
    std::size_t listed = 0;
    for (const Device& d : all) listed += d.properties().backend == b.name;
    if (b.available()) {
      CHECK(b.reason.empty());
      CHECK(b.device_count == listed);
      CHECK(b.device_count > 0);
      CHECK_FALSE(b.languages.empty());
    } else {
      CHECK_FALSE(b.reason.empty());
      CHECK(listed == 0);
    }
    CHECK(backend(b.name).status == b.status);
    found_mine = found_mine || b.name == f.dev.properties().backend;
  }
  CHECK(found_mine);
  GPURT_REQUIRE_ERROR(backend("no_such_backend"), ErrorCategory::invalid_argument, "no_such_backend");
  // Indices are positions in the backend's list, and name the device.
  std::size_t position = 0;
  for (const Device& d : all) {
    if (d.properties().backend != f.dev.properties().backend) continue;
    CHECK(d.properties().index == position);
    CHECK(d.selector() == d.properties().backend + ":" + std::to_string(position));
    CHECK(device(d.selector()) == d);
    ++position;
  }
  const DeviceProperties& p = f.dev.properties();
  CHECK(std::find(p.languages.begin(), p.languages.end(), SourceLanguage::portable) != p.languages.end());
  for (SourceLanguage l : {SourceLanguage::portable, SourceLanguage::opencl_c, SourceLanguage::cuda_cpp,
                           SourceLanguage::ptx, SourceLanguage::cubin}) {
    if (std::find(p.languages.begin(), p.languages.end(), l) != p.languages.end()) continue;
    INFO("language " << to_string(l));
    GPURT_REQUIRE_ERROR(f.dev.build({l, "not a program", "x"}), ErrorCategory::unsupported, to_string(l));
  }
  CHECK(p.max_allocation <= p.global_memory);
  CHECK(p.max_group_dims.x <= p.max_group_size);
  CHECK(p.view_alignment >= 1);
  // Values out of range still name something (noexcept, never null).
  CHECK(std::string(to_string(static_cast<DeviceType>(77))).size() > 0);
  CHECK(std::string(to_string(static_cast<SourceLanguage>(77))).size() > 0);
  CHECK(std::string(to_string(static_cast<BackendStatus>(77))).size() > 0);
  constexpr Dim3 one;
  static_assert(one.x == 1 && one.y == 1 && one.z == 1, "Unused dimensions are 1");
  constexpr Dim3 five(5);
  static_assert(five.y == 1 && five.z == 1 && five.volume() == 5, "Dim3(5) is 5x1x1");
  CHECK(Dim3(2, 3, 4)[0] == 2);
  CHECK(Dim3(2, 3, 4)[2] == 4);
  CHECK(Dim3(2, 3, 4) != Dim3(2, 4, 3));
  CHECK(to_string(Dim3(2, 3, 4)).find('3') != std::string::npos);
}


TEST_CASE("runtime.hpp: device(selector) says why - no match, an unavailable backend, an unknown one, a malformed one, and GPURT_DEVICE") {
  GPURT_KNOWN_FAILURE("opencl:nvidia", test::nvidia_child_reason);  // runs children
  // runtime.hpp device(): "The first device matching `selector`; throws invalid_argument listing what
  // exists otherwise"; api-guide.md: "`device(\"cuda\")` on a machine without the NVIDIA driver throws
  // Error(backend_unavailable)"; errors.md: "'cuda:0' names the cuda backend, which is unavailable
  // (...): <reason>"; selector_matches: "Throws invalid_argument when `selector` is malformed";
  // README: "NAME is a case-insensitive substring of the device name, vendor or platform";
  // GPURT_DEVICE: "one that matches nothing is reported when the default device is asked for".
  test::Fixture f;
  const DeviceProperties& p = f.dev.properties();
  GPURT_REQUIRE_ERROR(device(p.backend + ":99999"), ErrorCategory::invalid_argument, f.dev.selector());
  GPURT_REQUIRE_ERROR(device("no_such_backend:0"), ErrorCategory::invalid_argument, "no_such_backend");
  for (const char* bad : {"", ":0", "opencl:", "opencl:0:0", "Open CL:0"}) {
    INFO("selector '" << bad << "'");
    GPURT_REQUIRE_ERROR(device(bad), ErrorCategory::invalid_argument, "malformed");
    GPURT_REQUIRE_ERROR(selector_matches(bad, p), ErrorCategory::invalid_argument, "malformed");
  }
  // Every backend that cannot be used says why, by its own reason.
  for (const BackendInfo& b : backends()) {
    if (b.available()) continue;
    INFO("backend " << b.name);
    GPURT_REQUIRE_ERROR(device(b.name), ErrorCategory::backend_unavailable, b.reason);
    GPURT_REQUIRE_ERROR(device(b.name + ":0"), ErrorCategory::backend_unavailable, b.reason);
  }
  // NAME: a part of the vendor or the platform, in another case.
  auto upper = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return t;
  };
  for (const std::string* field : {&p.vendor, &p.platform}) {
    const std::string word = field->substr(0, field->find(' '));
    if (word.empty() || word.find(':') != std::string::npos) continue;
    INFO("name '" << word << "'");
    CHECK(selector_matches(p.backend + ":" + upper(word), p));
    CHECK(device(p.backend + ":" + upper(word)).backend() == p.backend);
  }
  // GPURT_DEVICE in a fresh process: a selector that matches nothing, and this device's in upper case.
  for (const std::string& wanted : {p.backend + ":99999", upper(f.dev.selector())}) {
    INFO("GPURT_DEVICE=" << wanted);
    CHECK(test::run_case_with_gpurt_env("contract: the default device under GPURT_DEVICE",
                                        {"GPURT_ENABLE_MOCK=1", "GPURT_DEVICE=" + wanted,
                                         "GPURT_CONTRACT_EXPECT=" + f.dev.selector()}) == 0);
  }
}

TEST_CASE("contract: the default device under GPURT_DEVICE", "[.]") {
  const char* wanted = std::getenv("GPURT_DEVICE");
  const char* expect = std::getenv("GPURT_CONTRACT_EXPECT");
  if (!wanted || !expect) GPURT_SKIP("a child of 'runtime.hpp: device(selector) says why ...', which sets its environment");
  CHECK_FALSE(devices().empty());  // the variable is well-formed: everything but the default works
  CHECK(device(expect).selector() == expect);
  if (std::string(wanted).find("99999") != std::string::npos)
    GPURT_REQUIRE_ERROR(default_device(), ErrorCategory::invalid_argument, "no device matches");
  else
    CHECK(default_device() == device(expect));
}

TEST_CASE("transfer.hpp: GPURT_STAGING=off sets nothing up and measures nothing - auto and on measure in the background") {
  GPURT_KNOWN_FAILURE("opencl:nvidia", test::nvidia_child_reason);  // runs children
  // transfer.hpp: "Where there is no stored measurement - ..., GPURT_CACHE=off, ... - copies use the
  // defaults at once ... while a background thread measures on a private queue"; "GPURT_STAGING=on
  // or off, or set_staging, skips the decision where staging starts to pay: on stages every pageable
  // copy (its downloads still land in pieces where the measurement says they pay, so under on the
  // measurement is still loaded or taken ...), off stages none (nothing is set up or measured)";
  // TransferStatistics::measurements_taken: "measurements taken (in the background) in this process".
  // Each mode in a fresh process with the cache off (nothing to load).
  test::Fixture f;
  for (const char* mode : {"auto", "ON", "off"}) {
    INFO("GPURT_STAGING=" << mode);
    CHECK(test::run_case_with_gpurt_env("contract: staging measurement under GPURT_STAGING",
                                        {"GPURT_ENABLE_MOCK=1", "GPURT_CACHE=off", std::string("GPURT_STAGING=") + mode,
                                         "GPURT_CONTRACT_SELECTOR=" + f.dev.selector()}) == 0);
  }
}

TEST_CASE("transfer.hpp: a process that exits while it measures stores nothing, and the next one measures and stores") {
  GPURT_KNOWN_FAILURE("opencl:nvidia", test::nvidia_child_reason);  // runs children
  // transfer.hpp: "A process that exits first stores nothing: the measurement stops at exit after at
  // most one batch of probes, and the next process measures again"; "then switches to the result
  // and stores it (unless the cache is off)". A child that exits right after its first large copy
  // must end promptly and leave no measurement in its cache directory; a child that waits for the
  // measurement leaves exactly one.
  test::Fixture f;
  const std::string dir = test::temp_dir("contract-interop-exit");
  auto entries = [&] {
    std::size_t found = 0;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return found;
    while (const dirent* e = ::readdir(d)) {
      const std::string path = dir + "/" + e->d_name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      std::ifstream in(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      found += text.find("gpurt transfer measurement 1\n") != std::string::npos;  // after the cache's header
    }
    ::closedir(d);
    return found;
  };
  const std::vector<std::string> env = {"GPURT_ENABLE_MOCK=1", "GPURT_STAGING=auto", "GPURT_CACHE_DIR=" + dir,
                                        "GPURT_CONTRACT_SELECTOR=" + f.dev.selector()};
  std::vector<std::string> at_once = env;
  at_once.push_back("GPURT_CONTRACT_EXIT_AT_ONCE=1");
  int exited_first = 0;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = test::run_case_with_gpurt_env("contract: staging measurement under GPURT_STAGING", at_once);
    CHECK((rc == 0 || rc == 77));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
    if (rc == 0) {
      ++exited_first;
      CHECK(entries() == 0);
    } else {
      std::filesystem::remove_all(dir);  // measured before it exited: start the next round afresh
      std::filesystem::create_directory(dir);
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
    }
  }
  CHECK(exited_first > 0);
  CHECK(test::run_case_with_gpurt_env("contract: staging measurement under GPURT_STAGING", env) == 0);
  CHECK(entries() == 1);
}

TEST_CASE("contract: staging measurement under GPURT_STAGING", "[.]") {
  const char* selector = std::getenv("GPURT_CONTRACT_SELECTOR");
  const char* mode = std::getenv("GPURT_STAGING");
  if (!selector || !mode) GPURT_SKIP("a child of the GPURT_STAGING cases, which set its environment");
  const bool automatic = std::string(mode) == "auto";
  const bool measures = std::string(mode) != "off";
  const Device d = device(selector);
  CHECK(staging() == (automatic ? Staging::automatic : std::string(mode) == "off" ? Staging::never : Staging::always));
  Queue q = d.create_queue();
  const std::size_t n = (12u << 20) / sizeof(float);
  auto b = d.alloc<float>(n);  // "a buffer of 1 MiB or more": the engine sets itself up
  if (std::getenv("GPURT_CONTRACT_EXIT_AT_ONCE")) {
    // Exits while the measurement runs - unless it was done already (then 77: this process did not
    // exit first, and may have stored it).
    if (transfer_statistics().measurements_taken != 0) std::_Exit(77);
    return;
  }
  const std::vector<float> in = test::random_vector<float>(n);
  q.write(in, b);
  CHECK(test::mismatches(q.read(b), in) == 0);
  // The measurement runs in the background once no copy is staging: give it its time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (transfer_statistics().measurements_taken == 0 && std::chrono::steady_clock::now() < deadline &&
         (measures || std::chrono::steady_clock::now() < deadline - std::chrono::seconds(50)))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(transfer_statistics().measurements_loaded == 0);  // GPURT_CACHE=off, or a directory without one
  CHECK(transfer_statistics().measurements_taken == (measures ? 1u : 0u));
  if (!measures) CHECK(transfer_statistics().staged_copies == 0);
}

TEST_CASE("device.hpp: a Device imported over a listed device's native device shares its memory count and limit") {
  // device.hpp alloc: "Throws out_of_device_memory when ... it would take the bytes gpurt holds on the
  // device (memory_usage().gpurt_bytes) past the device's memory, on every backend (drivers that
  // over-commit, like PoCL's, would accept it)"; interop.md, Import: an imported context's Device
  // "has the selector of the listed device it runs on". Two gpurt Devices over one native device
  // are one memory: what gpurt holds through either counts for both, and together they may not
  // allocate past it; and each reaches the other's memory (peer_access). The limit is tried in a child whose device memory is small (PoCL's
  // POCL_MEMORY_LIMIT=1, 1 GiB), with max_allocation's edge; a device with more memory than the
  // test may fill is skipped there.
  test::Fixture f;
  Device other;
  try {
    other = import_device(f.dev.properties().backend, native_handle(f.dev, NativeKind::context).handle,
                          native_handle(f.dev, NativeKind::device).handle, Ownership::borrow);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported) throw;
    GPURT_SKIP(f.dev.description() + " imports no native context: " + e.what());
  }
  REQUIRE(other != f.dev);
  CHECK(other.selector() == f.dev.selector());
  // native.hpp peer_access: "A device always reaches its own memory" - also through a second
  // Device over its own native context and device.
  CHECK(peer_access(f.dev, other));
  CHECK(peer_access(other, f.dev));
  const std::uint64_t before = other.memory_usage().gpurt_bytes;
  CHECK(f.dev.memory_usage().gpurt_bytes == before);
  {
    auto here = f.dev.alloc<std::uint8_t>(3u << 20);
    auto there = other.alloc<std::uint8_t>(1u << 20);
    CHECK(other.memory_usage().gpurt_bytes == before + (4u << 20));
    CHECK(f.dev.memory_usage().gpurt_bytes == before + (4u << 20));
    CHECK(f.dev.memory_usage().gpurt_buffers == other.memory_usage().gpurt_buffers);
  }
  CHECK(other.memory_usage().gpurt_bytes == before);
  if (test::device_matches(f.dev, "opencl:nvidia"))
    GPURT_SKIP(std::string("the limit part runs in a child process: ") + test::nvidia_child_reason);
  const int rc = test::run_case_with_gpurt_env("contract: two Devices over one native device fill its memory",
                                               {"GPURT_ENABLE_MOCK=1", "POCL_MEMORY_LIMIT=1",
                                                "GPURT_CONTRACT_SELECTOR=" + f.dev.selector()});
  if (rc == 77) GPURT_SKIP(f.dev.description() + " has more memory than the test may fill (POCL_MEMORY_LIMIT is PoCL's)");
  CHECK(rc == 0);
}

TEST_CASE("contract: two Devices over one native device fill its memory", "[.]") {
  const char* selector = std::getenv("GPURT_CONTRACT_SELECTOR");
  if (!selector) GPURT_SKIP("a child of the imported-device memory case, which sets its environment");
  const Device listed = device(selector);
  const DeviceProperties& p = listed.properties();
  if (p.global_memory > (std::uint64_t(2) << 30)) std::_Exit(77);
  const Device mine = import_device(p.backend, native_handle(listed, NativeKind::context).handle,
                                    native_handle(listed, NativeKind::device).handle, Ownership::borrow);
  const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(p.max_allocation, p.global_memory / 8));
  std::vector<Buffer<std::uint8_t>> held;
  // Five eighths through the listed device ...
  for (int i = 0; i < 5; ++i) held.push_back(listed.alloc<std::uint8_t>(chunk));
  // ... then the imported one may take at most the rest.
  bool refused = false;
  for (int i = 0; i < 8 && !refused; ++i) {
    try {
      held.push_back(mine.alloc<std::uint8_t>(chunk));
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.category() == ErrorCategory::out_of_device_memory);
      refused = true;
    }
  }
  CHECK(refused);
  CHECK(listed.memory_usage().gpurt_bytes <= p.global_memory);
  held.clear();
  CHECK(mine.memory_usage().gpurt_bytes == 0);
  auto again = mine.alloc<std::uint8_t>(chunk);  // room again once the buffers are gone
  CHECK(again.size() == chunk);
  again = Buffer<std::uint8_t>();
  // types.hpp DeviceProperties::max_allocation: "largest single buffer, bytes" - exactly that much
  // is one buffer, one byte more is out_of_device_memory, through either Device.
  const std::size_t largest = static_cast<std::size_t>(p.max_allocation);
  CHECK(listed.alloc<std::uint8_t>(largest).size() == largest);
  GPURT_REQUIRE_ERROR(listed.alloc<std::uint8_t>(largest + 1), ErrorCategory::out_of_device_memory, "largest");
  GPURT_REQUIRE_ERROR(mine.alloc<std::uint8_t>(largest + 1), ErrorCategory::out_of_device_memory, "largest");
  CHECK(mine.memory_usage().gpurt_bytes == 0);
}

TEST_CASE("api-guide.md: a staged upload runs whole while another thread copies from its destination on the queue") {
  // api-guide.md, "Threads": "a queue takes commands from any number of threads and runs each whole,
  // in the order they were enqueued". A pageable upload of 24 MiB is staged (README, Transfers: 8 MiB
  // chunks through pinned buffers) - several commands underneath; another thread's device copy of
  // the destination on the same queue must see the upload before it or after it, never part of it.
  test::Fixture f;
  test::StagingGuard guard;
  set_staging(Staging::always);
  constexpr std::size_t n = 6u << 20;  // 24 MiB of uint32
  const std::vector<std::uint32_t> ones(n, 1u), twos(n, 2u);
  auto buf = f.dev.alloc<std::uint32_t>(n);
  f.q.copy(ones, buf);
  f.q.finish();
  constexpr int rounds = 24;
  std::string torn;
  std::thread uploader([&] {
    for (int r = 0; r < 2 * rounds; ++r) f.q.copy(r % 2 ? ones : twos, buf);
  });
  try {
    auto snapshot = f.dev.alloc<std::uint32_t>(n);
    for (int r = 0; r < rounds && torn.empty(); ++r) {
      f.q.copy(buf, snapshot);
      const std::vector<std::uint32_t> got = f.q.read(snapshot);
      const std::size_t other = static_cast<std::size_t>(std::count(got.begin(), got.end(), got[0] == 1u ? 2u : 1u));
      if (other != 0 || (got[0] != 1u && got[0] != 2u))
        torn = "round " + std::to_string(r) + ": " + std::to_string(other) + " of " + std::to_string(n) +
               " elements differ from the first (" + std::to_string(got[0]) + ")";
    }
  } catch (...) {
    uploader.join();
    throw;
  }
  uploader.join();
  f.q.finish();
  INFO(torn);
  CHECK(torn.empty());
}
