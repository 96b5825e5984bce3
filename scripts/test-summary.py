#!/usr/bin/env python3
"""The end of scripts/test.sh: what CTest's JUnit file (ctest --output-junit) says, in a few lines -
passed / failed / skipped, the skips grouped by their reason (the test's "SKIPPED: ..." line, else
CTest's), the failures by name, and how long the run took.

  test-summary.py JUNIT_XML SECONDS
"""
import collections
import sys
import xml.etree.ElementTree as ET


def skip_reason(case):
    out = case.findtext("system-out") or ""
    for line in out.splitlines():
        if line.startswith("SKIPPED: "):
            return line[len("SKIPPED: "):].strip()
    node = case.find("skipped")
    return (node.get("message") if node is not None else None) or "no reason given"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test-summary.py: no CTest results to summarise ({e})")
        return
    seconds = int(float(sys.argv[2]))
    passed, failed, skipped = [], [], collections.Counter()
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        if case.get("status") == "notrun" or case.find("skipped") is not None:
            skipped[skip_reason(case)] += 1
        elif case.find("failure") is not None or case.get("status") == "fail":
            failed.append(name)
        else:
            passed.append(name)
    total = len(passed) + len(failed) + sum(skipped.values())
    print()
    print(f"scripts/test.sh: {total} tests in {seconds // 60} min {seconds % 60} s: "
          f"{len(passed)} passed, {len(failed)} failed, {sum(skipped.values())} skipped")
    if skipped:
        print("skipped, by reason:")
        for reason, n in skipped.most_common():
            print(f"  {n:5d}  {reason if len(reason) <= 200 else reason[:197] + '...'}")
    if failed:
        print("failed:")
        for name in failed:
            print(f"  {name}")


if __name__ == "__main__":
    main()
