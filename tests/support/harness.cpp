// The test harness: a main() for Catch2 2.x and 3.x that adds device listing for per-device
// CTest discovery, skip reporting through exit code 77, and the seeded random generator.
#define CATCH_CONFIG_RUNNER
#include "harness.hpp"

#if GPURT_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_case_info.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>

namespace gpurt::test {

namespace {
bool g_skipped = false;       // some case of this run was skipped (the exit code 77 of a one-case run)
bool g_case_skipped = false;  // the case running now was skipped
std::string g_case_log;       // GPURT_TEST_CASE_LOG, taken out of the environment at start
std::uint64_t g_seed = 0;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Prints "SELECTOR<TAB>BACKEND<TAB>available|unavailable<TAB>TEXT" per device, and one line per
// unavailable backend, for the CTest discovery script; a device's line then carries its vendor,
// platform and platform version, so that `gpurt conformance -d` matches selectors on what
// gpurt::selector_matches reads.
int list_devices() {
  try {
    for (const BackendInfo& b : backends()) {
      if (!b.available()) {
        std::string reason = b.reason + (b.native_text.empty() ? "" : " [" + b.native_text + "]");
        for (char& c : reason)
          if (c == '\t' || c == '\n' || c == ';') c = ' ';
        std::cout << b.name << "\t" << b.name << "\tunavailable\t" << reason << "\n";
      }
    }
    auto field = [](std::string text) {
      for (char& c : text)
        if (c == '\t' || c == '\n' || c == ';') c = ' ';
      return text;
    };
    for (const Device& d : devices()) {
      const DeviceProperties& p = d.properties();
      std::cout << d.selector() << "\t" << d.backend() << "\tavailable\t" << field(p.name) << "\t" << field(p.vendor)
                << "\t" << field(p.platform) << "\t" << field(p.platform_version) << "\n";
    }
    for (const BackendInfo& b : backends())
      for (const auto& n : b.notes) std::cerr << b.name << ": " << n << "\n";
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
}  // namespace

std::uint64_t seed() { return g_seed; }

// One generator per thread: the first thread to ask gets the run's seed, later ones a seed derived
// from it and the order in which they first asked (so a replay with the same seed is the same as
// far as the threads ask in the same order).
std::mt19937_64& rng() {
  static std::atomic<std::uint64_t> threads{0};
  thread_local std::mt19937_64 gen(g_seed ^ (threads.fetch_add(1) * 0x9e3779b97f4a7c15ull));
  return gen;
}

void mark_skipped(const std::string& reason) {
  g_skipped = true;
  g_case_skipped = true;
  std::cout << "SKIPPED: " << reason << std::endl;
}

Device device_under_test() {
  if (const char* sel = env("GPURT_TEST_DEVICE")) return device(sel);
  return default_device();
}

bool device_matches(const Device& d, const std::string& pattern) {
  return selector_matches(pattern, d.properties());
}

std::string temp_dir(const std::string& tag) {
  std::string tmpl = "/tmp/gpurt-" + tag + "-XXXXXX";
  REQUIRE(::mkdtemp(&tmpl[0]) != nullptr);
  return tmpl;
}

void matmul_reference(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t n,
                      std::size_t k, std::vector<double>& ref, std::vector<double>& magnitude) {
  ref.assign(m * n, 0.0);
  magnitude.assign(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0, mag = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(a[i * k + p]) * b[p * n + j];
        acc += t;
        mag += std::abs(t);
      }
      ref[i * n + j] = acc;
      magnitude[i * n + j] = mag;
    }
}

}  // namespace gpurt::test

namespace {
// With GPURT_TEST_CASE_LOG=FILE, one line per finished test case is appended to FILE and flushed
// at once: "passed|failed|skipped<TAB>seconds<TAB>name". scripts/run-tests-batched.py runs many
// cases in one process and reads it: a case that started but has no line crashed or hung the
// process, and the cases after it are run again in a fresh one.
class CaseLog final : public
#if GPURT_CATCH2_MAJOR >= 3
                      Catch::EventListenerBase {
 public:
  using Catch::EventListenerBase::EventListenerBase;
#else
                      Catch::TestEventListenerBase {
 public:
  using Catch::TestEventListenerBase::TestEventListenerBase;
#endif
  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    gpurt::test::g_case_skipped = false;
    start_ = std::chrono::steady_clock::now();
    if (std::FILE* f = file()) {
      std::fprintf(f, "started\t0\t%s\n", info.name.c_str());
      std::fflush(f);
    }
  }
  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    std::FILE* f = file();
    if (!f) return;
#if GPURT_CATCH2_MAJOR >= 3
    const std::string& name = stats.testInfo->name;
#else
    const std::string& name = stats.testInfo.name;
#endif
    const char* status = stats.totals.assertions.failed > 0 ? "failed"
                         : gpurt::test::g_case_skipped       ? "skipped"
                                                             : "passed";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(f, "%s\t%.3f\t%s\n", status, seconds, name.c_str());
    std::fflush(f);
  }

 private:
  static std::FILE* file() {
    static std::FILE* f = gpurt::test::g_case_log.empty() ? nullptr : std::fopen(gpurt::test::g_case_log.c_str(), "a");
    return f;
  }
  std::chrono::steady_clock::time_point start_{};
};
}  // namespace
CATCH_REGISTER_LISTENER(CaseLog)

int main(int argc, char** argv) {
  using namespace gpurt;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gpurt-list-devices") == 0) return test::list_devices();

  if (const char* s = test::env("GPURT_TEST_SEED")) {
    // README: "the random seed to replay" - a value that is not one would replay seed 0 unsaid.
    char* end = nullptr;
    errno = 0;
    test::g_seed = std::strtoull(s, &end, 0);
    if (end == s || *end != '\0' || errno != 0 || *s == '-') {
      std::cerr << "GPURT_TEST_SEED='" << s << "' is malformed: expected the number a run printed "
                << "(gpurt test seed: N)\n";
      return 2;
    }
  } else {
    test::g_seed = std::random_device{}();
  }
  std::cout << "gpurt test seed: " << test::g_seed << " (set GPURT_TEST_SEED=" << test::g_seed
            << " to replay)" << std::endl;

  // A per-device entry for a backend that cannot be used here is skipped with the reason.
  if (const char* sel = test::env("GPURT_TEST_DEVICE")) {
    try {
      const std::string backend_name = std::string(sel).substr(0, std::string(sel).find(':'));
      const BackendInfo b = gpurt::backend(backend_name);
      if (!b.available()) {
          std::cout << "SKIPPED: the " << backend_name << " backend is unavailable here ("
                    << to_string(b.status) << "): " << b.reason
                    << (b.native_text.empty() ? "" : " [" + b.native_text + "]") << std::endl;
          return 77;
        }
      std::cout << "device under test: " << device(sel).description() << std::endl;
    } catch (const Error& e) {
      std::cerr << e.what() << std::endl;
      return 1;
    }
  }

  // The case log is this process's alone: a case that runs another case in a child process
  // (tests/support/child.hpp) must not have the child's lines appended to it.
  if (const char* log = test::env("GPURT_TEST_CASE_LOG")) {
    test::g_case_log = log;
    ::unsetenv("GPURT_TEST_CASE_LOG");
  }
  const int rc = Catch::Session().run(argc, argv);
  if (rc == 77) return 1;  // Catch2 exits with the number of failures: 77 of them must not read as a skip
  if (rc == 0 && test::g_skipped) return 77;
  return rc;
}
