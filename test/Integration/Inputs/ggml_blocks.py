"""Writes two random ggml blocks of a format and their values.

An implementation of the block formats independent of cachet's (written from
the table in DESIGN.md / ggml), used to check the compiled dequantization.

Usage: ggml_blocks.py FORMAT SEED BLOCKS_OUT VALUES_OUT
"""
import random
import struct
import sys

KVALUES = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]
LAYOUT = {  # bytes, has m, has qh
    "q8_0": (34, False, False),
    "q4_0": (18, False, False),
    "q4_1": (20, True, False),
    "q5_0": (22, False, True),
    "q5_1": (24, True, True),
    "iq4_nl": (18, False, False),
}


def half(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def block(fmt, rng):
    size, has_m, has_qh = LAYOUT[fmt]
    d = half(rng.uniform(-0.1, 0.1))
    m = half(rng.uniform(-1, 1))
    raw = struct.pack("<e", d)
    if has_m:
        raw += struct.pack("<e", m)
    qh = rng.getrandbits(32)
    if has_qh:
        raw += struct.pack("<I", qh)
    if fmt == "q8_0":
        qs = [rng.randrange(-128, 128) for _ in range(32)]
        raw += struct.pack("<32b", *qs)
        return raw, [d * q for q in qs]
    qs = [rng.randrange(256) for _ in range(16)]
    raw += bytes(qs)
    assert len(raw) == size
    values = []
    for i in range(32):
        nib = qs[i] & 15 if i < 16 else qs[i - 16] >> 4
        if fmt == "iq4_nl":
            values.append(d * KVALUES[nib])
            continue
        q = nib | (((qh >> i) & 1) << 4) if has_qh else nib
        if has_m:
            values.append(d * q + m)
        else:
            values.append(d * (q - (16 if has_qh else 8)))
    return raw, values


def main():
    fmt, seed, blocks_out, values_out = sys.argv[1:]
    rng = random.Random(int(seed))
    raw, values = b"", []
    for _ in range(2):
        r, v = block(fmt, rng)
        raw += r
        values += v
    open(blocks_out, "wb").write(raw)
    open(values_out, "w").write(" ".join(repr(v) for v in values) + "\n")


main()
