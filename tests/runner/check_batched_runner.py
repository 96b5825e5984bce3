#!/usr/bin/env python3
"""scripts/run-tests-batched.py gives the verdict ctest gives, entry by entry.

    check_batched_runner.py CASES_PROGRAM RUNNER CATCH2_MAJOR

Writes a CTest directory of its own whose entries are the hidden cases of CASES_PROGRAM
(tests/runner/runner_cases.cpp), marked as cmake/GpurtAddTests.cmake marks Catch2 cases, runs it
with ctest and with the runner, and compares. The runner's docstring promises: a crash or a hang
fails only the case that was running and the cases after it still run; a skip is a skip. The one
difference it documents: a case that ends the process before it reports (std::exit(0)) is failed
by the runner, where ctest, seeing exit status 0, passes it.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

program, runner, major = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
# Two programs' worth of entries (each its own environment, so its own batches): one where a case
# fails and the cases after it pass in the same process, one where the process crashes, hangs and
# exits under them.
calm = ["runner: passes", "runner: fails", "runner: skips", "runner: fails 77 assertions",
        "runner: a name with a comma, [brackets] and a \\ backslash", "runner: passes after the others"]
rough = ["runner: throws", "runner: crashes", "runner: hangs", "runner: exits 0 in the middle",
         "runner: passes after the others"]
cases = [("fake:0", c) for c in calm] + [("fake:1", c) for c in rough]
expected = {"runner: passes": "passed", "runner: fails": "failed", "runner: skips": "skipped",
            "runner: throws": "failed", "runner: fails 77 assertions": "failed", "runner: crashes": "failed", "runner: hangs": "failed",
            "runner: exits 0 in the middle": "failed",
            "runner: a name with a comma, [brackets] and a \\ backslash": "passed",
            "runner: passes after the others": "passed"}
ctest_differs = {"runner: exits 0 in the middle": "passed"}


def spec(name):  # as cmake/GpurtAddTests.cmake escapes a case name
    for a, b in (("\\", "\\\\"), (",", "\\,"), ("[", "\\["), ("]", "\\]")):
        name = name.replace(a, b)
    return name


tmp = tempfile.mkdtemp(prefix="gpurt-runner-check-")
run_args = "" if major >= 3 else '"--warn" "NoTests" '
with open(os.path.join(tmp, "CTestTestfile.cmake"), "w") as f:
    for group, c in cases:
        name = f"{group} | {c}"
        f.write(f'add_test([=[{name}]=] "{program}" {run_args}[=[{spec(c)}]=])\n')
        f.write(f'set_tests_properties([=[{name}]=] PROPERTIES ENVIRONMENT '
                f'"GPURT_TEST_CASE_OF=gpurt_runner_cases;GPURT_RUNNER_GROUP={group}" SKIP_RETURN_CODE "77" TIMEOUT "10")\n')

out = subprocess.run(["ctest", "--test-dir", tmp, "-j", "2"], capture_output=True, text=True).stdout
by_ctest = {}
for line in out.splitlines():
    m = re.match(r"^\s*\d+/\d+ Test\s+#\d+: (.*?) \.{3,}.*?(Passed|Skipped|\*\*\*Failed|Failed|\*\*\*Timeout|"
                 r"Subprocess aborted|\*\*\*Exception|Exception)", line)
    if m:
        word = m.group(2)
        by_ctest[m.group(1)] = "passed" if word == "Passed" else "skipped" if word == "Skipped" else "failed"

outdir = os.path.join(tmp, "out")
p = subprocess.run([sys.executable, runner, tmp, "--out", outdir, "-j", "2", "--timeout", "10"],
                   capture_output=True, text=True)
by_runner = {}
with open(os.path.join(outdir, "results.tsv")) as f:
    for line in f:
        status, _, name = line.rstrip("\n").split("\t")[:3]
        by_runner[name] = status

problems = []
for group, c in cases:
    name = f"{group} | {c}"
    want_ctest = ctest_differs.get(c, expected[c])
    # (Under a leak checker the early exit's leaks fail it under ctest too: only the runner's
    # verdict on it is the promise.)
    if by_ctest.get(name) != want_ctest and c not in ctest_differs:
        problems.append(f"ctest: {c!r} is {by_ctest.get(name)}, expected {want_ctest}")
    if by_runner.get(name) != expected[c]:
        problems.append(f"runner: {c!r} is {by_runner.get(name)}, expected {expected[c]}")
    print(f"{name!r}: ctest {by_ctest.get(name)}, runner {by_runner.get(name)}")
# The failures log shows, for a case that failed in a batch, what the batch printed about it (the
# assertion that failed there) before its rerun alone: a case that fails only in company would
# otherwise leave only its passing rerun to read.
with open(os.path.join(outdir, "failures.log"), encoding="utf-8", errors="replace") as f:
    log = f.read()
block = log[log.find("==== " + next(f"{g} | runner: fails" for g, c in cases if c == "runner: fails")):]
block = block[:block.find("\n==== ", 1)] if "\n==== " in block[1:] else block
if "--- in the batch:" not in block or "1 + 1 == 3" not in block.split("--- alone:")[0]:
    problems.append("failures.log: 'runner: fails' lacks the batch's own output (its failed CHECK) "
                    "before the rerun alone:\n" + block[:3000])
if p.returncode != 1:  # failures above: the runner must say so in its exit status
    problems.append(f"the runner exited {p.returncode}, expected 1 (cases failed)\n{p.stdout}\n{p.stderr}")
# --deadline: "what runs is killed (failed), what has not started is failed as not run, and the
# results are written as always". The hang, given 60 s of case timeout and a 3 s deadline, is
# killed at the deadline; every entry gets a verdict, every case not finished is failed, and the
# run takes about the deadline, not the hang's 120 s.
deadline_out = os.path.join(tmp, "deadline")
t_start = time.monotonic()
d = subprocess.run([sys.executable, runner, tmp, "--out", deadline_out, "-j", "1", "--timeout", "60",
                    "--deadline", "3"], capture_output=True, text=True)
took = time.monotonic() - t_start
verdicts = {}
with open(os.path.join(deadline_out, "results.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        verdicts[parts[2]] = (parts[0], parts[3] if len(parts) > 3 else "")
names = [f"{g} | {c}" for g, c in cases]
if sorted(verdicts) != sorted(names):
    problems.append(f"--deadline: results.tsv lists {len(verdicts)} entries, expected {len(names)}")
if not any("deadline" in note for _, note in verdicts.values()):
    problems.append("--deadline: no entry was failed or left out at the deadline: " + repr(verdicts))
if any(v[0] == "passed" and "deadline" in v[1] for v in verdicts.values()):
    problems.append("--deadline: an entry passed with a deadline note")
if took > 60 or d.returncode != 1:
    problems.append(f"--deadline 3: the run took {took:.0f} s and exited {d.returncode} (expected about 3 s of "
                    f"cases and exit 1)\n{d.stdout}\n{d.stderr}")
if problems:
    print("\n".join(problems))
    print("--- ctest\n" + out + "\n--- runner\n" + p.stdout + p.stderr)
    sys.exit(1)
print("OK: the runner gives ctest's verdicts (and fails the early exit ctest passes)")
