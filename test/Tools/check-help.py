"""Checks that `cachet-opt --help` lists every pass declared in TableGen.

Usage: check-help.py HELP_TEXT_FILE PASSES_TD...
"""
import re
import sys

help_text = open(sys.argv[1]).read()
declared = [
    name
    for td in sys.argv[2:]
    for name in re.findall(r'Pass<"(cachet-[a-z0-9-]+)"', open(td).read())
]
missing = [p for p in declared if f"--{p}" not in help_text]
if not declared:
    sys.exit("no passes found in " + " ".join(sys.argv[2:]))
for name in declared:
    print(("MISSING " if name in missing else "listed ") + name)
sys.exit(1 if missing else 0)
