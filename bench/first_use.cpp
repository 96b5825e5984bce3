// gpurt-first-use: what the first moments of a process cost, gpurt against the raw API, each
// measured in a fresh process of its own (this program fork+execs itself for every measurement).
//
//   usage: gpurt-first-use [--device SELECTOR] [--floats N] [--runs R] [--json FILE]
//
// For the device (default: gpurt::default_device()), R times (default 3; the median is reported):
//  raw first copy       the vendor API (CUDA driver API / OpenCL) copies N floats (default 100 M,
//                       400 MB) from freshly allocated, filled pageable memory up, then down into
//                       fresh untouched pageable memory; each copy timed to completion
//  gpurt first copy     the same through gpurt, in a process whose compile cache holds the
//                       device's staging measurement (the steady state: made once, untimed) ...
//  gpurt first, no record  ... and in one whose cache directory is empty (the first process ever:
//                       defaults, measurement in the background)
//  gpurt warm           the same process's later copies of the same size (best of 3)
//  first touch          memset of as many fresh pageable bytes (what a first download's
//                       destination costs whoever writes it), for attributing the first download
//  pipeline             allocate 3 buffers, copy 2 inputs in, c = a + b, copy c out: from before
//                       the first call (gpurt::device / the driver's library) to c in host memory,
//                       kernel cached (gpurt's compile cache; CUDA: a cubin made beforehand;
//                       OpenCL: the driver's own cache), each side run once untimed first
// and prints the ratios the issue targets: first gpurt / first raw (rates, >= 2.5), first gpurt /
// warm gpurt (>= 0.8), pipeline gpurt / raw (time, <= 0.6). --json writes every figure.
// Exit status: 0 when every measurement ran (whatever the ratios), 1 when one failed, 2 on usage.
#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gpurt/gpurt.hpp>
#include <nlohmann/json.hpp>

#include "raw/first_use.hpp"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

using Fields = std::map<std::string, double>;

// A child's answer: one line "RESULT key=value ..." on stdout.
void report(const Fields& f) {
  std::string line = "RESULT";
  for (const auto& [k, v] : f) line += " " + k + "=" + std::to_string(v);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

const char* portable_vector_add = R"(
GPURT_KERNEL void vector_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* c, uint n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
})";

// ---- the children ----

Fields gpurt_copy(const std::string& selector, std::size_t floats, bool wait_measured) {
  const gpurt::Device dev = gpurt::device(selector);
  gpurt::Queue q = dev.create_queue();
  auto d = dev.alloc<float>(floats);
  std::unique_ptr<float[]> up(new float[floats]), down(new float[floats]);  // down: untouched
  for (std::size_t i = 0; i < floats; ++i) up[i] = static_cast<float>(i);
  Fields f;
  auto t0 = clock_type::now();
  q.copy(static_cast<const float*>(up.get()), d);
  q.finish();
  f["upload_s"] = seconds_since(t0);
  t0 = clock_type::now();
  q.copy(d, down.get());
  q.finish();
  f["download_s"] = seconds_since(t0);
  if (floats > 0 && (down[0] != up[0] || down[floats - 1] != up[floats - 1])) throw std::runtime_error("gpurt's first copy came back wrong");
  double warm_up = 1e30, warm_down = 1e30;
  for (int r = 0; r < 3; ++r) {
    t0 = clock_type::now();
    q.copy(static_cast<const float*>(up.get()), d);
    q.finish();
    warm_up = std::min(warm_up, seconds_since(t0));
    t0 = clock_type::now();
    q.copy(d, down.get());
    q.finish();
    warm_down = std::min(warm_down, seconds_since(t0));
  }
  f["warm_upload_s"] = warm_up;
  f["warm_download_s"] = warm_down;
  if (wait_measured) {  // the preparing run: until the staging measurement is stored (or 120 s)
    const auto t = clock_type::now();
    for (;;) {
      const gpurt::TransferStatistics s = gpurt::transfer_statistics();
      if (s.measurements_loaded + s.measurements_taken > 0 || seconds_since(t) > 120) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const gpurt::TransferStatistics s = gpurt::transfer_statistics();
  f["measurement_loaded"] = static_cast<double>(s.measurements_loaded);
  f["measurement_taken"] = static_cast<double>(s.measurements_taken);
  return f;
}

Fields gpurt_pipeline(const std::string& selector, std::size_t floats) {
  gpurt::bench::raw::PipelineData data(floats);
  Fields f;
  const auto t0 = clock_type::now();
  const gpurt::Device dev = gpurt::device(selector);
  gpurt::Queue q = dev.create_queue();
  f["init_s"] = seconds_since(t0);
  gpurt::Program program = dev.build({gpurt::SourceLanguage::portable, portable_vector_add, "vector_add"});
  gpurt::Kernel kernel = program.kernel("vector_add");
  {
    auto da = dev.alloc<float>(floats), db = dev.alloc<float>(floats), dc = dev.alloc<float>(floats);
    q.copy(data.a, da);
    q.copy(data.b, db);
    if (floats > 0) q.launch(kernel, gpurt::LaunchConfig::cover(kernel, floats), da, db, dc, static_cast<unsigned>(floats));
    q.copy(dc, data.c.get());
    q.finish();
    f["total_s"] = seconds_since(t0);
  }
  f["correct"] = data.correct();
  return f;
}

// The device as the parent needs it, one "FIELD name value" line each; for CUDA also the raw
// program's "cached kernel" (a cubin, written to `cubin_path`). A child of its own, so that the
// parent never holds a driver context: NVIDIA's OpenCL platform was missing in children of a
// process holding an NVIDIA OpenCL context (tests/events/contract_waits.cpp).
void describe(const std::string& selector, const std::string& cubin_path) {
  const gpurt::Device dev = selector.empty() ? gpurt::default_device() : gpurt::device(selector);
  const gpurt::DeviceProperties& p = dev.properties();
  std::size_t rank = 0;  // which of the devices of this platform and name (raw OpenCL finds it so)
  for (const gpurt::Device& d : gpurt::devices())
    if (d.properties().backend == p.backend && d.properties().platform == p.platform && d.properties().name == p.name &&
        d.properties().index < p.index)
      ++rank;
  const std::pair<const char*, std::string> fields[] = {
      {"selector", dev.selector()}, {"description", dev.description()}, {"backend", p.backend},
      {"uuid", p.uuid.empty() ? "-" : p.uuid}, {"index", std::to_string(p.index)}, {"platform", p.platform},
      {"name", p.name}, {"rank", std::to_string(rank)}};
  for (const auto& [k, v] : fields) std::printf("FIELD %s %s\n", k, v.c_str());
  if (p.backend == "cuda" && !cubin_path.empty()) {
    std::ofstream f(cubin_path, std::ios::binary);
    f << gpurt::bench::raw::cuda_vector_add_cubin(p.architecture);
    if (!f) throw std::runtime_error("cannot write " + cubin_path);
    std::printf("FIELD cubin %s\n", cubin_path.c_str());
  }
  std::fflush(stdout);
}

// The FIELD lines of a describe child, scanned once.
std::map<std::string, std::string> fields_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while ((at = text.find("FIELD ", at)) != std::string::npos) {
    const std::size_t key = at + 6, space = text.find(' ', key), end = text.find('\n', key);
    if (space == std::string::npos || end == std::string::npos || space > end) break;
    out[text.substr(key, space - key)] = text.substr(space + 1, end - space - 1);
    at = end;
  }
  return out;
}

// ---- the parent ----

struct Options {
  std::string selector;
  std::size_t floats = 100000000;
  int runs = 3;
  std::string json;
};

// Runs this program again as `args` in a fresh process (environment `env` added) and parses its
// RESULT line; throws with the child's output when it fails.
std::string run_child_text(const std::vector<std::string>& args,
                           const std::vector<std::pair<std::string, std::string>>& env) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  // The program by its real path, also as argv[0] (some drivers look at the program's name), with
  // standard input, output (the pipe) and error only: a driver's device files this process holds
  // must not leak into the child (NVIDIA's OpenCL platform was missing in children of a process
  // holding an NVIDIA OpenCL context; tests/support/child.hpp does the same).
  char exe[PATH_MAX] = "/proc/self/exe";
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) exe[len] = '\0';
  std::vector<std::string> a = args;
  a[0] = exe;
  std::vector<char*> argv;
  for (auto& x : a) argv.push_back(&x[0]);
  argv.push_back(nullptr);
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    bool replaced = false;
    for (const auto& kv : env) replaced |= v.compare(0, kv.first.size() + 1, kv.first + "=") == 0;
    if (!replaced) vars.push_back(v);
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& x : vars) envp.push_back(&x[0]);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, exe, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::string("cannot start ") + exe + ": " + std::strerror(spawned));
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("child '" + args[2] + "' failed (status " + std::to_string(status) + "): " + text);
  return text;
}

Fields run_child(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env) {
  const std::string text = run_child_text(args, env);
  const std::size_t at = text.find("RESULT");
  if (at == std::string::npos) throw std::runtime_error("child '" + args[2] + "' reported nothing: " + text);
  Fields f;
  std::size_t i = at + 6;
  while (i < text.size() && text[i] == ' ') {  // " key=value" pairs, scanned once
    const std::size_t eq = text.find('=', i), end = text.find_first_of(" \n", eq);
    if (eq == std::string::npos) break;
    f[text.substr(i + 1, eq - i - 1)] = std::strtod(text.substr(eq + 1, end - eq - 1).c_str(), nullptr);
    i = end == std::string::npos ? text.size() : end;
  }
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// An empty private directory (mode 0700) for a child's compile cache or the cubin, removed with
// what it holds when the program ends.
struct TempDirs {
  std::vector<std::string> made;
  ~TempDirs() {
    std::error_code ec;
    for (const std::string& d : made) std::filesystem::remove_all(d, ec);
  }
};
TempDirs g_temp_dirs;

std::string fresh_cache_dir() {
  char tmpl[] = "/tmp/gpurt-first-use-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  g_temp_dirs.made.push_back(tmpl);
  return tmpl;
}

int parent(const Options& o, const char* self) {
  const std::string cubin_path = fresh_cache_dir() + "/vector_add.cubin";
  std::vector<std::string> describe_args = {self, "--child", "describe", "--cubin", cubin_path};
  if (!o.selector.empty()) describe_args.insert(describe_args.end(), {"--device", o.selector});
  std::map<std::string, std::string> dev = fields_of(run_child_text(describe_args, {}));
  const std::string sel = dev["selector"], n = std::to_string(o.floats);
  if (sel.empty()) throw std::runtime_error("the describing child named no device");
  std::vector<std::string> native = {"--backend", dev["backend"], "--uuid",  dev["uuid"],     "--index",
                                     dev["index"],   "--platform",   dev["platform"], "--name", dev["name"],
                                     "--rank",       dev["rank"]};
  if (!dev["cubin"].empty()) native.insert(native.end(), {"--cubin", dev["cubin"]});
  auto args = [&](const char* kind, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {self, "--child", kind, "--device", sel, "--floats", n};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  std::printf("gpurt-first-use: %s, %zu floats (%.0f MB) per buffer, %d runs, each in a fresh process\n",
              dev["description"].c_str(), o.floats, o.floats * 4e-6, o.runs);
  // Untimed: the device's staging measurement stored in the compile cache, the kernel cached.
  (void)run_child(args("gpurt-copy", {"--wait-measured"}), {});
  (void)run_child(args("gpurt-pipeline"), {});
  (void)run_child(args("raw-pipeline", native), {});
  std::map<std::string, std::vector<double>> v;
  for (int r = 0; r < o.runs; ++r) {
    for (const auto& [k, x] : run_child(args("raw-copy", native), {})) v["raw_first_" + k].push_back(x);
    for (const auto& [k, x] : run_child(args("gpurt-copy"), {})) v["gpurt_" + k].push_back(x);
    const std::string empty = fresh_cache_dir();
    for (const auto& [k, x] : run_child(args("gpurt-copy"), {{"GPURT_CACHE_DIR", empty}}))
      v["gpurt_norecord_" + k].push_back(x);
    for (const auto& [k, x] : run_child(args("raw-pipeline", native), {})) v["raw_pipeline_" + k].push_back(x);
    for (const auto& [k, x] : run_child(args("gpurt-pipeline"), {})) v["gpurt_pipeline_" + k].push_back(x);
  }
  nlohmann::json j;
  j["device"] = dev["description"];
  j["selector"] = sel;
  j["floats"] = o.floats;
  j["bytes"] = o.floats * 4;
  j["runs"] = o.runs;
  Fields m;
  for (const auto& [k, x] : v) m[k] = median(x);
  const double gb = o.floats * 4e-9;
  auto rate = [&](const std::string& k) { return m[k] > 0 ? gb / m[k] : 0.0; };
  std::printf("%-34s %12s %12s\n", "GB/s (median)", "upload", "download");
  const std::pair<const char*, const char*> rows[] = {{"raw first copy", "raw_first_"},
                                                      {"gpurt first copy", "gpurt_"},
                                                      {"gpurt first copy, no record", "gpurt_norecord_"},
                                                      {"gpurt warm", "gpurt_warm_"}};
  for (const auto& [label, key] : rows) {
    const double u = rate(std::string(key) + "upload_s"), d = rate(std::string(key) + "download_s");
    std::printf("%-34s %12.2f %12.2f\n", label, u, d);
    j["rates_gbs"][key + std::string("upload")] = u;
    j["rates_gbs"][key + std::string("download")] = d;
  }
  auto ratio = [&](const char* name, double x, double target, bool at_least) {
    const bool met = at_least ? x >= target : x <= target;
    std::printf("%-52s %8.3f  (target %s %.2f: %s)\n", name, x, at_least ? ">=" : "<=", target, met ? "met" : "NOT met");
    j["ratios"][name] = {{"value", x}, {"target", target}, {"met", met}};
  };
  for (const char* dir : {"upload", "download"}) {
    const std::string s = std::string(dir) + "_s";
    ratio((std::string("first gpurt / first raw, ") + dir).c_str(), m["raw_first_" + s] / m["gpurt_" + s], 2.5, true);
    ratio((std::string("first gpurt (no record) / first raw, ") + dir).c_str(),
          m["raw_first_" + s] / m["gpurt_norecord_" + s], 2.5, true);
    ratio((std::string("first gpurt / warm gpurt, ") + dir).c_str(), m["gpurt_warm_" + s] / m["gpurt_" + s], 0.8, true);
  }
  std::printf("first touch of fresh pageable pages (memset, one thread): %.2f GB/s\n", rate("raw_first_touch_s"));
  j["rates_gbs"]["first_touch"] = rate("raw_first_touch_s");
  std::printf("pipeline ms (median): raw %.2f (init %.2f), gpurt %.2f (init %.2f)\n", m["raw_pipeline_total_s"] * 1e3,
              m["raw_pipeline_init_s"] * 1e3, m["gpurt_pipeline_total_s"] * 1e3, m["gpurt_pipeline_init_s"] * 1e3);
  ratio("pipeline gpurt / raw (time)", m["gpurt_pipeline_total_s"] / m["raw_pipeline_total_s"], 0.6, false);
  for (const auto& [k, x] : m) j["median"][k] = x;
  for (const auto& [k, x] : v) j["samples"][k] = x;
  const bool correct = m["raw_pipeline_correct"] == 1 && m["gpurt_pipeline_correct"] == 1;
  j["pipeline_correct"] = correct;
  if (!correct) std::printf("FAILED: a pipeline's result differs from the CPU\n");
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) throw std::runtime_error("cannot write " + o.json);
    std::printf("json: %s\n", o.json.c_str());
  }
  return correct ? 0 : 1;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "gpurt-first-use: %s\nusage: gpurt-first-use [--device SELECTOR] [--floats N] [--runs R] [--json FILE]\n",
               why.c_str());
  std::exit(2);
}

std::size_t number(const std::string& flag, const std::string& v, std::size_t max) {
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos || std::stoull(v) > max)
    usage(flag + " expects a whole number up to " + std::to_string(max) + ", not '" + v + "'");
  return std::stoull(v);
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  std::string child, cubin_path;
  bool wait_measured = false;
  gpurt::bench::raw::NativeDevice nd;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") o.selector = value();
    else if (a == "--floats") o.floats = std::max<std::size_t>(1, number(a, value(), std::size_t(1) << 34));
    else if (a == "--runs") o.runs = static_cast<int>(std::max<std::size_t>(1, number(a, value(), 100)));
    else if (a == "--json") o.json = value();
    else if (a == "--child") child = value();
    else if (a == "--wait-measured") wait_measured = true;
    else if (a == "--backend") nd.backend = value();
    else if (a == "--uuid") nd.uuid = value() == "-" ? "" : argv[i];
    else if (a == "--index") nd.index = number(a, value(), 1u << 20);
    else if (a == "--platform") nd.platform = value();
    else if (a == "--name") nd.name = value();
    else if (a == "--rank") nd.rank = number(a, value(), 1u << 20);
    else if (a == "--cubin") cubin_path = value();
    else usage("unknown argument '" + a + "'");
  }
  if (child.empty()) return parent(o, argv[0]);
  if (child == "describe") describe(o.selector, cubin_path);
  else if (child == "gpurt-copy") report(gpurt_copy(o.selector, o.floats, wait_measured));
  else if (child == "gpurt-pipeline") report(gpurt_pipeline(o.selector, o.floats));
  else if (child == "raw-copy") {
    const auto r = gpurt::bench::raw::first_copy(nd, o.floats);
    // What the first touch of as many fresh pageable pages costs by itself (one thread, memset):
    // a first download pays it for its destination, whoever copies.
    std::unique_ptr<float[]> fresh(new float[o.floats]);
    const auto t0 = clock_type::now();
    std::memset(fresh.get(), 1, o.floats * sizeof(float));
    const double touch = seconds_since(t0);
    volatile float sink = o.floats ? fresh[o.floats / 2] : 0.0f;
    (void)sink;
    report({{"upload_s", r.upload_s}, {"download_s", r.download_s}, {"touch_s", touch}});
  } else if (child == "raw-pipeline") {
    std::string cubin;
    if (!cubin_path.empty()) {
      std::ifstream f(cubin_path, std::ios::binary);
      cubin.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    gpurt::bench::raw::PipelineData data(o.floats);
    const auto r = gpurt::bench::raw::pipeline(nd, data, cubin);
    report({{"total_s", r.total_s}, {"init_s", r.init_s}, {"correct", r.correct ? 1.0 : 0.0}});
  } else
    usage("unknown child '" + child + "'");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpurt-first-use: %s\n", e.what());
  return 1;
}
