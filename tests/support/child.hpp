// Runs one test case of the running test binary in a child process: for promises about a whole
// process (a fault that poisons the device, the environment read once, which plugins are loaded).
#pragma once

#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace gpurt::test {

// Runs the test case `name` of this binary in a child process with the environment `envp`
// (default: this process's, so the same device) and returns its exit status, or 128 + the signal
// that ended it.
inline int run_case_in_child(const char* name, char* const* envp = environ) {
  // The binary by its real path, also as argv[0]: some drivers (NVIDIA's OpenCL among the suspects)
  // look at the program's name, and "/proc/self/exe" is not one.
  char exe[PATH_MAX] = "/proc/self/exe";
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) exe[n] = '\0';
  std::string arg(name);
#if GPURT_CATCH2_MAJOR >= 3  // Catch2 3 fails a run whose filter matches nothing by itself
  char* argv[] = {exe, &arg[0], nullptr};
#else
  char warn[] = "--warn", no_tests[] = "NoTests";  // a filter that matches nothing fails the child
  char* argv[] = {exe, warn, no_tests, &arg[0], nullptr};
#endif
  // The child starts with standard input, output and error only: a driver's device files that this
  // process holds open (not close-on-exec) must not leak into it (NVIDIA's OpenCL platform was
  // missing in children of a process holding an NVIDIA OpenCL context).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, exe, &actions, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs the test case `name` of this binary in a child process whose environment is this one less
// every GPURT_* variable, plus `add` ("NAME=VALUE"): for promises about what the environment does.
inline int run_case_with_gpurt_env(const char* name, const std::vector<std::string>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("GPURT_", 0) != 0) env.emplace_back(*e);
  env.insert(env.end(), add.begin(), add.end());
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(&e[0]);
  envp.push_back(nullptr);
  return run_case_in_child(name, envp.data());
}

}  // namespace gpurt::test
