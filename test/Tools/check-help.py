"""Checks that `cachet-opt --help` lists every pass declared in Passes.td.

Usage: check-help.py PASSES_TD HELP_TEXT_FILE
"""
import re
import sys

declared = re.findall(r'Pass<"(cachet-[a-z0-9-]+)"', open(sys.argv[1]).read())
help_text = open(sys.argv[2]).read()
missing = [p for p in declared if f"--{p}" not in help_text]
if not declared:
    sys.exit("no passes found in " + sys.argv[1])
for name in declared:
    print(("MISSING " if name in missing else "listed ") + name)
sys.exit(1 if missing else 0)
