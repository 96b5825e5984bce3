// `gpurt conformance`: runs the conformance suite against this machine's devices and prints a
// matrix of case x device (pass / FAIL / skip, with reasons), totals per device, or JSON.
//
// Each (case, device) runs in its own process of the suite binary (gpurt_conformance, found next
// to this tool in a build tree, under libexec/gpurt in an installed prefix, or given with --suite),
// exactly as CTest runs it, several at a time.
#include <fcntl.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <ostream>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpurt/gpurt.hpp"

extern char** environ;

namespace gpurt::tool {

namespace {

struct Column {
  std::string selector;  // "opencl:0", or a backend name when it is unavailable
  std::string title;     // what the matrix shows
  std::string unavailable_reason;
  DeviceProperties props;  // what selectors are matched against: backend, index, name, vendor, platform
};

struct Outcome {
  enum class Kind { pass, fail, skip } kind = Kind::fail;
  std::string detail;  // skip reason or the end of a failure's output
};


std::string catch_spec(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '\\' || c == ',' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

// Runs the program argv[0] with `argv` (no shell: nothing in a selector or case name is ever
// interpreted), with NAME=VALUE entries of `env` added to this process's environment; returns its
// exit status (-1 when it could not run or did not exit) and its stdout and stderr together.
int run(const std::vector<std::string>& argv, const std::vector<std::string>& env, std::string& output) {
  output.clear();
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : env) replaced = replaced || x.compare(0, name.size() + 1, name + "=") == 0;
    if (!replaced) environment.push_back(entry);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return -1;
  }
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string own_directory() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string s(path, static_cast<std::size_t>(n));
  return s.substr(0, s.rfind('/'));
}

// The suite next to this tool (a build tree), else where `cmake --install` puts it relative to the
// tool (GPURT_INSTALLED_SUITE, set by cmake/GpurtInstall.cmake).
std::string default_suite() {
  const std::string beside = own_directory() + "/gpurt_conformance";
#ifdef GPURT_INSTALLED_SUITE
  if (::access(beside.c_str(), X_OK) != 0) return own_directory() + "/" GPURT_INSTALLED_SUITE;
#endif
  return beside;
}

std::vector<std::string> list_cases(const std::string& suite) {
  std::string out;
  for (const std::vector<std::string>& args : {std::vector<std::string>{suite, "--list-test-names-only"},
                                               std::vector<std::string>{suite, "--list-tests", "--verbosity", "quiet"}}) {
    // Catch2 2.x exits with the number of cases listed; 3.x rejects 2.x's flag as unrecognised.
    if (run(args, {}, out) < 0 || out.find("nrecognised") != std::string::npos) continue;
    std::vector<std::string> cases;
    std::size_t start = 0;
    while (start < out.size()) {
      std::size_t end = out.find('\n', start);
      if (end == std::string::npos) end = out.size();
      std::string line = out.substr(start, end - start);
      start = end + 1;
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty() || line.rfind("gpurt test seed", 0) == 0 || line.find("test case") != std::string::npos)
        continue;
      cases.push_back(line);
    }
    if (!cases.empty()) return cases;
  }
  throw Error(ErrorCategory::internal, "could not list the test cases of " + suite);
}

std::string tail_lines(const std::string& s, std::size_t lines) {
  std::size_t pos = s.size();
  for (std::size_t i = 0; i <= lines && pos != std::string::npos && pos > 0; ++i) pos = s.rfind('\n', pos - 1);
  return pos == std::string::npos ? s : s.substr(pos + 1);
}


// -c is matched with std::regex, whose compiler recurses once per nesting level (100,000 nested
// groups overflowed the stack) and whose default matcher backtracks (`(a|aa)*(a|aa)*b` takes
// exponential time). So a pattern is at most 1,000 characters with groups and classes nested at
// most 32 deep, and libstdc++ matches it with its polynomial (non-backtracking) executor, which
// refuses back-references.
constexpr std::size_t case_filter_max_length = 1000;
constexpr int case_filter_max_depth = 32;
#ifdef __GLIBCXX__
constexpr auto case_filter_syntax = std::regex::ECMAScript | std::regex::icase | std::regex_constants::__polynomial;
#else
constexpr auto case_filter_syntax = std::regex::ECMAScript | std::regex::icase;
#endif

void check_case_filter(const std::string& pattern) {
  if (pattern.size() > case_filter_max_length)
    throw UsageError("-c is " + std::to_string(pattern.size()) + " characters long; a case filter is at most " +
                     std::to_string(case_filter_max_length) + " (match a shorter part of the case names)");
  int depth = 0, deepest = 0;
  bool escaped = false;
  for (const char c : pattern) {
    if (escaped) {
      escaped = false;
      continue;
    }
    if (c == '\\') escaped = true;
    else if (c == '(' || c == '[') deepest = std::max(deepest, ++depth);
    else if ((c == ')' || c == ']') && depth > 0) --depth;
  }
  if (deepest > case_filter_max_depth)
    throw UsageError("-c nests groups or classes " + std::to_string(deepest) + " deep; a case filter nests at most " +
                     std::to_string(case_filter_max_depth));
}

}  // namespace

namespace {
using Results = std::map<std::pair<std::size_t, std::size_t>, Outcome>;  // (case, column) -> outcome

// The suite program, checked before it is run (README exit codes: "2 usage error: ... an input
// file that is ... not a regular file ... or not what the command reads" - the suite is such an input).
void check_suite_program(const std::string& suite) {
  struct stat st {};
  if (::stat(suite.c_str(), &st) != 0)
    throw Error(ErrorCategory::invalid_argument,
                "the conformance suite " + suite +
                    " is not there; build the tests (GPURT_BUILD_TESTS=ON, cmake --build build --target "
                    "gpurt_conformance) and install again, or pass --suite");
  if (!S_ISREG(st.st_mode))
    throw UsageError("the conformance suite " + suite + " is " +
                     (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
                     "; --suite names the gpurt_conformance program");
  if (::access(suite.c_str(), X_OK) != 0)
    throw UsageError("the conformance suite " + suite + " is not executable (" + std::strerror(errno) +
                     "); --suite names the gpurt_conformance program");
}

// The devices as the suite itself lists them (as CTest's discovery gets them: this process never
// initialises a driver, so its children see the machine exactly as CTest's do), sorted.
template <class NotASuite>
std::vector<Column> list_columns(const std::string& suite, NotASuite&& not_a_suite) {
  std::vector<Column> columns;
  {
    std::string out;
    const int rc = run({suite, "--gpurt-list-devices"}, {}, out);
    if (rc != 0)
      not_a_suite(suite + " --gpurt-list-devices " +
                  (rc < 0 ? std::string("could not be run or was killed") : "exited with " + std::to_string(rc)) +
                  (out.empty() ? std::string(" and printed nothing") : ": " + tail_lines(out, 12)));
    std::size_t start = 0;
    while (start < out.size()) {
      std::size_t end = out.find('\n', start);
      if (end == std::string::npos) end = out.size();
      const std::string line = out.substr(start, end - start);
      start = end + 1;
      std::vector<std::string> f;
      std::size_t p = 0;
      for (std::size_t q; (q = line.find('\t', p)) != std::string::npos; p = q + 1) f.push_back(line.substr(p, q - p));
      f.push_back(line.substr(p));
      if (f.size() < 4) continue;
      Column c{f[0], f[3], {}, {}};
      c.props.backend = f[1];
      if (f[2] != "available") {
        c.title = f[0] + " (unavailable)";
        c.unavailable_reason = f[3];
      } else {
        const auto colon = f[0].find(':');
        c.props.index = colon == std::string::npos ? 0 : std::strtoul(f[0].c_str() + colon + 1, nullptr, 10);
        c.props.name = f[3];
        if (f.size() >= 7) {
          c.props.vendor = f[4];
          c.props.platform = f[5];
          c.props.platform_version = f[6];
        }
      }
      columns.push_back(std::move(c));
    }
  }
  std::sort(columns.begin(), columns.end(), [](const Column& a, const Column& b) { return a.selector < b.selector; });
  return columns;
}

// The columns -d chose. One matcher for the library, GPURT_DEVICE and every command line:
// gpurt::selector_matches on the properties the suite listed. An unavailable backend's column
// answers any selector of it.
std::vector<Column> choose_columns(const std::vector<Column>& columns, const std::vector<std::string>& devices) {
  std::vector<Column> chosen;
  for (const std::string& sel : devices) {
    selector_matches(sel, DeviceProperties{});  // throws invalid_argument, with the syntax, when malformed
    std::string backend = sel.substr(0, sel.find(':'));
    for (char& c : backend) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool matched = false;
    for (const Column& c : columns) {
      const bool hit = c.unavailable_reason.empty() ? selector_matches(sel, c.props) : c.props.backend == backend;
      matched = matched || hit;
      if (hit && std::none_of(chosen.begin(), chosen.end(), [&](const Column& x) { return x.selector == c.selector; }))
        chosen.push_back(c);
    }
    if (!matched) {
      std::string have;
      // As gpurt::device lists them: an unavailable backend with its reason.
      for (const Column& c : columns)
        have += "\n  " + c.selector +
                (c.unavailable_reason.empty() ? " (" + c.title + ")" : ": unavailable: " + c.unavailable_reason);
      throw Error(ErrorCategory::invalid_argument, "no device matches '" + sel + "'; these exist:" + have);
    }
  }
  return chosen;
}

// The cases -c keeps (all of them without -c).
void filter_cases(std::vector<std::string>& cases, const ConformanceCommand& cmd, const std::string& suite) {
  const std::size_t all_cases = cases.size();
  if (!cmd.case_filter.empty()) {
    check_case_filter(cmd.case_filter);
    try {
      const std::regex filter(cmd.case_filter, case_filter_syntax);
      cases.erase(std::remove_if(cases.begin(), cases.end(),
                                 [&](const std::string& c) { return !std::regex_search(c, filter); }),
                  cases.end());
    } catch (const std::regex_error& e) {
      throw UsageError("-c '" + cmd.case_filter + "' is not a valid regular expression (ECMAScript, without "
                       "back-references): " + e.what());
    }
    if (cases.empty())
      throw UsageError("-c '" + cmd.case_filter + "' matches none of the suite's " + std::to_string(all_cases) +
                       " cases; " + suite + " --list-tests lists them");
  }
}

// Every case on every column, each run in a process of its own, cmd.jobs at a time.
Results run_matrix(const std::string& suite, const std::vector<std::string>& cases, const std::vector<Column>& columns,
                   const ConformanceCommand& cmd) {
  Results results;
  std::mutex mutex;
  std::atomic<std::size_t> next{0}, done{0};
  const std::size_t total = cases.size() * columns.size();
  auto work = [&] {
    for (std::size_t job; (job = next++) < total;) {
      const std::size_t ci = job / columns.size(), di = job % columns.size();
      Outcome o;
      std::string out;
      const int rc = run({suite, catch_spec(cases[ci])}, {"GPURT_TEST_DEVICE=" + columns[di].selector}, out);
      if (rc == 0) {
        o.kind = Outcome::Kind::pass;
      } else if (rc == 77) {
        o.kind = Outcome::Kind::skip;
        const auto pos = out.find("SKIPPED: ");
        o.detail = pos == std::string::npos ? "skipped" : out.substr(pos + 9, out.find('\n', pos) - pos - 9);
      } else if (rc < 0) {
        o.detail = "the suite could not be run or was killed by a signal: " + tail_lines(out, 12);
      } else {
        o.detail = tail_lines(out, 12);
      }
      std::lock_guard<std::mutex> lock(mutex);
      results[{ci, di}] = o;
      ++done;
      if (!cmd.json && ::isatty(2)) std::cerr << "\r  " << done << " / " << total << " runs" << std::flush;
    }
  };
  std::exception_ptr worker_error;  // the first exception of a worker, rethrown on this thread
  auto worker = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!worker_error) worker_error = std::current_exception();
      next = total;
    }
  };
  std::vector<std::thread> pool;
  const unsigned jobs = cmd.jobs ? cmd.jobs : std::max(1u, std::thread::hardware_concurrency());
  try {
    for (unsigned i = 0; i < std::min<std::size_t>(jobs, std::max<std::size_t>(total, 1)); ++i) pool.emplace_back(worker);
  } catch (...) {  // no thread for this worker: the ones started finish the runs
    if (pool.empty()) throw;
  }
  for (auto& t : pool) t.join();
  if (worker_error) std::rethrow_exception(worker_error);
  if (!cmd.json && ::isatty(2)) std::cerr << "\r" << std::string(40, ' ') << "\r";
  return results;
}

void write_json(const std::string& suite, const std::vector<std::string>& cases, const std::vector<Column>& columns,
                Results& results, const std::vector<std::array<std::size_t, 3>>& totals, bool failed) {
  nlohmann::json j;
  j["suite"] = suite;
  j["devices"] = nlohmann::json::array();
  for (std::size_t d = 0; d < columns.size(); ++d)
    j["devices"].push_back({{"selector", columns[d].selector},
                            {"title", columns[d].title},
                            {"unavailable_reason", columns[d].unavailable_reason},
                            {"passed", totals[d][0]},
                            {"failed", totals[d][1]},
                            {"skipped", totals[d][2]}});
  j["cases"] = nlohmann::json::array();
  static const char* names[] = {"pass", "fail", "skip"};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    nlohmann::json row{{"name", cases[c]}, {"results", nlohmann::json::object()}};
    for (std::size_t d = 0; d < columns.size(); ++d) {
      const Outcome& o = results[{c, d}];
      row["results"][columns[d].selector] = {{"status", names[static_cast<int>(o.kind)]}, {"detail", o.detail}};
    }
    j["cases"].push_back(row);
  }
  j["failed"] = failed;
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // device names need not be UTF-8
}

// The summary first, then one row per case - a cell per device, then the case's whole name - then
// each failure and skip with its reason.
void write_table(const std::vector<std::string>& cases, const std::vector<Column>& columns, Results& results,
                 const std::vector<std::array<std::size_t, 3>>& totals) {
  std::cout << "Totals (passed / failed / skipped):\n";
  for (std::size_t d = 0; d < columns.size(); ++d) {
    std::cout << "  " << columns[d].selector << ": " << totals[d][0] << " / " << totals[d][1] << " / " << totals[d][2];
    if (!columns[d].unavailable_reason.empty()) std::cout << "  (unavailable: " << columns[d].unavailable_reason << ")";
    else std::cout << "  " << columns[d].title;
    std::cout << "\n";
  }
  std::cout << "\n";
  for (const Column& c : columns) std::cout << c.selector << "  ";
  std::cout << "case\n";
  std::vector<std::string> notes;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    for (std::size_t d = 0; d < columns.size(); ++d) {
      const Outcome& o = results[{c, d}];
      const char* cell = o.kind == Outcome::Kind::pass ? "pass" : o.kind == Outcome::Kind::skip ? "skip" : "FAIL";
      std::cout << cell << std::string(columns[d].selector.size() > 4 ? columns[d].selector.size() - 4 : 0, ' ') << "  ";
      if (o.kind != Outcome::Kind::pass && !(o.kind == Outcome::Kind::skip && !columns[d].unavailable_reason.empty()))
      {
        std::string detail = o.detail;  // without the line break a suite's message ends in
        while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r' || detail.back() == ' ')) detail.pop_back();
        notes.push_back(std::string(cell) + " " + columns[d].selector + " | " + cases[c] + ": " + detail);
      }
    }
    std::cout << cases[c] << "\n";
  }
  if (!notes.empty()) {
    std::cout << "\nSkips and failures:\n";
    for (const auto& n : notes) std::cout << "  " << n << "\n";
  }
}

// `text` as XML character data or an attribute value: markup characters as entities, and what XML
// 1.0 cannot hold (control characters other than tab and line breaks, bytes that are not UTF-8)
// as '?'.
std::string xml_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ? '?' : static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // One UTF-8 sequence, kept whole when well formed (no overlong forms, surrogates or values past U+10FFFF).
    const std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    bool ok = len > 0 && c <= 0xf4 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok && len >= 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0) && !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      // U+FFFE and U+FFFF are not XML characters either.
      if (ok && len == 3 && c == 0xef && c1 == 0xbf && static_cast<unsigned char>(text[i + 2]) >= 0xbe) ok = false;
    }
    if (!ok) {
      out += '?';
      ++i;
      continue;
    }
    out.append(text, i, len);
    i += len;
  }
  return out;
}

// xml_text for an attribute value: line breaks and tabs as character references (a parser would
// turn them into spaces), a trailing line break dropped.
std::string xml_attribute(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::string out;
  for (const char c : xml_text(text)) {
    if (c == '\n') out += "&#10;";
    else if (c == '\r') out += "&#13;";
    else if (c == '\t') out += "&#9;";
    else out += c;
  }
  return out;
}

// JUnit XML: one <testsuite> per device column, one <testcase> per case, with <failure> or <skipped>
// and the reason.
void write_junit(std::ostream& os, const std::vector<std::string>& cases, const std::vector<Column>& columns,
                 Results& results, const std::vector<std::array<std::size_t, 3>>& totals) {
  std::size_t all[3] = {0, 0, 0};
  for (const auto& t : totals)
    for (int k = 0; k < 3; ++k) all[k] += t[k];
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"gpurt conformance\" tests=\"" << all[0] + all[1] + all[2] << "\" failures=\"" << all[1]
     << "\" skipped=\"" << all[2] << "\">\n";
  for (std::size_t d = 0; d < columns.size(); ++d) {
    const std::string suite = xml_text(columns[d].selector);
    os << "  <testsuite name=\"" << suite << "\" tests=\"" << totals[d][0] + totals[d][1] + totals[d][2]
       << "\" failures=\"" << totals[d][1] << "\" errors=\"0\" skipped=\"" << totals[d][2] << "\">\n";
    os << "    <properties><property name=\"device\" value=\""
       << xml_attribute(columns[d].unavailable_reason.empty() ? columns[d].title : "unavailable: " + columns[d].unavailable_reason)
       << "\"/></properties>\n";
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const Outcome& o = results[{c, d}];
      os << "    <testcase classname=\"gpurt.conformance." << suite << "\" name=\"" << xml_attribute(cases[c]) << "\"";
      if (o.kind == Outcome::Kind::pass) {
        os << "/>\n";
        continue;
      }
      const std::string message = xml_attribute(o.detail);
      os << ">";
      if (o.kind == Outcome::Kind::fail) os << "<failure message=\"" << message << "\">" << xml_text(o.detail) << "</failure>";
      else os << "<skipped message=\"" << message << "\"/>";
      os << "</testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
}
}  // namespace

int run_conformance(const ConformanceCommand& cmd) {
  if (cmd.json && cmd.junit == "-")
    throw UsageError("--json and --junit - both print to standard output; give --junit a file");
  // A place the XML cannot go is found before the suite runs, not after.
  if (!cmd.junit.empty()) check_output_creatable(cmd.junit, "the JUnit XML");
  const std::string suite = cmd.suite.empty() ? default_suite() : cmd.suite;
  check_suite_program(suite);
  // A program that is not the suite (it cannot list its devices) is a wrong --suite; the suite found
  // by default failing so is an error while doing the work.
  auto not_a_suite = [&](const std::string& why) {
    if (!cmd.suite.empty()) throw UsageError(suite + " is not a gpurt conformance suite: " + why);
    throw Error(ErrorCategory::internal, why);
  };
  std::vector<Column> columns = list_columns(suite, not_a_suite);
  if (!cmd.devices.empty()) columns = choose_columns(columns, cmd.devices);
  std::vector<std::string> cases;
  try {
    cases = list_cases(suite);
  } catch (const Error& e) {
    not_a_suite(e.message());
  }
  filter_cases(cases, cmd, suite);
  Results results = run_matrix(suite, cases, columns, cmd);

  std::vector<std::array<std::size_t, 3>> totals(columns.size(), {0, 0, 0});
  bool failed = false;
  for (const auto& [key, o] : results) {
    totals[key.second][static_cast<int>(o.kind)]++;
    failed = failed || o.kind == Outcome::Kind::fail;
  }
  // The table (or JSON) first: a JUnit file that cannot be written after all leaves the run's
  // results on the screen.
  if (cmd.json) write_json(suite, cases, columns, results, totals, failed);
  else if (cmd.junit != "-") write_table(cases, columns, results, totals);
  std::cout.flush();
  if (!cmd.junit.empty())
    write_output(cmd.junit, "the JUnit XML", [&](std::ostream& os) { write_junit(os, cases, columns, results, totals); });
  return failed ? 1 : 0;
}
}  // namespace gpurt::tool
