"""Writes 16 blocks of 32 f32 values with NaNs where a scan in order and a
tree of lanes could disagree: a NaN first, in the middle, last, every value
NaN, a NaN before and after the largest magnitude, NaN beside -0 / +0 and
beside ties of magnitude; then random blocks with one NaN each.

Usage: nan_blocks.py OUT
"""
import math
import random
import struct
import sys

nan = float("nan")
rng = random.Random(11)


def rand_block():
    return [rng.uniform(-1, 1) for _ in range(32)]


blocks = []
for pos in (0, 13, 31):
    b = rand_block()
    b[pos] = nan
    blocks.append(b)
blocks.append([nan] * 32)
b = rand_block()
b[5], b[9] = nan, 3.0
blocks.append(b)
b = rand_block()
b[5], b[9] = 3.0, nan
blocks.append(b)
b = [0.0] * 32
b[3], b[4], b[7] = -0.0, nan, 0.0
blocks.append(b)
b = rand_block()
b[2], b[20], b[25] = -2.0, nan, 2.0
blocks.append(b)
while len(blocks) < 16:
    b = rand_block()
    b[rng.randrange(32)] = nan
    blocks.append(b)
with open(sys.argv[1], "wb") as f:
    for b in blocks:
        f.write(struct.pack("<32f", *b))
