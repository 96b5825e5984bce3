#!/usr/bin/env python3
"""Checks a gpurt Chrome trace: valid JSON, host spans, and device spans of the given kind on a
device track. Usage: check_trace.py TRACE.json [launch|copy|...]. Prints a one-line summary."""
import json
import sys

path = sys.argv[1]
kind = sys.argv[2] if len(sys.argv) > 2 else "launch"
with open(path) as f:
    events = json.load(f)["traceEvents"]
spans = [e for e in events if e.get("ph") == "X"]
host = [e for e in spans if e.get("cat") == "host"]
device = [e for e in spans if e.get("cat") == "device"]
named = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
wanted = [e for e in device if e["name"].startswith(kind)]
if not host or not wanted:
    sys.exit(f"check_trace: {path}: {len(host)} host spans, {len(wanted)} device '{kind}' spans; expected both")
print(f"trace OK: {len(host)} host spans, {len(device)} device spans on "
      f"{', '.join(sorted(named[p] for p in {e['pid'] for e in device}))}")
