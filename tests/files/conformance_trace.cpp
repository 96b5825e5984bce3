// Timeline tracing on every device: host spans for every call, device spans for every command on
// the host's clock, failures marked, and nothing recorded while tracing is off.
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "gpurt/graph.hpp"
#include "gpurt/library.hpp"
#include "gpurt/trace.hpp"

using namespace gpurt;

namespace {
std::string trace_path() {
  char tmpl[] = "/tmp/gpurt-trace-test-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return std::string(tmpl) + "/trace.json";
}

nlohmann::json spans(const std::string& path, const std::string& cat) {
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json t = nlohmann::json::parse(in);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : t.at("traceEvents"))
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat) out.push_back(e);
  return out;
}

const nlohmann::json* find(const nlohmann::json& list, const std::string& name) {
  for (const auto& e : list)
    if (e.at("name").get<std::string>() == name) return &e;
  return nullptr;
}
}  // namespace

TEST_CASE("trace: host and device spans of a pipeline, on one clock") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::string path = trace_path();
  const std::size_t n = 1000003;
  const auto h = test::random_vector<float>(n);
  start_trace(path);
  CHECK(tracing());
  auto x = f.dev.alloc<float>(n), y = f.dev.alloc<float>(n);
  f.q.copy(h, x);
  lib::fill(f.q, y, 1.0f);
  lib::axpy(f.q, 2.0f, x, y);
  std::vector<float> back(n);
  f.q.copy(y, back);
  f.q.finish();
  GPURT_REQUIRE_ERROR(f.dev.alloc<char>(f.dev.properties().max_allocation + 1), ErrorCategory::out_of_device_memory,
                      "largest single allocation");
  const std::size_t written = stop_trace();
  CHECK_FALSE(tracing());
  CHECK(written > 0);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += back[i] != 2.0f * h[i] + 1.0f;
  CHECK(wrong == 0);

  const nlohmann::json host = spans(path, "host"), device = spans(path, "device");
  INFO(host.dump(1));
  for (const char* name : {"alloc", "copy host to device pageable", "launch gpurt_axpy", "copy device to host pageable",
                           "finish"})
    CHECK(find(host, name) != nullptr);
  const nlohmann::json* launch_host = find(host, "launch gpurt_axpy");
  const nlohmann::json* launch_dev = find(device, "launch gpurt_axpy");
  const nlohmann::json* finish = find(host, "finish");
  REQUIRE(launch_host);
  REQUIRE(finish);
  REQUIRE(launch_dev);  // the fixture's queue keeps timing on
  CHECK(launch_dev->at("pid") != launch_host->at("pid"));
  CHECK(launch_dev->at("dur").get<double>() >= 0);
  // One clock: the kernel ran after it was enqueued and before finish() returned (to within the
  // clock alignment, measured to a few microseconds; 2 ms allowed for slow drivers).
  const double enqueued = launch_host->at("ts").get<double>();
  const double ran = launch_dev->at("ts").get<double>();
  const double finished = finish->at("ts").get<double>() + finish->at("dur").get<double>();
  CHECK(ran + 2000 >= enqueued);
  CHECK(ran + launch_dev->at("dur").get<double>() <= finished + 2000);
  // The failed allocation is in the trace, marked.
  bool failed_alloc = false;
  for (const auto& e : host)
    if (e.at("name") == "alloc" && e.at("args").value("failed", false)) failed_alloc = true;
  CHECK(failed_alloc);
}

TEST_CASE("trace: nothing is recorded while tracing is off, and bad paths are errors") {
  test::Fixture f;
  CHECK_FALSE(tracing());
  CHECK(stop_trace() == 0);
  GPURT_REQUIRE_ERROR(start_trace(""), ErrorCategory::invalid_argument, "trace.json");
  const std::string path = "/nonexistent-dir-for-gpurt/trace.json";
  start_trace(path);
  auto x = f.dev.alloc<int>(10);
  f.q.fill(x, 3);
  f.q.finish();
  GPURT_REQUIRE_ERROR(stop_trace(), ErrorCategory::internal, "could not write the trace");
  CHECK_FALSE(tracing());
  CHECK(f.q.read(x) == std::vector<int>(10, 3));  // still usable
}

TEST_CASE("trace: names that are not valid UTF-8 are written as documented escapes, and the file is JSON") {
  // trace.hpp, "Names in the trace": every text the trace records "is recorded up to its first NUL
  // byte and written so that the file is always valid JSON in UTF-8: valid UTF-8 ... is kept byte for
  // byte ...; each byte that is not part of a valid UTF-8 sequence ... is written as the four
  // characters \xHH ... Such a name never makes stop_trace() fail." error.hpp: gpurt::Error is the
  // one exception type (stop_trace threw nlohmann's type_error 316 and wrote nothing).
  test::Fixture f;
  const std::string path = trace_path();
  using namespace std::string_literals;
  const std::vector<std::pair<std::string, std::string>> names = {
      {"span \xFF", "span \\xFF"},                          // never valid
      {"span \x80 lone", "span \\x80 lone"},                // a continuation byte with no lead
      {"span \xE6\x97", "span \\xE6\\x97"},                 // 日 cut short at the end
      {"span \xE6\x97x", "span \\xE6\\x97x"},               // ... and in the middle
      {"span \xC0\xAF overlong", "span \\xC0\\xAF overlong"},  // '/' in an overlong form
      {"span \xED\xA0\x80 surrogate", "span \\xED\\xA0\\x80 surrogate"},
      {"span \xF4\x90\x80\x80 past U+10FFFF", "span \\xF4\\x90\\x80\\x80 past U+10FFFF"},
      {"span \xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80", "span \xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80"},
      {"span \"quoted\" back\\slash \t tab", "span \"quoted\" back\\slash \t tab"},
      {"span nul\0after \xFF"s, "span nul"},  // up to the first NUL
  };
  start_trace(path);
  for (const auto& n : names) {
    TraceSpan span(f.q, n.first);
  }
  std::string program_name = "prog \xFF\x80";
  bool built = test::missing(f.dev, test::Need::portable_dialect).empty();
  if (built) (void)f.dev.build({SourceLanguage::portable, test::portable_vector_add, program_name});
  auto x = f.dev.alloc<float>(4);
  Recording rec(f.dev, "graph \xFF\xC0\xAF");
  rec.fill(x, 2.0f);
  const Graph g = rec.finish();
  f.q.replay(g);
  f.q.finish();
  std::size_t written = 0;
  REQUIRE_NOTHROW(written = stop_trace());
  CHECK(written > 0);

  const nlohmann::json host = spans(path, "host");  // parses: valid JSON, valid UTF-8
  INFO(host.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
  for (const auto& n : names) {
    INFO("expected " << n.second);
    CHECK(find(host, n.second) != nullptr);
  }
  if (built) CHECK(find(host, "build prog \\xFF\\x80") != nullptr);
  CHECK(find(host, "replay graph \\xFF\\xC0\\xAF") != nullptr);
  CHECK(f.q.read(x) == std::vector<float>(4, 2.0f));
}
