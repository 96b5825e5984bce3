// Contract cases (files gpurt writes, and the messages and logs it gives about them): each quotes
// the promise it tries to break and runs on every device.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fixture.hpp"
#include "gpurt/cache.hpp"
#include "gpurt/trace.hpp"

using namespace gpurt;

namespace {

std::string temp_dir() { return test::temp_dir("files-test"); }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// Some traced work on the device whose result is checked against the host.
void traced_work(test::Fixture& f) {
  const std::size_t n = 1031;  // prime
  const auto h = test::random_vector<float>(n);
  auto x = f.dev.alloc<float>(n);
  f.q.copy(h, x);
  CHECK(f.q.read(x) == h);
}

// A trace file as JSON: its events (fails the case when it is not a trace).
nlohmann::json trace_events(const std::string& text) {
  const nlohmann::json t = nlohmann::json::parse(text, nullptr, false);
  REQUIRE_FALSE(t.is_discarded());
  REQUIRE(t.contains("traceEvents"));
  return t.at("traceEvents");
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// start_trace + stop_trace on `path` still work (the runtime stays usable after a refusal).
void trace_still_works(test::Fixture& f, const std::string& dir) {
  const std::string ok = dir + "/ok.json";
  start_trace(ok);
  traced_work(f);
  CHECK(stop_trace() > 0);
  CHECK(trace_events(slurp(ok)).size() > 2);
}

}  // namespace

TEST_CASE("README: GPURT_TRACE never follows a link planted at the trace's temporary file name") {
  // README (tracing): "the file is written through a new temporary file beside it, created
  // exclusively with an unpredictable name (a link planted there is never followed), then renamed
  // into place". The old name was PATH.tmp.<pid>: a link planted there once overwrote its target.
  test::Fixture f;
  const std::string dir = temp_dir(), path = dir + "/t.json", victim = dir + "/victim";
  spit(victim, "precious\n");
  REQUIRE(::symlink(victim.c_str(), (path + ".tmp." + std::to_string(::getpid())).c_str()) == 0);
  start_trace(path);
  traced_work(f);
  CHECK(stop_trace() > 0);
  CHECK(slurp(victim) == "precious\n");
  CHECK(is_link(path + ".tmp." + std::to_string(::getpid())));
  CHECK(trace_events(slurp(path)).size() > 2);
  CHECK_FALSE(is_link(path));
}

TEST_CASE("README: GPURT_TRACE refuses a symbolic link at PATH and leaves its target alone") {
  // README (tracing): "a symbolic link at PATH is refused (Error invalid_argument; GPURT_TRACE logs
  // the error and does not trace): gpurt neither follows nor replaces it".
  test::Fixture f;
  const std::string dir = temp_dir(), path = dir + "/t.json", victim = dir + "/victim";
  spit(victim, "precious\n");
  REQUIRE(::symlink(victim.c_str(), path.c_str()) == 0);
  GPURT_REQUIRE_ERROR(start_trace(path), ErrorCategory::invalid_argument, "is a symbolic link");
  CHECK_FALSE(tracing());
  // The link appears while the trace runs: the write is refused at stop_trace, the same way.
  const std::string later = dir + "/later.json";
  start_trace(later);
  traced_work(f);
  REQUIRE(::symlink(victim.c_str(), later.c_str()) == 0);
  GPURT_REQUIRE_ERROR(stop_trace(), ErrorCategory::invalid_argument, "is a symbolic link");
  CHECK_FALSE(tracing());
  CHECK(slurp(victim) == "precious\n");
  CHECK(is_link(path));
  CHECK(is_link(later));
  // A directory is refused too, and nothing is left behind beside it.
  GPURT_REQUIRE_ERROR(start_trace(dir), ErrorCategory::invalid_argument, "is a directory");
  trace_still_works(f, dir);
}

TEST_CASE("README: GPURT_TRACE=/dev/null writes into the device and leaves it a character device") {
  // README (tracing): "a character device (/dev/null, /dev/stdout) or a FIFO at PATH is written
  // directly, never replaced". Run as root, the old rename() replaced /dev/null with a file.
  test::Fixture f;
  struct stat before {};
  REQUIRE(::stat("/dev/null", &before) == 0);
  REQUIRE(S_ISCHR(before.st_mode));
  start_trace("/dev/null");
  traced_work(f);
  CHECK(stop_trace() > 0);
  struct stat after {};
  REQUIRE(::lstat("/dev/null", &after) == 0);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_rdev == before.st_rdev);
  CHECK(after.st_ino == before.st_ino);
}

TEST_CASE("README: GPURT_TRACE writes into a FIFO, and refuses one with no reader without blocking") {
  // README (tracing): "a FIFO at PATH is written directly ... one with no reader is refused".
  test::Fixture f;
  const std::string dir = temp_dir(), fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  start_trace(fifo);
  traced_work(f);
  GPURT_REQUIRE_ERROR(stop_trace(), ErrorCategory::invalid_argument, "is a FIFO with no reader");
  CHECK_FALSE(tracing());

  // With a reader (opened first, without blocking; it drains the FIFO on a thread).
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(rd >= 0);
  std::atomic<bool> writer_done{false};
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (;;) {
      const ssize_t r = ::read(rd, buf, sizeof buf);
      if (r > 0) {
        got.append(buf, static_cast<std::size_t>(r));
        continue;
      }
      if (r == 0 && writer_done) break;  // the writer has closed and everything was read
      if (std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  start_trace(fifo);
  traced_work(f);
  std::size_t written = 0;
  try {
    written = stop_trace();
  } catch (...) {
    writer_done = true;
    reader.join();
    ::close(rd);
    throw;
  }
  writer_done = true;
  reader.join();
  ::close(rd);
  CHECK(written > 0);
  CHECK(trace_events(got).size() == written);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  trace_still_works(f, dir);
}

TEST_CASE("api-guide.md: a build's BuildInfo says what is wrong with a cache directory it cannot use") {
  // README (GPURT_CACHE_DIR): "it must be yours and not writable by others, or it is not used (one
  // warning)"; program.hpp BuildInfo::note says why a build was not cached. A directory of mode
  // 0777 is writable: the note must name the real problem, not "not writable".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its kernel of its own (the mock runs only its own)
  const std::string dir = temp_dir();
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  const CacheConfig saved = cache_config();
  set_cache_config(CacheConfig{true, dir});
  const std::string src = "GPURT_KERNEL void open_cache_" + std::to_string(::getpid()) +
                          "(GPURT_GLOBAL float* x) { x[gpurt_global_id(0)] += 1.0f; }\n";
  Program p;
  try {
    p = f.dev.build({SourceLanguage::portable, src, "open_cache.gpurt"});
  } catch (...) {
    set_cache_config(saved);
    throw;
  }
  set_cache_config(saved);
  const BuildInfo& info = p.build_info();
  INFO(info.note);
  CHECK(info.path == BuildPath::built);
  CHECK(info.note.find("is writable by group or others (mode 0777)") != std::string::npos);
  CHECK(info.note.find(dir) != std::string::npos);
  CHECK(info.note.find("not writable") == std::string::npos);
  // The program works.
  const std::size_t n = 37;
  auto h = test::random_vector<float>(n);
  auto x = f.dev.alloc<float>(n);
  f.q.copy(h, x);
  f.q.launch(p.kernel("open_cache_" + std::to_string(::getpid())), LaunchConfig::cover(Dim3(n), Dim3(1)), x);
  const auto back = f.q.read(x);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += back[i] != h[i] + 1.0f;
  CHECK(wrong == 0);
}

TEST_CASE("errors.md: an OpenCL C build log names the user's file and line, once") {
  // errors.md (build_failed): "the build log, with the line numbers and file name of your source
  // (ProgramSource::name) for every language" (OpenCL C logs once named PoCL's temporary file,
  // and "1 error generated." appeared twice in what()).
  test::Fixture f;
  bool takes_opencl_c = false;
  for (SourceLanguage l : f.dev.properties().languages) takes_opencl_c = takes_opencl_c || l == SourceLanguage::opencl_c;
  if (!takes_opencl_c) GPURT_SKIP(f.dev.selector() + " does not build OpenCL C");
  const std::string src =
      "__kernel void ok(__global float* x) { x[get_global_id(0)] = 1.0f; }\n"
      "\n"
      "__kernel void broken(__global float* x) { x[get_global_id(0)] = undeclared_thing; }\n";
  bool threw = false;
  try {
    (void)f.dev.build({SourceLanguage::opencl_c, src, "user_kernels.cl"});
  } catch (const Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_log().find("user_kernels.cl:3:") != std::string::npos);
    CHECK(e.build_log().find("tempfile") == std::string::npos);
    CHECK(e.build_log().find("<kernel>") == std::string::npos);
    const std::string what = e.what();
    const std::string once = "undeclared_thing";
    const auto first = what.find("user_kernels.cl:3:");
    REQUIRE(first != std::string::npos);
    CHECK(what.find("user_kernels.cl:3:", first + 1) == std::string::npos);  // the log appears once
    CHECK(what.find(once) != std::string::npos);
  }
  CHECK(threw);
  // The device still builds and runs.
  Program p = f.dev.build({SourceLanguage::opencl_c, "__kernel void ok(__global float* x) { x[get_global_id(0)] = 1.0f; }\n",
                           "user_ok.cl"});
  auto x = f.dev.alloc<float>(3);
  f.q.fill(x, 0.0f);
  f.q.launch(p.kernel("ok"), LaunchConfig::cover(Dim3(3), Dim3(1)), x);
  CHECK(f.q.read(x) == std::vector<float>(3, 1.0f));
}

TEST_CASE("kernel-language.md: GPURT_DYNAMIC_LOCAL without LaunchConfig::local_bytes says local_bytes is missing") {
  // kernel-language.md: "`GPURT_DYNAMIC_LOCAL(T, name)` | dynamic local memory, sized by
  // `LaunchConfig::local_bytes`". Launching with local_bytes = 0 once reported "takes 2 arguments
  // but 1 were given"; the message must name LaunchConfig::local_bytes.
  test::Fixture f;
  const char* src = R"(
GPURT_KERNEL void dyn_copy(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, GPURT_DYNAMIC_LOCAL(uint32_t, tmp)) {
  tmp[gpurt_local_id(0)] = in[gpurt_global_id(0)] + 1u;
  gpurt_local_barrier();
  out[gpurt_global_id(0)] = tmp[gpurt_local_id(0)];
}
)";
  Kernel k = f.dev.build({SourceLanguage::portable, src, "dyn_copy.gpurt"}).kernel("dyn_copy");
  const std::size_t groups = 5, size = 8, n = groups * size;
  const auto h = test::random_vector<std::uint32_t>(n, 0, 1000000);
  auto in = f.dev.alloc<std::uint32_t>(n), out = f.dev.alloc<std::uint32_t>(n);
  f.q.copy(h, in);
  f.q.fill(out, 0u);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(groups), Dim3(size)), in, out), ErrorCategory::invalid_argument,
                      "LaunchConfig::local_bytes is 0");
  CHECK(f.q.read(out) == std::vector<std::uint32_t>(n, 0u));  // nothing ran
  f.q.launch(k, LaunchConfig(Dim3(groups), Dim3(size), size * sizeof(std::uint32_t)), in, out);
  const auto back = f.q.read(out);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += back[i] != h[i] + 1u;
  CHECK(wrong == 0);
}
