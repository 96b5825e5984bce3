#!/usr/bin/env python3
"""Runs every CTest entry of a build, as ctest would, in far fewer processes.

ctest runs one process per Catch2 case and device (each paying CUDA/OpenCL start-up). This runs the
cases of one test program and device together in one process (in chunks sized from earlier
timings), reads each case's result from the harness's GPURT_TEST_CASE_LOG, and gives the same
per-entry verdicts:
  - a case whose name ends in "runs alone" (CTest's RUN_SERIAL) runs by itself, after the rest,
    with nothing beside it, as under ctest; under --deadline the rest stops early enough (by the
    runs-alone cases' times in --times, 5 s each if unknown) to leave them their turn;
  - a case that crashes or hangs its process is failed ("crashed"/"timed out"); the cases after it
    run again in a fresh process, so one crash costs no other case its result. A case that ends
    the process before it reports (std::exit(0) in the middle) is failed too, where ctest, seeing
    exit status 0, passes it: the one verdict that differs, and the stricter one;
  - every failed case runs once more alone, as ctest would run it, and that output goes to the
    failures log (with the verdict it had alone), after what the batch printed about it;
  - every entry that is not a Catch2 case (examples, CLI, package, layers) runs as ctest runs it
    (its environment, working directory, skip code and expression, timeout; an entry that needs a
    fixture after the entry that sets it up), in the same pool as the batches, longest first.
Usage: scripts/run-tests-batched.py BUILD [--out DIR] [-j N] [--timeout S] [--times FILE] [-R REGEX]
Writes to DIR: results.tsv (status, seconds, entry per line), failures.log, case-times.json (for
the next run's chunking). Exit status 0 when nothing failed.
"""
import argparse
import concurrent.futures as futures
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

CASE_MARK = "GPURT_TEST_CASE_OF"  # set by cmake/GpurtAddTests.cmake on every Catch2 case entry


def load_entries(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    entries = []
    for number, t in enumerate(tests, start=1):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        for k in ("FIXTURES_SETUP", "FIXTURES_REQUIRED", "SKIP_REGULAR_EXPRESSION", "ENVIRONMENT", "DEPENDS"):
            if isinstance(props.get(k), str):
                props[k] = [props[k]]
        env = {}
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        unsupported = [k for k in ("WILL_FAIL", "PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION", "RESOURCE_LOCK",
                                   "ENVIRONMENT_MODIFICATION", "FIXTURES_CLEANUP", "RESOURCE_GROUPS")
                       if props.get(k) not in (None, False, [], "")]
        if unsupported:  # a verdict this runner would get wrong: refuse rather than guess
            sys.exit(f"run-tests-batched: entry {t['name']!r} uses {', '.join(unsupported)}, which this runner does "
                     "not implement; run ctest, or teach the runner")
        entries.append({"number": number, "name": t["name"], "command": t.get("command", []),
                        "env": env, "serial": bool(props.get("RUN_SERIAL", False)),
                        "skip_code": props.get("SKIP_RETURN_CODE"), "timeout": props.get("TIMEOUT"),
                        "cwd": props.get("WORKING_DIRECTORY"),
                        "skip_re": props.get("SKIP_REGULAR_EXPRESSION", []),
                        "fixtures_setup": props.get("FIXTURES_SETUP", []),
                        "fixtures_required": props.get("FIXTURES_REQUIRED", []),
                        "depends": props.get("DEPENDS", [])})
    return entries


class Suite:
    def __init__(self, args):
        self.args = args
        self.results = {}  # entry name -> (status, seconds, note)
        self.lock = threading.Lock()
        self.failure_logs = []
        self.batch_output = {}  # entry name -> what its batch printed about it, for a case that failed there
        self.times = {}
        if args.times and os.path.exists(args.times):
            with open(args.times) as f:
                self.times = json.load(f)
        self.new_times = {}
        self.fixtures = {}  # fixture name -> threading.Event, set once its setup entry has run
        self.fixture_ok = {}
        self.finished = {}  # entry name -> threading.Event, for the entries others DEPEND on
        # --deadline: the monotonic time at which whatever still runs is killed and whatever has not
        # started is recorded as not run, so that the results of a run with a hang still come back.
        self.deadline = time.monotonic() + args.deadline if args.deadline else None

    # Seconds before the deadline at which the batch stops (the runs-alone entries' expected time:
    # they run after it, and a deadline must not leave them out while the batch used it all).
    reserve = 0.0

    def past_deadline(self):
        return self.deadline is not None and time.monotonic() >= self.deadline - self.reserve

    def not_run(self, e):
        self.record(e["name"], "failed", 0.0, f"not run: the suite's deadline ({self.args.deadline:.0f} s) had passed")

    def limit(self, entry):  # a case's timeout, cut to what is left before the deadline
        t = self.case_timeout(entry)
        return t if self.deadline is None else max(0.0, min(t, self.deadline - self.reserve - time.monotonic()))

    def record(self, name, status, seconds, note=""):
        with self.lock:
            self.results[name] = (status, seconds, note)

    # One process runs the cases of `batch` (entries of one program and environment) in order.
    # Returns the entries it did not reach (after a crash or hang), to be run in a fresh process.
    def run_batch(self, batch):
        first = batch[0]
        exe_args = first["command"][:-1]
        spec = ",".join(e["command"][-1] for e in batch)
        by_case = {e["case"]: e for e in batch}
        fd, log = tempfile.mkstemp(prefix="gpurt-cases-", suffix=".tsv")
        os.close(fd)
        env = dict(os.environ, **first["env"], GPURT_TEST_CASE_LOG=log)
        out = tempfile.TemporaryFile()
        start = time.monotonic()
        proc = subprocess.Popen(exe_args + [spec], env=env, stdout=out, stderr=subprocess.STDOUT,
                                cwd=first["cwd"] or None, start_new_session=True)
        seen, current, current_since, timed_out = set(), None, start, False
        while True:
            try:
                proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            lines = read_lines(log)
            now_case = lines[-1][2] if lines and lines[-1][0] == "started" else None
            if now_case != current:
                current, current_since = now_case, time.monotonic()
            limit = self.case_timeout(by_case.get(current))
            if time.monotonic() - current_since > limit or self.past_deadline():
                timed_out = True
                kill_group(proc)
                proc.wait()
                break
        elapsed = time.monotonic() - start
        rc = proc.returncode
        lines = read_lines(log)
        os.unlink(log)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
        out.close()
        started = [l[2] for l in lines if l[0] == "started"]
        for status, seconds, case in lines:
            if status == "started" or case not in by_case:
                continue
            seen.add(case)
            self.new_times[by_case[case]["name"]] = float(seconds)
            self.record(by_case[case]["name"], status, float(seconds))
            if status == "failed":
                with self.lock:
                    self.batch_output[by_case[case]["name"]] = case_output(text, case)
        if not lines and rc == 77:  # the device's backend is unavailable: every case is skipped
            for e in batch:
                self.record(e["name"], "skipped", 0.0, text.strip().splitlines()[-1] if text.strip() else "")
            return []
        unfinished = [c for c in started if c not in seen]
        rest = [e for e in batch if e["case"] not in seen and e["case"] not in unfinished]
        for case in unfinished:  # the case that was running when the process ended or was killed
            e = by_case.get(case)
            if e is None:
                continue
            why = ("killed at the suite's deadline" if self.past_deadline() else "timed out") if timed_out \
                else f"crashed (exit {rc})"
            self.record(e["name"], "failed", elapsed, why)
            self.new_times[e["name"]] = elapsed
        any_failed = any(l[0] == "failed" and l[2] in by_case for l in lines)
        if not unfinished and rc not in (0, 77) and not rest and not any_failed:
            # Every case finished and passed, but the process failed after them (at exit, a leak
            # report, ...). (A failed case makes Catch2's exit status non-zero by itself.)
            self.record(batch[-1]["name"], "failed", 0.0, f"the process exited {rc} after its last case")
            self.failure_logs.append((f"{first['prefix']} {os.path.basename(exe_args[0])}: exit {rc}",
                                      text[-6000:]))
        if not unfinished and not lines and rest:
            # The program ended before its first case (bad arguments, a failing start-up).
            for e in rest:
                self.record(e["name"], "failed", elapsed, f"the program exited {rc} before any case ran")
            self.failure_logs.append((f"{first['prefix']} {os.path.basename(exe_args[0])}: exit {rc} before any case",
                                      text[-6000:]))
            return []
        return rest

    def case_timeout(self, entry):  # as ctest: the entry's TIMEOUT, else --timeout
        if entry and entry.get("timeout"):
            return float(entry["timeout"])
        return self.args.timeout

    def run_group(self, batch):
        while batch:
            if self.past_deadline():
                for e in batch:
                    self.not_run(e)
                return
            rest = self.run_batch(batch)
            if len(rest) >= len(batch):  # no case of the batch reported back: never loop on it
                for e in rest:
                    self.record(e["name"], "failed", 0.0, "not run: the program reported no result for it")
                return
            batch = rest

    # An entry run exactly as ctest runs it, one process: for "runs alone" cases and for the rerun
    # of a failure.
    def run_alone(self, e):
        env = dict(os.environ, **e["env"])
        start = time.monotonic()
        if not e["command"]:
            return "failed", 0.0, None, "ctest found no program to run for this entry (Not Run)"
        out = tempfile.TemporaryFile()
        try:
            p = subprocess.Popen(e["command"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                 cwd=e["cwd"] or None, start_new_session=True)
        except OSError as ex:
            return "failed", 0.0, None, f"could not start {e['command'][0]}: {ex}"
        try:
            rc = p.wait(timeout=self.limit(e))
        except subprocess.TimeoutExpired:
            rc = None
        kill_group(p)  # what it left running (mpirun's ranks, a case's child process) goes too
        if rc is None:
            p.wait()
        out.seek(0)
        text = out.read().decode("utf-8", "replace") + ("\n[timed out]" if rc is None else "")
        out.close()
        seconds = time.monotonic() - start
        skip_re = e.get("skip_re") or []
        if isinstance(skip_re, str):
            skip_re = [skip_re]
        if rc is not None and any(re.search(r, text) for r in skip_re):
            status = "skipped"
        elif rc == 0:
            status = "passed"
        elif rc is not None and e["skip_code"] is not None and rc == int(e["skip_code"]):
            status = "skipped"
        else:
            status = "failed"
        return status, seconds, rc, text

    # An entry that is not a Catch2 case (an example, a CLI or package check), run as ctest runs it.
    # One that needs a fixture waits until the entry that sets the fixture up has passed.
    def run_plain(self, e):
        for d in e["depends"]:  # as ctest: after the entries it names (whatever their verdict)
            ev = self.finished.get(d)
            if ev is not None:
                ev.wait()
        try:
            self.run_plain_now(e)
        finally:
            if e["name"] in self.finished:
                self.finished[e["name"]].set()

    def run_plain_now(self, e):
        for fx in e["fixtures_required"]:
            ev = self.fixtures.get(fx)
            if ev is None:
                continue
            ev.wait()
            if not self.fixture_ok.get(fx, False):
                self.record(e["name"], "failed", 0.0, f"fixture {fx} was not set up")
                return
        status = "failed"
        try:
            if self.past_deadline():
                self.not_run(e)
                return
            status, seconds, rc, text = self.run_alone(e)
            self.record(e["name"], status, seconds)
            self.new_times[e["name"]] = seconds
            if status == "failed":
                self.failure_logs.append((f"{e['name']} (exit {rc})", text[-8000:]))
        finally:  # whatever happened, the entries waiting for this one's fixtures go on
            for fx in e["fixtures_setup"]:
                self.fixture_ok[fx] = status != "failed"
                self.fixtures[fx].set()


def case_output(text, case):
    """What a batch printed about the failed case `case`: Catch2's block for it, from the separator
    line above its name (Catch2 may wrap a long name: its first 40 characters are looked for)."""
    at = text.find(case[:40])
    if at < 0:
        return text[-6000:]
    start = text.rfind("\n---", 0, at)
    start = 0 if start < 0 else start + 1
    end = text.find("\n===", at)
    return text[start:end if end >= 0 else len(text)][:6000]


def tail_failures(text):
    keep, out = False, []
    for line in text.splitlines():
        if re.search(r"\*\*\*|Failed|Timeout|Exception", line) and "Test #" in line:
            keep = True
        elif re.match(r"^\s*\d+/\d+ Test\s+#", line):
            keep = False
        if keep:
            out.append(line)
    return "\n".join(out[-400:])


def unescape_spec(spec):
    """The case name behind a Catch2 test spec as cmake/GpurtAddTests.cmake escapes it."""
    out, i = [], 0
    while i < len(spec):
        if spec[i] == "\\" and i + 1 < len(spec):
            i += 1
        out.append(spec[i])
        i += 1
    return "".join(out)


def read_lines(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read().splitlines()
    except OSError:
        return []
    lines = []
    for r in raw:
        parts = r.split("\t", 2)
        if len(parts) == 3:
            lines.append(tuple(parts))
    return lines


def kill_group(proc):
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def chunks(group, times, target, most=100, spec_bytes=64 * 1024):
    # At most `most` cases and `spec_bytes` of test spec per process: the spec is one argument, and
    # Linux refuses an argument over 128 KiB.
    out, cur, cost, length = [], [], 0.0, 0
    for e in group:
        t = max(times.get(e["name"], 1.0), 0.05)
        if cur and (cost + t > target or len(cur) >= most or length + len(e["command"][-1]) + 1 > spec_bytes):
            out.append((cost, cur))
            cur, cost, length = [], 0.0, 0
        cur.append(e)
        cost += t
        length += len(e["command"][-1]) + 1
    if cur:
        out.append((cost, cur))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--out", default=".")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a case may take (ctest's --timeout)")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds after which the run stops: what runs is killed (failed), what has not started "
                         "is failed as not run, and the results are written as always")
    ap.add_argument("--times", help="case-times.json of an earlier run, to size the chunks")
    ap.add_argument("-R", "--tests-regex", help="only the entries whose name this regular expression finds (as ctest -R)")
    ap.add_argument("--chunk-seconds", type=float, default=6.0,
                    help="about how long one process runs (from --times; an unknown case counts 1 s)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    wall = time.monotonic()
    suite = Suite(args)
    entries = load_entries(args.build)
    if args.tests_regex:  # as ctest -R: the entries that set up a chosen entry's fixtures come along
        chosen = [e for e in entries if re.search(args.tests_regex, e["name"])]
        needed = {fx for e in chosen for fx in e["fixtures_required"]}
        entries = [e for e in entries if e in chosen or set(e["fixtures_setup"]) & needed]
    if not entries:  # nothing discovered is a failure, never a pass
        print(f"run-tests-batched: no CTest entries in {args.build}" +
              (f" match {args.tests_regex!r}" if args.tests_regex else " (is it built, and do its test programs list their cases?)"))
        return 2

    groups, alone, plain = {}, [], []
    for e in entries:
        if CASE_MARK not in e["env"] or len(e["command"]) < 2 or e["depends"]:  # (no command: not found)
            (alone if e["serial"] else plain).append(e)
            continue
        e["case"] = unescape_spec(e["command"][-1])
        e["prefix"] = e["name"].split(" | ", 1)[0] if " | " in e["name"] else ""
        if e["serial"]:
            alone.append(e)
            continue
        key = (tuple(e["command"][:-1]), tuple(sorted(e["env"].items())), e["cwd"])
        groups.setdefault(key, []).append(e)

    # One pool, longest first (from --times): batches of cases and the other entries alike, each
    # work item (first, -seconds, plain?, what).
    work = []
    for g in groups.values():
        for cost, batch in chunks(g, suite.times, args.chunk_seconds):
            work.append(((1, 0), -cost, False, batch))
    for e in plain:
        for fx in e["fixtures_setup"]:
            suite.fixtures[fx] = threading.Event()
    names = {e["name"] for e in plain}
    for e in plain:
        for d in e["depends"]:
            if d in names:
                suite.finished.setdefault(d, threading.Event())
    # Entries in a chain of DEPENDS or that set up a fixture go first, in dependency order, so that an
    # entry that waits only ever waits for one a worker has already taken.
    by_name = {e["name"]: e for e in plain}
    order = {}

    def depth(e, seen=()):
        if e["name"] in order:
            return order[e["name"]]
        if e["name"] in seen:
            sys.exit(f"run-tests-batched: DEPENDS runs in a circle through {e['name']!r}")
        d = 1 + max([depth(by_name[x], seen + (e["name"],)) for x in e["depends"] if x in by_name] or [0])
        order[e["name"]] = d
        return d

    for e in plain:
        chained = e["fixtures_setup"] or e["depends"] or e["name"] in suite.finished
        first = (0, depth(e)) if chained else (1, 0)
        work.append((first, -suite.times.get(e["name"], 5.0), True, e))
    work.sort(key=lambda w: (w[0], w[1]))

    def run(w):
        if w[2]:
            suite.run_plain(w[3])
        else:
            suite.run_group(w[3])

    suite.reserve = 2.0 + sum(suite.times.get(e["name"], 5.0) for e in alone) if alone else 0.0
    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, work))
    suite.reserve = 0.0
    for e in alone:  # with nothing beside them, as CTest's RUN_SERIAL
        if CASE_MARK not in e["env"] or len(e["command"]) < 2:
            suite.run_plain(e)
            continue
        if suite.past_deadline():
            suite.not_run(e)
            continue
        status, seconds, rc, text = suite.run_alone(e)
        suite.record(e["name"], status, seconds)
        suite.new_times[e["name"]] = seconds
        if status == "failed":
            suite.failure_logs.append((f"{e['name']} (exit {rc})", text[-8000:]))

    # Every failed Catch2 case once more alone, as ctest would run it: its output, and whether it
    # also fails by itself (a case that passes alone still counts as failed: it broke in company).
    catch_entries = {e["name"]: e for e in entries if CASE_MARK in e["env"]}
    failed = [n for n, r in suite.results.items() if r[0] == "failed" and n in catch_entries
              and not catch_entries[n]["serial"]]
    alone_passed = []

    def rerun(n):
        if suite.past_deadline():
            return n, f"{n} [{suite.results[n][2] or 'failed'}; not run again alone: past the deadline]", \
                suite.batch_output.get(n, "")
        status, seconds, rc, text = suite.run_alone(catch_entries[n])
        note = suite.results[n][2]
        if status != "failed":
            alone_passed.append(n)
        in_batch = suite.batch_output.get(n)
        shown = (f"--- in the batch:\n{in_batch}\n--- alone:\n" if in_batch else "") + text[-8000:]
        return n, f"{n} [{note or 'failed'} in a batch; alone: {status}, exit {rc}]", shown

    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for n, title, text in pool.map(rerun, sorted(failed)[:40]):
            suite.failure_logs.append((title, text))
            if n in alone_passed:  # still failed: it broke in company, which ctest alone would not show
                status, seconds, note = suite.results[n]
                suite.record(n, status, seconds, (note + "; " if note else "") + "passed when run alone")

    with open(os.path.join(args.out, "results.tsv"), "w") as f:
        for e in entries:
            status, seconds, note = suite.results.get(e["name"], ("failed", 0.0, "not run"))
            f.write(f"{status}\t{seconds:.2f}\t{e['name']}" + (f"\t{note}" if note else "") + "\n")
    with open(os.path.join(args.out, "failures.log"), "w") as f:
        for title, text in suite.failure_logs:
            f.write(f"==== {title}\n{text}\n\n")
    with open(os.path.join(args.out, "case-times.json"), "w") as f:
        json.dump({k: round(v, 3) for k, v in sorted(suite.new_times.items())}, f, indent=0)

    counts = {}
    for e in entries:
        status = suite.results.get(e["name"], ("failed",))[0]
        prefix = e["name"].split(" | ", 1)[0] if " | " in e["name"] else "other"
        c = counts.setdefault(prefix, {"passed": 0, "failed": 0, "skipped": 0})
        c[status] += 1
    total = {s: sum(c[s] for c in counts.values()) for s in ("passed", "failed", "skipped")}
    processes = len(work) + len(alone)
    print(f"{total['passed'] + total['skipped']} of {len(entries)} entries passed or skipped "
          f"({total['failed']} failed, {total['skipped']} skipped) in {time.monotonic() - wall:.0f} s; "
          f"{len(catch_entries)} Catch2 cases and {len(plain)} other entries in about {processes} processes, -j {args.jobs}")
    print("per-device results (entry prefix: passed / failed / skipped):")
    for k in sorted(counts):
        c = counts[k]
        print(f"  {k:<45} {c['passed']:4d} / {c['failed']} / {c['skipped']}")
    if alone_passed:
        print(f"{len(alone_passed)} of the failed cases passed when run alone (failed only beside other cases: "
              "a state leak between cases, in gpurt or in the test)")
    if total["failed"]:
        print("failed:")
        for e in entries:
            r = suite.results.get(e["name"], ("failed", 0.0, "not run"))
            if r[0] == "failed":
                print(f"  {e['name']}" + (f"  [{r[2]}]" if r[2] else ""))
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
