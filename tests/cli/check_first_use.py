#!/usr/bin/env python3
"""Runs gpurt-first-use on one device, small, and checks that it ran and reported what it promises.

    check_first_use.py PROGRAM SELECTOR

bench/first_use.cpp promises: every measurement in a fresh process; the ratios "first gpurt /
first raw", "first gpurt / warm gpurt" (both directions) and "pipeline gpurt / raw (time)" printed
with their targets; --json writes every figure; exit 0 when every measurement ran. No timing is
asserted: only that each figure exists and is a positive number, and the pipelines were correct.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    program, selector = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        cache = os.path.join(tmp, "cache")
        out_json = os.path.join(tmp, "first-use.json")
        env = dict(os.environ, GPURT_CACHE_DIR=cache)
        r = subprocess.run([program, "--device", selector, "--floats", "1000003", "--runs", "1", "--json", out_json],
                           capture_output=True, text=True, env=env, timeout=600)
        text = r.stdout + r.stderr
        problems = []
        if r.returncode != 0:
            problems.append(f"exit {r.returncode}")
        if "terminate called" in text:
            problems.append("a crash (terminate called)")
        for line in ("first gpurt / first raw, upload", "first gpurt / first raw, download",
                     "first gpurt / warm gpurt, upload", "first gpurt / warm gpurt, download",
                     "pipeline gpurt / raw (time)", "raw first copy", "gpurt warm"):
            if line not in r.stdout:
                problems.append(f"no line '{line}' in the output")
        try:
            with open(out_json) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            doc = {}
            problems.append(f"no JSON: {e}")
        if doc:
            if doc.get("floats") != 1000003 or doc.get("pipeline_correct") is not True:
                problems.append(f"floats {doc.get('floats')!r}, pipeline_correct {doc.get('pipeline_correct')!r}")
            for key in ("raw_first_upload", "raw_first_download", "gpurt_upload", "gpurt_download",
                        "gpurt_norecord_upload", "gpurt_warm_upload", "gpurt_warm_download"):
                v = doc.get("rates_gbs", {}).get(key)
                if not isinstance(v, (int, float)) or v <= 0:
                    problems.append(f"rates_gbs.{key} is {v!r}, expected a positive number")
            for name in ("first gpurt / first raw, upload", "first gpurt / warm gpurt, download",
                         "pipeline gpurt / raw (time)"):
                entry = doc.get("ratios", {}).get(name, {})
                if not (isinstance(entry.get("value"), (int, float)) and entry["value"] > 0 and "met" in entry):
                    problems.append(f"ratio '{name}' is {entry!r}")
            # The preparing run stored the device's staging measurement in this cache: the timed
            # gpurt-copy process loaded it instead of measuring.
            if doc.get("median", {}).get("gpurt_measurement_loaded") != 1:
                problems.append("the timed gpurt process did not load the stored staging measurement")
        if problems:
            print("FAILED:\n  " + "\n  ".join(problems) + "\n--- output ---\n" + text)
            return 1
        print(r.stdout)
        return 0


if __name__ == "__main__":
    sys.exit(main())
