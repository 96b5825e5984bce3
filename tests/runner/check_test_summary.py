#!/usr/bin/env python3
"""scripts/test-summary.py on a sample of CTest's JUnit output with each kind of result: the counts,
the skips grouped by reason (the "SKIPPED:" line, else CTest's message), the failures by name and
the time, as scripts/test.sh's last lines promise.

  check_test_summary.py SCRIPT SAMPLE_XML
"""
import subprocess
import sys

script, sample = sys.argv[1:3]
out = subprocess.run([sys.executable, script, sample, "754"], capture_output=True, text=True, check=True).stdout
want = [
    "scripts/test.sh: 5 tests in 12 min 34 s: 1 passed, 1 failed, 3 skipped",
    "skipped, by reason:",
    "      2  the cuda backend is unavailable here",
    "      1  SKIP_REGULAR_EXPRESSION_MATCHED",
    "failed:",
    "  opencl:0 | d",
]
got = [line for line in out.splitlines() if line]
if got != want:
    sys.exit("test-summary.py printed:\n" + out + "\nexpected:\n" + "\n".join(want))
print("ok")
