// Contract cases (cache): each quotes the promise it tries to break and runs on every device.
//
// Every case points the compile cache at a private directory of its own (mkdtemp: mode 0700) with
// set_cache_config, the API form of GPURT_CACHE_DIR (which is read once per process), and checks
// results by running the kernel and comparing with values computed here from fresh random inputs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <sstream>

#include "fixture.hpp"

using namespace gpurt;

namespace {

std::string private_dir() { return test::temp_dir("contract-cache"); }

std::uint32_t fresh_constant() { return test::random_vector<std::uint32_t>(1, 1, 1u << 20)[0]; }

// A portable kernel writing `expression` (which may use macros) as uint32_t to out[0].
std::string probe_source(const std::string& preamble, const std::string& expression) {
  return preamble + "\nGPURT_KERNEL void probe(GPURT_GLOBAL uint32_t* out) { out[0] = (uint32_t)(" + expression +
         "); }\n";
}

std::uint32_t run_probe(test::Fixture& f, const Program& p) {
  auto out = f.dev.alloc<std::uint32_t>(1);
  f.q.launch(p.kernel("probe"), LaunchConfig(Dim3(1), Dim3(1)), out);
  return f.q.read(out)[0];
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Builds `src` (cached under `name`), runs it, and returns the entry's path.
std::string cached_entry(test::Fixture& f, const std::string& src, const std::string& name, std::uint32_t expected) {
  Program p = f.dev.build({SourceLanguage::portable, src, name});
  INFO(p.build_info().note);
  REQUIRE(p.build_info().path == BuildPath::built_and_cached);
  CHECK(run_probe(f, p) == expected);
  return p.build_info().cache_entry;
}

// After the entry of `src` was replaced by something the cache must refuse: the next build is
// refused (counted), rebuilt and stored afresh as a regular file, gives the right result, and the
// build after that loads it.
void check_refused_and_rebuilt(test::Fixture& f, const std::string& src, const std::string& name,
                               const std::string& entry, std::uint32_t expected) {
  const CacheStatistics before = cache_statistics();
  Program p = f.dev.build({SourceLanguage::portable, src, name});
  INFO(p.build_info().note);
  CHECK(p.build_info().path == BuildPath::built_and_cached);
  CHECK(cache_statistics().refused == before.refused + 1);
  CHECK(cache_statistics().hits == before.hits);
  CHECK(run_probe(f, p) == expected);
  struct stat st {};
  REQUIRE(::lstat(entry.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(static_cast<std::uint64_t>(st.st_size) < max_cache_entry_bytes);
  Program again = f.dev.build({SourceLanguage::portable, src, name});
  CHECK(again.build_info().path == BuildPath::loaded_from_cache);
  CHECK(run_probe(f, again) == expected);
}

}  // namespace

// --- includes ---------------------------------------------------------------------------------

TEST_CASE("cache.hpp: an include spelled any way the preprocessor allows is never served stale") {
  // "A program that may read other files is not cached: its source has an #include, #include_next,
  // #import or #embed directive (found as the preprocessor finds them: "# include",
  // "#/*c*/include", "%:include", lines joined by backslash-newline ...) ... such a program is built
  // every time, so a changed header always takes effect."
  // README: "Program::build_info() says whether a build was loaded from it".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  const char* spellings[] = {
      "# include \"h.h\"",
      "#  include \"h.h\"",
      "#\tinclude \"h.h\"",
      "#/*c*/include \"h.h\"",
      "  /* before */ # /* between */ include \"h.h\"",
      "/* a comment that\n   ends on this line */ #include \"h.h\"",
      "#\\\ninclude \"h.h\"",
      "#inc\\\nlude \"h.h\"",
      "%:include \"h.h\"",
  };
  for (const char* spelling : spellings) {
    INFO("spelled: " << spelling);
    const std::string headers = private_dir();
    set_cache_config({true, private_dir()});
    BuildOptions include;
    include.flags.push_back("-I" + headers);
    const std::uint32_t c = fresh_constant(), first = fresh_constant(), second = first + 1 + fresh_constant();
    const std::string src = probe_source(spelling, "HVAL + " + std::to_string(c) + "u");
    write_file(headers + "/h.h", "#define HVAL " + std::to_string(first) + "u\n");
    Program a = f.dev.build({SourceLanguage::portable, src, "include.gpurt"}, include);
    CHECK(a.build_info().path == BuildPath::built);
    CHECK(a.build_info().note.find("include") != std::string::npos);
    CHECK(run_probe(f, a) == first + c);
    write_file(headers + "/h.h", "#define HVAL " + std::to_string(second) + "u\n");
    Program b = f.dev.build({SourceLanguage::portable, src, "include.gpurt"}, include);
    CHECK(b.build_info().path == BuildPath::built);
    CHECK(run_probe(f, b) == second + c);  // the header as it is now, not as it was cached
  }
  // Still usable, and a source without includes is cached as before.
  set_cache_config({true, private_dir()});
  const std::uint32_t c = fresh_constant();
  cached_entry(f, probe_source("", std::to_string(c) + "u"), "plain.gpurt", c);
}

TEST_CASE("cache.hpp: a header that appears between builds is seen by __has_include") {
  // "... or a __has_include / __has_embed test ... such a program is built every time, so a changed
  // header always takes effect."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  const std::string headers = private_dir();
  set_cache_config({true, private_dir()});
  BuildOptions include;
  include.flags.push_back("-I" + headers);
  const std::uint32_t without = fresh_constant(), with = without + 1 + fresh_constant();
  const std::string src = probe_source("#if __has_include(\"maybe.h\")\n#define PICK " + std::to_string(with) +
                                           "u\n#else\n#define PICK " + std::to_string(without) + "u\n#endif",
                                       "PICK");
  Program a = f.dev.build({SourceLanguage::portable, src, "has_include.gpurt"}, include);
  CHECK(a.build_info().path == BuildPath::built);
  CHECK(run_probe(f, a) == without);
  write_file(headers + "/maybe.h", "\n");
  Program b = f.dev.build({SourceLanguage::portable, src, "has_include.gpurt"}, include);
  CHECK(b.build_info().path == BuildPath::built);
  CHECK(run_probe(f, b) == with);
}

// --- defines and names -----------------------------------------------------------------------

TEST_CASE("device.hpp: a define's value stays one value, never another option") {
  // "given to the compiler as "#define NAME VALUE" lines ahead of the source (never as options, so
  // a value such as "1 -DOTHER" or "unsigned int" stays one value); an empty value defines NAME as
  // 1, as -DNAME does."
  test::Fixture f;
  set_cache_config({true, private_dir()});
  const std::uint32_t a = fresh_constant(), b = fresh_constant();
  BuildOptions opts;
  opts.defines = {{"UNUSED", "1 -DINJECTED"},
                  {"T", "unsigned int"},
                  {"EXPR", "(" + std::to_string(a) + "u + 3u) * 4u"},
                  {"COMMENTED", std::to_string(b) + "u /* a closed comment */ // and a line comment"},
                  {"FLAG", ""}};
  const std::string src = probe_source("#ifdef INJECTED\n#define RESULT 0u\n#else\n#define RESULT ((T)(EXPR) + COMMENTED + FLAG)\n#endif",
                                       "RESULT");
  const std::uint32_t expected = (a + 3u) * 4u + b + 1u;
  Program p = f.dev.build({SourceLanguage::portable, src, "defines.gpurt"}, opts);
  CHECK(run_probe(f, p) == expected);
  // The same through the cache: the defines are part of the key, and a changed value is rebuilt.
  CHECK(f.dev.build({SourceLanguage::portable, src, "defines.gpurt"}, opts).build_info().path ==
        BuildPath::loaded_from_cache);
  opts.defines[2].second = "(" + std::to_string(a) + "u + 4u) * 4u";
  Program changed = f.dev.build({SourceLanguage::portable, src, "defines.gpurt"}, opts);
  CHECK(changed.build_info().path == BuildPath::built_and_cached);
  CHECK(run_probe(f, changed) == expected + 4u);
}

TEST_CASE("device.hpp: defines that are not a name and a one-line value are invalid_argument") {
  // "Device::build throws invalid_argument for a name that is not a C identifier, and for a value
  // with a line break or NUL, ending in a backslash, or opening a /* comment it does not close."
  test::Fixture f;
  set_cache_config({true, private_dir()});
  const std::string src = probe_source("", "V");
  auto build_with = [&](const std::string& name, const std::string& value) {
    BuildOptions o;
    o.defines = {{name, value}};
    return f.dev.build({SourceLanguage::portable, src, "bad-define.gpurt"}, o);
  };
  for (const char* name : {"", "1V", "A B", "V=1", "-DV", "V(x)", "V\n#error x", "$V"}) {
    INFO("name: " << name);
    GPURT_REQUIRE_ERROR(build_with(name, "1"), ErrorCategory::invalid_argument, "is not an identifier");
  }
  const std::string values[] = {"1\n#error injected", "1\r", std::string("1\0 + 2", 6)};
  for (const std::string& value : values)
    GPURT_REQUIRE_ERROR(build_with("V", value), ErrorCategory::invalid_argument, "line break");
  for (const char* value : {"1 \\", "1\\  ", "1 ?\?/"})
    GPURT_REQUIRE_ERROR(build_with("V", value), ErrorCategory::invalid_argument, "backslash");
  for (const char* value : {"1 /* open", "1 /* a */ /* b"})
    GPURT_REQUIRE_ERROR(build_with("V", value), ErrorCategory::invalid_argument, "does not close");
  // Still usable: a good define builds and runs.
  const std::uint32_t v = fresh_constant();
  CHECK(run_probe(f, build_with("V", std::to_string(v) + "u")) == v);
}

TEST_CASE("device.hpp: defines on a ptx build are refused, not ignored") {
  // "Source languages only: a ptx or cubin build with defines throws invalid_argument."
  test::Fixture f;
  if (f.dev.backend() != "cuda") GPURT_SKIP("PTX is a CUDA input");
  BuildOptions o;
  o.defines = {{"V", "1"}};
  GPURT_REQUIRE_ERROR(f.dev.build({SourceLanguage::ptx, ".version 7.0\n", "d.ptx"}, o),
                      ErrorCategory::invalid_argument, "defines");
  const std::uint32_t v = fresh_constant();
  CHECK(run_probe(f, f.dev.build({SourceLanguage::portable, probe_source("", std::to_string(v) + "u"), "ok"})) == v);
}

TEST_CASE("device.hpp: a program's name can never end the #line string or line") {
  // "How build logs refer to it (the file name in #line directives). Any text: quotes, backslashes
  // and question marks are escaped and control characters (line breaks) become '_' before it
  // reaches the compiler, so a name can never end the string or the line it is placed in."
  test::Fixture f;
  set_cache_config({true, private_dir()});
  const std::string names[] = {"evil\"\n#error injected by the name\n\"",
                               "ends in a backslash\\",
                               "\\\n#error after a continuation",
                               "trigraph ?\?/",
                               "trigraph ?\?=error",
                               "tab\tand\rcarriage return",
                               "\"",
                               "",
                               std::string("nul\0inside", 10)};
  const std::uint32_t v = fresh_constant();
  BuildOptions with_define;
  with_define.defines = {{"V", std::to_string(v) + "u"}};
  for (const std::string& name : names) {
    INFO("name: " << name);
    Program plain = f.dev.build({SourceLanguage::portable, probe_source("", "7u"), name});
    CHECK(run_probe(f, plain) == 7u);
    // With defines the core writes its own #line too; native sources get it only then.
    Program defined = f.dev.build({SourceLanguage::portable, probe_source("", "V"), name}, with_define);
    CHECK(run_probe(f, defined) == v);
    const std::string native = f.dev.backend() == "cuda"
                                   ? "extern \"C\" __global__ void probe(unsigned* o) { o[0] = V; }\n"
                                   : "__kernel void probe(__global uint* o) { o[0] = V; }\n";
    Program native_program = f.dev.build(
        {f.dev.backend() == "cuda" ? SourceLanguage::cuda_cpp : SourceLanguage::opencl_c, native, name}, with_define);
    CHECK(run_probe(f, native_program) == v);
  }
}

TEST_CASE("errors.md: a failed build with defines names them in build_options") {
  // errors.md: "`build_failed` | a program did not compile or load; `build_log()` and
  // `build_options()` say why". Defines are no longer options, so the core names them there.
  test::Fixture f;
  BuildOptions o;
  o.defines = {{"SOME_DEFINE", "2 + 3"}};
  bool threw = false;
  try {
    f.dev.build({SourceLanguage::portable, probe_source("", "undefined_identifier"), "broken.gpurt"}, o);
  } catch (const Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_options().find("-DSOME_DEFINE=2 + 3") != std::string::npos);
    CHECK(e.build_log().find("undefined_identifier") != std::string::npos);
  }
  CHECK(threw);
  CHECK(run_probe(f, f.dev.build({SourceLanguage::portable, probe_source("", "SOME_DEFINE"), "fixed.gpurt"}, o)) == 5u);
}

// --- what is at an entry's path --------------------------------------------------------------

TEST_CASE("cache.hpp: a FIFO at an entry's path neither blocks nor fails a build") {
  // "an entry is used only when it is a regular file (not a link, FIFO or device: opened without
  // following links and without blocking) ... A bad entry is rebuilt."
  // errors.md: "The compile cache never fails a build."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  set_cache_config({true, private_dir()});
  const std::uint32_t c = fresh_constant();
  const std::string src = probe_source("", std::to_string(c) + "u");
  const std::string entry = cached_entry(f, src, "fifo.gpurt", c);
  REQUIRE(::unlink(entry.c_str()) == 0);
  REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
  const CacheStatistics before = cache_statistics();
  auto build = std::async(std::launch::async, [&] { return f.dev.build({SourceLanguage::portable, src, "fifo.gpurt"}); });
  // A liveness guard, not a timing check: a build that opens the FIFO for reading waits for a
  // writer forever. If it has not returned after minutes, fail and give it a writer so the test ends.
  if (build.wait_for(std::chrono::minutes(3)) != std::future_status::ready) {
    FAIL_CHECK("Device::build is blocked on the FIFO at " << entry);
    const int w = ::open(entry.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  Program p = build.get();
  CHECK(p.build_info().path == BuildPath::built_and_cached);
  CHECK(cache_statistics().refused == before.refused + 1);
  CHECK(run_probe(f, p) == c);
  struct stat st {};
  REQUIRE(::lstat(entry.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));  // replaced by a real entry
  CHECK(f.dev.build({SourceLanguage::portable, src, "fifo.gpurt"}).build_info().path == BuildPath::loaded_from_cache);
}

TEST_CASE("cache.hpp: a link at an entry's path is neither followed to another program nor written through") {
  // "Entries are written atomically to files created exclusively (never through a planted link),
  // and checked when read: an entry is used only when it is a regular file (not a link ...)"
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  set_cache_config({true, private_dir()});
  const std::uint32_t a = fresh_constant(), b = a + 1 + fresh_constant();
  const std::string src_a = probe_source("", std::to_string(a) + "u"), src_b = probe_source("", std::to_string(b) + "u");
  const std::string entry_a = cached_entry(f, src_a, "a.gpurt", a);
  const std::string entry_b = cached_entry(f, src_b, "b.gpurt", b);
  // b's entry now points at a's (valid) entry: loading through it would run a's code for b.
  REQUIRE(::unlink(entry_b.c_str()) == 0);
  REQUIRE(::symlink(entry_a.c_str(), entry_b.c_str()) == 0);
  check_refused_and_rebuilt(f, src_b, "b.gpurt", entry_b, b);
  CHECK(run_probe(f, f.dev.build({SourceLanguage::portable, src_a, "a.gpurt"})) == a);  // a's entry intact

  // A link to a file outside the cache, and a dangling one: the store replaces the link itself.
  const std::string outside = private_dir();
  const std::string victim = outside + "/victim.txt", absent = outside + "/absent.txt";
  const std::string victim_text = "not a cache entry " + std::to_string(fresh_constant());
  write_file(victim, victim_text);
  REQUIRE(::unlink(entry_b.c_str()) == 0);
  REQUIRE(::symlink(victim.c_str(), entry_b.c_str()) == 0);
  check_refused_and_rebuilt(f, src_b, "b.gpurt", entry_b, b);
  CHECK(read_file(victim) == victim_text);
  REQUIRE(::unlink(entry_b.c_str()) == 0);
  REQUIRE(::symlink(absent.c_str(), entry_b.c_str()) == 0);
  check_refused_and_rebuilt(f, src_b, "b.gpurt", entry_b, b);
  CHECK(::access(absent.c_str(), F_OK) != 0);  // nothing created through the link
}

TEST_CASE("cache.hpp: an entry larger than the bound is refused unread and rebuilt, never fatal") {
  // "an entry is used only when it is ... at most max_cache_entry_bytes of payload ... A bad entry
  // is rebuilt." CacheStatistics::refused counts entries "larger than max_cache_entry_bytes".
  // errors.md: "The compile cache never fails a build."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  set_cache_config({true, private_dir()});
  const std::uint32_t c = fresh_constant();
  const std::string src = probe_source("", std::to_string(c) + "u");
  const std::string entry = cached_entry(f, src, "huge.gpurt", c);
  const std::string valid = read_file(entry);
  REQUIRE(valid.size() > 48);
  // Sparse files: they cost no disk. The first keeps the valid entry's header and payload at its
  // start; reading any of them whole would need gigabytes of memory.
  const std::uint64_t sizes[] = {std::uint64_t(8) << 30, max_cache_entry_bytes + 4096};
  for (const std::uint64_t size : sizes) {
    INFO("entry of " << size << " bytes");
    REQUIRE(::unlink(entry.c_str()) == 0);
    const int fd = ::open(entry.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    const bool written = ::write(fd, valid.data(), valid.size()) == static_cast<ssize_t>(valid.size());
    const bool grown = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    ::close(fd);
    REQUIRE(written);
    if (!grown) GPURT_SKIP("this file system cannot hold a sparse file of " + std::to_string(size) + " bytes");
    check_refused_and_rebuilt(f, src, "huge.gpurt", entry, c);  // an exception here fails the case
  }
}

// It changes the plugin file's modification time, which is part of every cache key: run alone.
TEST_CASE("cache.hpp: a rebuilt plugin never loads programs its predecessor built - runs alone") {
  // "The key covers ... gpurt's version and the backend's plugin library file (path, size and
  // modification time, so a rebuilt plugin never loads programs its predecessor built)."
  // The plugin's prelude is compiled into it, so a rebuilt plugin may turn the same text into
  // different code; a new modification time stands for a rebuild here.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);  // its probe kernels (the mock runs only its own)
  set_cache_config({true, private_dir()});
  const std::string plugin = backend(f.dev.backend()).plugin_path;
  struct stat st {};
  REQUIRE(::stat(plugin.c_str(), &st) == 0);
  const std::uint32_t c = fresh_constant();
  const std::string src = probe_source("", std::to_string(c) + "u");
  const std::string entry = cached_entry(f, src, "plugin.gpurt", c);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  if (::utimensat(AT_FDCWD, plugin.c_str(), times, 0) != 0) GPURT_SKIP("cannot change the plugin's modification time");
  Program rebuilt = f.dev.build({SourceLanguage::portable, src, "plugin.gpurt"});
  times[1] = st.st_mtim;
  REQUIRE(::utimensat(AT_FDCWD, plugin.c_str(), times, 0) == 0);  // as it was
  CHECK(rebuilt.build_info().path == BuildPath::built_and_cached);
  CHECK(rebuilt.build_info().cache_entry != entry);
  CHECK(run_probe(f, rebuilt) == c);
  Program again = f.dev.build({SourceLanguage::portable, src, "plugin.gpurt"});
  CHECK(again.build_info().path == BuildPath::loaded_from_cache);
  CHECK(again.build_info().cache_entry == entry);
}
