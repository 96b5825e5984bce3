#!/usr/bin/env python3
"""Runs one gpurt command line and checks its exact exit code and its output.

    run_cli.py --exit N [checks...] -- COMMAND [ARGS...]

Checks (each may repeat):
  --out TEXT            TEXT appears in stdout or stderr
  --out-re REGEX        REGEX (Python, DOTALL) matches somewhere in stdout + stderr
  --stdout TEXT         TEXT appears in stdout
  --stderr TEXT         TEXT appears in stderr
  --not-out TEXT        TEXT appears in neither
  --stdout-first-line L the first line of stdout is exactly L
  --stdout-starts T / --stdout-ends T
  --json KIND           stdout is one JSON document of KIND (info, conformance, any) with its documented shape
  --check EXPR          a Python expression on `doc` (the parsed stdout) that must be true
  --stdout-json-equals F  stdout is JSON equal to the JSON file F
Setup:
  --env NAME=VALUE      set in the command's environment
  --fifo PATH           make a FIFO at PATH first
  --sparse PATH:BYTES   make a sparse file of BYTES bytes at PATH first
  --timeout S           seconds before the command counts as hung (default 300)

Whatever else happens, a crash is a failure: a death by signal (abort is 134 in a shell) or
"terminate called" in stderr. Exit status: 0 when every check holds, 1 otherwise (with the
command's output).
"""
import argparse
import json
import os
import re
import subprocess
import sys

INFO_STATUSES = {"available", "plugin_not_found", "plugin_invalid", "vendor_library_missing", "no_device",
                 "init_failed", "disabled_by_environment"}


def check_info(doc, fail):
    """`gpurt info --json`: backends with name/status/reason, devices with selector and properties."""
    if not isinstance(doc, dict):
        return fail("info --json is not an object")
    for key in ("gpurt_version", "backends", "devices", "default_device"):
        if key not in doc:
            fail(f"info --json lacks {key}")
    backends, devices = doc.get("backends"), doc.get("devices")
    if not isinstance(backends, list) or not isinstance(devices, list):
        return fail("backends and devices must be arrays")
    names = [b.get("name") for b in backends]
    # The plugins this build made (CTest sets GPURT_TEST_BACKENDS): each backend is a plugin found.
    expected = sorted(os.environ.get("GPURT_TEST_BACKENDS", "cuda,opencl").split(","))
    if sorted(names) != expected:
        fail(f"backends are {names}, expected {', '.join(expected)}, each once")
    for b in backends:
        for key, kind in (("name", str), ("status", str), ("reason", str), ("available", bool),
                          ("searched", list), ("device_count", int), ("version", str), ("notes", list)):
            if not isinstance(b.get(key), kind):
                fail(f"backend {b.get('name')}: {key} is {b.get(key)!r}, expected {kind.__name__}")
        if b.get("status") not in INFO_STATUSES:
            fail(f"backend {b.get('name')}: unknown status {b.get('status')!r}")
        for key, kind in (("description", str), ("install_hint", str), ("languages", list), ("priority", int)):
            if b.get("plugin_path") and b.get("status") == "available" and not isinstance(b.get(key), kind):
                fail(f"backend {b.get('name')}: {key} is {b.get(key)!r}, expected {kind.__name__}")
        if b.get("available") != (b.get("status") == "available"):
            fail(f"backend {b.get('name')}: available={b.get('available')} but status={b.get('status')}")
        if b.get("status") != "available" and not b.get("reason"):
            fail(f"backend {b.get('name')} is unavailable without a reason")
        if b.get("status") == "available" and b.get("reason"):
            fail(f"backend {b.get('name')} is available but has a reason: {b.get('reason')!r}")
        mine = [d for d in devices if isinstance(d, dict) and d.get("backend") == b.get("name")]
        if b.get("device_count") != len(mine):
            fail(f"backend {b.get('name')}: device_count {b.get('device_count')} but {len(mine)} devices listed")
    selectors = []
    for d in devices:
        if not isinstance(d, dict):
            fail(f"device {d!r} is not an object")
            continue
        sel = d.get("selector", "")
        selectors.append(sel)
        if not re.fullmatch(r"(cuda|opencl):[0-9]+", str(sel)) or not sel.startswith(str(d.get("backend")) + ":"):
            fail(f"device selector {sel!r} is not BACKEND:INDEX of its backend {d.get('backend')!r}")
        for key, kind in (("name", str), ("vendor", str), ("platform", str), ("platform_version", str),
                          ("type", str), ("driver_version", str), ("languages", list),
                          ("same_physical_device_as", list)):
            if not isinstance(d.get(key), kind):
                fail(f"device {sel}: {key} is {d.get(key)!r}, expected {kind.__name__}")
        for key in ("global_memory", "max_allocation", "compute_units", "max_group_size", "simd_width",
                    "view_alignment"):
            if not isinstance(d.get(key), int) or d.get(key) <= 0:
                fail(f"device {sel}: {key} is {d.get(key)!r}, expected a positive integer")
        if isinstance(d.get("max_allocation"), int) and isinstance(d.get("global_memory"), int) \
                and d["max_allocation"] > d["global_memory"]:
            fail(f"device {sel}: max_allocation exceeds global_memory")
        for key in ("max_group_dims", "max_groups"):
            v = d.get(key)
            if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, int) and x > 0 for x in v)):
                fail(f"device {sel}: {key} is {v!r}, expected three positive integers")
        if not d.get("languages"):
            fail(f"device {sel} accepts no source language")
        # README: info shows "the vendor BLAS gpurt::lib's matmuls call on each (name, version and
        # file, or why there is none; vendor_library in JSON)".
        v = d.get("vendor_library")
        if not isinstance(v, dict) or not isinstance(v.get("available"), bool) or \
                not all(isinstance(v.get(k), str) for k in ("name", "version", "path", "reason")):
            fail(f"device {sel}: vendor_library is {v!r}, expected available, name, version, path, reason")
        elif v["available"] != (v["reason"] == "") or v["available"] != (v["path"] != ""):
            fail(f"device {sel}: vendor_library {v!r} must have a path when available and a reason when not")
    if len(set(selectors)) != len(selectors):
        fail(f"device selectors repeat: {selectors}")
    default = doc.get("default_device")
    if default is not None and default not in selectors:
        fail(f"default_device {default!r} is not a listed device")
    if default is None and devices and "default_device_error" not in doc:
        fail("devices exist but default_device is null without default_device_error")
    # README: "device_pairs": every ordered pair of distinct devices of one backend, once, with
    # whether the first reaches the second's memory directly (gpurt::peer_access).
    backend_of = {d.get("selector"): d.get("backend") for d in devices}
    pairs = doc.get("device_pairs")
    if not isinstance(pairs, list):
        return fail("info --json lacks the device_pairs array")
    want = sorted((a, b) for a in selectors for b in selectors if a != b and backend_of[a] == backend_of[b])
    got = sorted((p.get("from"), p.get("to")) for p in pairs)
    if got != want:
        fail(f"device_pairs are {got}, expected every ordered pair of one backend's devices: {want}")
    for p in pairs:
        if not isinstance(p.get("peer_access"), bool):
            fail(f"device pair {p}: peer_access is not a boolean")


def check_conformance(doc, fail):
    """`gpurt conformance --json`: devices with totals, cases with one result per device."""
    if not isinstance(doc, dict) or not isinstance(doc.get("devices"), list) or not isinstance(doc.get("cases"), list):
        return fail("conformance --json must have devices and cases arrays")
    selectors = [d.get("selector") for d in doc["devices"]]
    counts = {s: {"pass": 0, "fail": 0, "skip": 0} for s in selectors}
    for c in doc["cases"]:
        results = c.get("results", {})
        if sorted(results) != sorted(selectors):
            fail(f"case {c.get('name')!r} has results for {sorted(results)}, devices are {sorted(selectors)}")
        for sel, r in results.items():
            if r.get("status") not in ("pass", "fail", "skip"):
                fail(f"case {c.get('name')!r} on {sel}: status {r.get('status')!r}")
            elif sel in counts:
                counts[sel][r["status"]] += 1
    for d in doc["devices"]:
        got = (d.get("passed"), d.get("failed"), d.get("skipped"))
        want = counts[d.get("selector")]
        if got != (want["pass"], want["fail"], want["skip"]):
            fail(f"device {d.get('selector')}: totals {got} but the cases say {want}")
    if doc.get("failed") != any(v["fail"] for v in counts.values()):
        fail(f"failed is {doc.get('failed')!r} but the cases say otherwise")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exit", type=int, required=True)
    for name in ("out", "out-re", "stdout", "stderr", "not-out", "check", "env", "fifo", "sparse"):
        ap.add_argument("--" + name, action="append", default=[])
    ap.add_argument("--stdout-first-line")
    ap.add_argument("--stdout-starts")
    ap.add_argument("--stdout-ends")
    ap.add_argument("--json", choices=("info", "conformance", "any"))
    ap.add_argument("--stdout-json-equals")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("no command given")

    for path in a.fifo:
        if os.path.lexists(path):
            os.remove(path)
        os.mkfifo(path)
    for spec in a.sparse:
        path, size = spec.rsplit(":", 1)
        with open(path, "wb") as f:
            f.truncate(int(size))
    env = dict(os.environ)
    for e in a.env:
        k, v = e.split("=", 1)
        env[k] = v

    try:
        p = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.timeout)
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: {command} did not finish in {a.timeout} s (hung?)\n--- stdout\n{e.stdout}\n--- stderr\n{e.stderr}")
        return 1
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    both = out + err
    problems = []
    fail = problems.append

    if p.returncode < 0:
        fail(f"killed by signal {-p.returncode} (an abort is signal 6, 134 in a shell)")
    if p.returncode != a.exit:
        fail(f"exit code {p.returncode}, expected {a.exit}")
    if "terminate called" in err:
        fail("an exception escaped (terminate called)")
    for t in a.out:
        if t not in both:
            fail(f"output lacks {t!r}")
    for r in a.out_re:
        if not re.search(r, both, re.S):
            fail(f"output does not match /{r}/")
    for t in a.stdout:
        if t not in out:
            fail(f"stdout lacks {t!r}")
    for t in a.stderr:
        if t not in err:
            fail(f"stderr lacks {t!r}")
    for t in a.not_out:
        if t in both:
            fail(f"output has {t!r}")
    if a.stdout_first_line is not None and out.split("\n", 1)[0] != a.stdout_first_line:
        fail(f"stdout's first line is {out.split(chr(10), 1)[0]!r}, expected {a.stdout_first_line!r}")
    if a.stdout_starts is not None and not out.startswith(a.stdout_starts):
        fail(f"stdout does not start with {a.stdout_starts!r}")
    if a.stdout_ends is not None and not out.rstrip("\n").endswith(a.stdout_ends):
        fail(f"stdout does not end with {a.stdout_ends!r}")
    doc = None
    if a.json or a.check or a.stdout_json_equals:
        try:
            doc = json.loads(out)
        except ValueError as e:
            fail(f"stdout is not one JSON document: {e}")
    if doc is not None:
        if a.json == "info":
            check_info(doc, fail)
        elif a.json == "conformance":
            check_conformance(doc, fail)
        for expr in a.check:
            try:
                ok = eval(expr, {"doc": doc})
            except Exception as e:  # a missing key is a failed check, not a crash of the checker
                ok, expr = False, f"{expr} ({type(e).__name__}: {e})"
            if not ok:
                fail(f"check failed: {expr}")
        if a.stdout_json_equals:
            with open(a.stdout_json_equals) as f:
                if json.load(f) != doc:
                    fail(f"stdout differs from {a.stdout_json_equals}")

    if problems:
        print("FAIL: " + " ".join(command))
        for x in problems:
            print("  - " + x)
        print(f"--- stdout ({len(out)} chars)\n{out[-6000:]}\n--- stderr ({len(err)} chars)\n{err[-6000:]}")
        return 1
    print(f"ok: exit {p.returncode}; {' '.join(command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
