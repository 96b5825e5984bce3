#!/usr/bin/env python3
"""`gpurt conformance -d SELECTOR` accepts exactly the selectors GPURT_DEVICE accepts, and picks the device
GPURT_DEVICE picks (README: "Selector syntax, used by device(), by GPURT_DEVICE and by every command line").

    check_selectors.py GPURT SUITE

For every selector below (fixed ones, and ones made from this machine's device names, vendors and
platforms): `gpurt info --json` with GPURT_DEVICE=SELECTOR gives the library's choice (or its error);
`gpurt conformance -d SELECTOR` must then choose that device among the ones it runs (exit 0), or refuse
the selector with "no device matches" (exit 2) when the library does. A selector of an unavailable
backend gives that backend's column, every case skipped with the reason.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

gpurt, suite = sys.argv[1], sys.argv[2]
CASE = "^device properties are sane$"


def run(args, env=None):
    e = dict(os.environ)
    e.pop("GPURT_DEVICE", None)
    e.update(env or {})
    p = subprocess.run(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode < 0 or "terminate called" in p.stderr:
        sys.exit(f"FAIL: {args} crashed (signal {-p.returncode})\n{p.stderr}")
    return p


info = json.loads(run([gpurt, "info", "--json"]).stdout)
available = {b["name"]: b["available"] for b in info["backends"]}
selectors = ["opencl", "OpenCL", "opencl:0", "opencl:pocl", "OpenCL:PoCL", "opencl:portable computing",
             "opencl:no-such-device", "opencl:7"]
if "cuda" in available:  # a backend is a plugin found: a build without the CUDA plugin has no "cuda"
    selectors += ["cuda", "cuda:0"]
for d in info["devices"]:
    for field in ("name", "vendor", "platform", "platform_version"):
        text = d[field].strip()
        if text and ":" not in text and "," not in text:
            selectors.append(d["backend"] + ":" + text.upper())

def check(sel):
    lib = json.loads(run([gpurt, "info", "--json"], {"GPURT_DEVICE": sel}).stdout)
    chosen = lib.get("default_device")
    p = run([gpurt, "conformance", "--suite", suite, "-d", sel, "-c", CASE, "--json"])
    backend = sel.split(":")[0].lower()
    if not available.get(backend, False):
        want = f"exit 0 with the unavailable {backend} column, skipped"
        ok = p.returncode == 0 and [d["selector"] for d in json.loads(p.stdout)["devices"]] == [backend] \
            and all(r["status"] == "skip" for c in json.loads(p.stdout)["cases"] for r in c["results"].values())
    elif chosen is None:
        want = "exit 2, no device matches (the library says: " + lib.get("default_device_error", "?")[:80] + ")"
        ok = p.returncode == 2 and "no device matches" in p.stderr and "no device matches" in lib.get("default_device_error", "")
    else:
        want = f"exit 0 running {chosen}"
        ok = p.returncode == 0 and chosen in [d["selector"] for d in json.loads(p.stdout)["devices"]]
    line = f"{'ok  ' if ok else 'FAIL'} -d {sel!r}: expected {want}; got exit {p.returncode}"
    problem = None if ok else f"-d {sel!r}\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
    return line, problem


# Each selector is checked by processes of its own, several at once (the answers do not depend on
# one another); the report keeps the order above.
problems = []
with concurrent.futures.ThreadPoolExecutor(max(1, min(8, os.cpu_count() or 1))) as pool:
    for line, problem in pool.map(check, selectors):
        print(line)
        if problem:
            problems.append(problem)
if problems:
    sys.exit("\n".join(problems))
