#!/usr/bin/python3
"""Checks that a shared library exports exactly the functions its public header declares,
and that the dp_api table has a member for each of them.

  check_exports.py HEADER LIBRARY
"""
import re
import subprocess
import sys


def main():
    header, library = sys.argv[1], sys.argv[2]
    text = open(header).read()
    declared = set(re.findall(r"DP_EXPORT\s+[^;{]*?\b(dp_[a-z0-9_]+)\s*\(", text))
    nm = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                        capture_output=True, text=True).stdout
    exported = set()
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwDdBbRrVv":
            exported.add(parts[2].split("@")[0])
    table = re.search(r"typedef struct dp_api \{(.*?)\} dp_api;", text, re.S).group(1)
    members = set(re.findall(r"\(\*([a-z0-9_]+)\)\(", table))
    problems = []
    for name in sorted(exported - declared):
        problems.append(f"exported but not declared in the header: {name}")
    for name in sorted(declared - exported):
        problems.append(f"declared in the header but not exported: {name}")
    for name in sorted(declared - {"dp_get_api"}):
        if name[3:] not in members:
            problems.append(f"no dp_api member for {name} (expected '{name[3:]}')")
    for m in sorted(members):
        if "dp_" + m not in declared:
            problems.append(f"dp_api member '{m}' has no function dp_{m}")
    for p in problems:
        print(p)
    print(f"{len(declared)} declared, {len(exported)} exported, {len(members)} table members: "
          f"{'OK' if not problems else 'MISMATCH'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
