"""ggml blocks, independent of cachet's implementation.

Decoding (written from the table in DESIGN.md / ggml), to check the compiled
dequantization: writes two random blocks of a format and their values (64,
or 512 for the k-quants q2_K, q4_K, q5_K and q6_K).

    ggml_blocks.py FORMAT SEED BLOCKS_OUT VALUES_OUT

Encoding (written from the rules of ggml's quantize_row_*_ref, every step in
f32 as C computes it), to check the compiled quantization: writes the input
values of the edge-case and random blocks (as ELEMENT: f32, f16 or bf16) and
the bytes ggml's reference makes of them.

    ggml_blocks.py encode FORMAT ELEMENT SEED VALUES_OUT EXPECTED_OUT [even]

Comparison of the `values:` lines cachet-run --print-results prints (a
packed result's bytes as signed i8, or the split q8_0 form's quants and f16
scales) with EXPECTED_OUT, exactly:

    ggml_blocks.py compare FORMAT RUN_OUTPUT EXPECTED_OUT [split]
"""
import ctypes
import math
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
K_BYTES = {"q2_K": 84, "q3_K": 110, "q4_K": 144, "q5_K": 176, "q6_K": 210,  # of 256
           "tq2_0": 66, "tq1_0": 54}


def half(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def k_block(fmt, rng):
    """A random q2_K, q3_K, q4_K, q5_K, q6_K, tq2_0 or tq1_0 super-block and its 256 values,
    by the layouts of ggml-common.h and the formulas of dequantize_row_*."""
    if fmt == "tq2_0":
        d = half(rng.uniform(-0.1, 0.1))
        qs = [rng.randrange(256) for _ in range(64)]
        values = []
        for j in range(0, 64, 32):
            for l in range(4):
                for m in range(32):
                    values.append((((qs[j + m] >> (2 * l)) & 3) - 1) * d)
        return bytes(qs) + struct.pack("<e", d), values
    if fmt == "tq1_0":
        d = half(rng.uniform(-0.1, 0.1))
        qs = [rng.randrange(256) for _ in range(48)]
        qh = [rng.randrange(256) for _ in range(4)]
        pow3 = [1, 3, 9, 27, 81, 243]
        digit = lambda b, n: (((b * pow3[n]) & 0xFF) * 3) >> 8
        values = []
        for n in range(5):
            values += [(digit(qs[m], n) - 1) * d for m in range(32)]
        for n in range(5):
            values += [(digit(qs[32 + m], n) - 1) * d for m in range(16)]
        for n in range(4):
            values += [(digit(qh[j], n) - 1) * d for j in range(4)]
        return bytes(qs) + bytes(qh) + struct.pack("<e", d), values
    if fmt == "q2_K":
        sc = [rng.randrange(256) for _ in range(16)]
        qs = [rng.randrange(256) for _ in range(64)]
        d, dmin = half(rng.uniform(-0.01, 0.01)), half(rng.uniform(-0.01, 0.01))
        raw = bytes(sc) + bytes(qs) + struct.pack("<ee", d, dmin)
        values = []
        for n in range(2):  # halves of 128: 32 bytes of qs each
            for t in range(4):  # bit pairs 2t
                for half16 in range(2):
                    s = sc[8 * n + 2 * t + half16]
                    for l in range(16):
                        q = (qs[32 * n + 16 * half16 + l] >> (2 * t)) & 3
                        values.append(d * (s & 0xF) * q - dmin * (s >> 4))
        return raw, values
    if fmt == "q3_K":
        hm = [rng.randrange(256) for _ in range(32)]
        qs = [rng.randrange(256) for _ in range(64)]
        sc = [rng.randrange(256) for _ in range(12)]
        d = half(rng.uniform(-0.01, 0.01))
        raw = bytes(hm) + bytes(qs) + bytes(sc) + struct.pack("<e", d)
        # The 16 scales as ggml unpacks them: three little-endian words of
        # the 12 bytes, their nibbles and the third word's bit pairs.
        a0, a1, tmp = struct.unpack("<III", bytes(sc))
        k1, k2 = 0x03030303, 0x0F0F0F0F
        aux = [(a0 & k2) | (((tmp >> 0) & k1) << 4),
               (a1 & k2) | (((tmp >> 2) & k1) << 4),
               ((a0 >> 4) & k2) | (((tmp >> 4) & k1) << 4),
               ((a1 >> 4) & k2) | (((tmp >> 6) & k1) << 4)]
        scales = [b - 256 if b > 127 else b
                  for b in struct.pack("<IIII", *aux)]
        values = []
        mask, index = 1, 0
        for n in range(2):  # halves of 128: 32 bytes of qs each
            for shift in range(0, 8, 2):
                for half16 in range(2):
                    dl = d * (scales[index] - 32)
                    index += 1
                    for l in range(16 * half16, 16 * half16 + 16):
                        q = (qs[32 * n + l] >> shift) & 3
                        values.append(dl * (q - (0 if hm[l] & mask else 4)))
                mask <<= 1
        return raw, values
    if fmt in ("q4_K", "q5_K"):
        d, dmin = half(rng.uniform(-0.01, 0.01)), half(rng.uniform(-0.01, 0.01))
        sc = [rng.randrange(256) for _ in range(12)]
        qh = [rng.randrange(256) for _ in range(32)] if fmt == "q5_K" else []
        qs = [rng.randrange(256) for _ in range(128)]
        raw = struct.pack("<ee", d, dmin) + bytes(sc) + bytes(qh) + bytes(qs)
        values = []
        for j in range(8):  # sub-blocks of 32
            if j < 4:
                scale, m = sc[j] & 63, sc[j + 4] & 63
            else:
                scale = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4)
                m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4)
            for l in range(32):
                byte = qs[32 * (j // 2) + l]
                q = byte & 0xF if j % 2 == 0 else byte >> 4
                if qh:  # q5_K: bit j of qh[l] is the fifth
                    q += 16 * ((qh[l] >> j) & 1)
                values.append(d * scale * q - dmin * m)
        return raw, values
    d = half(rng.uniform(-0.001, 0.001))
    ql = [rng.randrange(256) for _ in range(128)]
    qh = [rng.randrange(256) for _ in range(64)]
    sc = [rng.randrange(-128, 128) for _ in range(16)]
    raw = bytes(ql) + bytes(qh) + struct.pack("<16b", *sc) + struct.pack("<e", d)
    values = [0.0] * 256
    for n in range(2):  # halves of 128
        for l in range(32):
            s = sc[8 * n + l // 16:]
            a, b, h = ql[64 * n + l], ql[64 * n + l + 32], qh[32 * n + l]
            values[128 * n + l] = d * s[0] * (((a & 0xF) | ((h & 3) << 4)) - 32)
            values[128 * n + l + 32] = d * s[2] * (
                ((b & 0xF) | (((h >> 2) & 3) << 4)) - 32)
            values[128 * n + l + 64] = d * s[4] * (
                ((a >> 4) | (((h >> 4) & 3) << 4)) - 32)
            values[128 * n + l + 96] = d * s[6] * (
                ((b >> 4) | (((h >> 6) & 3) << 4)) - 32)
    return raw, values


def block(fmt, rng):
    if fmt in K_BYTES:
        return k_block(fmt, rng)
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


# ---------------------------------------------------------------- encoding

BLOCKS = 12  # edge-case blocks below, then random ones


def f32(x):
    """x rounded to f32 (the result of one C float operation)."""
    return ctypes.c_float(x).value


def f16_bits(x):
    """GGML_FP32_TO_FP16: round to nearest even, inf on overflow."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def f16(x):
    return struct.unpack("<e", struct.pack("<H", f16_bits(x)))[0]


def bf16(x):
    return struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", x))[0] & 0xFFFF0000))[0]


def c_roundf(x):
    # Exact in double for an f32 x: halves away from zero.
    return math.copysign(math.floor(abs(x) + 0.5), x)


def c_roundeven(x):
    r = c_roundf(x)
    if abs(x - math.trunc(x)) == 0.5 and r % 2 != 0:
        r -= math.copysign(1, x)
    return r


def abs_max(xs):
    """ggml's amax / max: the first value of largest magnitude."""
    amax, vmax = 0.0, 0.0
    for v in xs:
        if amax < abs(v):
            amax, vmax = abs(v), v
    return amax, vmax


def inv(d):
    return f32(1.0 / d) if d != 0 else 0.0


def best_index(x):
    """ggml's best_index_int8 over the iq4_nl code book."""
    if x <= KVALUES[0]:
        return 0
    if x >= KVALUES[15]:
        return 15
    lo, hi = 0, 15
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if x < KVALUES[mid]:
            hi = mid
        else:
            lo = mid
    return hi - 1 if f32(x - KVALUES[hi - 1]) < f32(KVALUES[hi] - x) else hi


def half_bytes(x):
    return list(struct.pack("<H", f16_bits(x)))


def pack_nibbles(q):
    return [(q[j] & 15) | ((q[j + 16] & 15) << 4) for j in range(16)]


def high_bits(q):
    qh = 0
    for j in range(32):
        qh |= ((q[j] >> 4) & 1) << j
    return list(struct.pack("<I", qh))


def encode(fmt, xs, even=False):
    """The bytes of one block of 32 f32 values, as ggml's reference."""
    if fmt == "q8_0":
        amax = 0.0
        for v in xs:
            amax = amax if amax > abs(v) else abs(v)
        d = f32(amax / 127)
        i = inv(d)
        r = c_roundeven if even else c_roundf
        return half_bytes(d) + [int(r(f32(v * i))) & 0xFF for v in xs]
    if fmt in ("q4_0", "q5_0"):
        n = 8 if fmt == "q4_0" else 16
        d = f32(abs_max(xs)[1] / -n)
        i = inv(d)
        q = [min(2 * n - 1, int(f32(f32(v * i) + n + 0.5))) for v in xs]
        hb = high_bits(q) if fmt == "q5_0" else []
        return half_bytes(d) + hb + pack_nibbles(q)
    if fmt in ("q4_1", "q5_1"):
        lo, hi = 3.4028234663852886e38, -3.4028234663852886e38
        for v in xs:
            lo = v if v < lo else lo
            hi = v if v > hi else hi
        levels = 15 if fmt == "q4_1" else 31
        d = f32(f32(hi - lo) / levels)
        i = inv(d)
        q = [int(f32(f32(f32(v - lo) * i) + 0.5)) for v in xs]
        if fmt == "q4_1":
            q = [min(15, v) for v in q]
        hb = high_bits(q) if fmt == "q5_1" else []
        return half_bytes(d) + half_bytes(lo) + hb + pack_nibbles(q)
    assert fmt == "iq4_nl"
    amax, vmax = abs_max(xs)
    if amax < f32(1e-15):
        # ggml leaves the quants unset; cachet writes best_index(0) = 8.
        return half_bytes(0.0) + pack_nibbles([8] * 32)
    d = f32(vmax / KVALUES[0])
    i = f32(1.0 / d)
    q = [best_index(f32(i * v)) for v in xs]
    sumqx = sumq2 = 0.0
    for v, l in zip(xs, q):
        w = f32(v * v)
        wq = f32(w * KVALUES[l])
        sumqx = f32(sumqx + f32(wq * v))
        sumq2 = f32(sumq2 + f32(wq * KVALUES[l]))
    d = f32(sumqx / sumq2) if sumq2 > 0 else 0.0
    return half_bytes(d) + pack_nibbles(q)


def edge_blocks(fmt, rng):
    """Blocks of 32 values that probe ggml's rounding rules."""
    halves = [k + 0.5 for k in range(-16, 16)]
    ties = {
        # d = 1: the quants are the values, halves round away from zero.
        "q8_0": [127.0] + [k + 0.5 for k in range(-15, 15)] + [-126.5],
        # max = -8 (-16) first: d = 1, x + 8.5 (16.5) lands on integers.
        "q4_0": [-8.0] + [k / 2 for k in range(-15, 16)],
        "q5_0": [-16.0] + [k - 15.5 for k in range(31)],
        # min 0, max 15 (31): d = 1, (x - min) + 0.5 lands on integers.
        "q4_1": [0.0, 15.0] + [k / 2 for k in range(30)],
        "q5_1": [0.0, 31.0] + [k + 0.5 for k in range(30)],
        # max = -127: id = 1; midpoints of the code book are ties.
        "iq4_nl": [-127.0] + [(KVALUES[k] + KVALUES[k + 1]) / 2 for k in range(15)]
        + [KVALUES[k] for k in range(16)],
    }[fmt]
    blocks = [
        [0.0] * 32,                                     # all zero
        ties,                                           # ties
        [rng.uniform(-1, 1) for _ in range(31)] + [-3.0],   # negative max last
        [-2.0] + [rng.uniform(-1, 1) for _ in range(30)] + [2.0],  # -a before a
        [2.0] + [rng.uniform(-1, 1) for _ in range(30)] + [-2.0],  # a before -a
        [rng.uniform(-6e4, 6e4) for _ in range(32)],     # large values
        [rng.uniform(-2e7, 2e7) for _ in range(32)],     # d overflows f16
        [rng.uniform(-1e-5, 1e-5) for _ in range(32)],   # d is an f16 subnormal
        [1e-20 * (k - 16) for k in range(32)],           # tiny (iq4_nl: d = 0)
        [0.75] * 32,                                     # constant
        [-0.75] * 31 + [0.5],                            # nearly constant
        [rng.uniform(0, 1) for _ in range(32)],          # all positive
    ]
    assert len(blocks) == BLOCKS
    return blocks


def main_encode(args):
    fmt, element, seed, values_out, expected_out = args[:5]
    even = args[5:] == ["even"]
    rng = random.Random(int(seed))
    blocks = edge_blocks(fmt, rng) + [
        [rng.gauss(0, 1) for _ in range(32)] for _ in range(4)]
    rounded = {"f32": f32, "f16": f16, "bf16": bf16}[element]
    limit = 65504.0 if element == "f16" else 3.4e38  # inputs stay finite
    blocks = [[f32(rounded(max(-limit, min(limit, v)))) for v in xs]
              for xs in blocks]
    pack = {"f32": "<f", "f16": "<e", "bf16": None}[element]
    with open(values_out, "wb") as out:
        for xs in blocks:
            for v in xs:
                if pack:
                    out.write(struct.pack(pack, v))
                else:
                    out.write(struct.pack("<f", v)[2:])
    with open(expected_out, "w") as out:
        for xs in blocks:
            out.write(" ".join(str(b) for b in encode(fmt, xs, even)) + "\n")


def values_lines(path):
    return [[float(v) for v in line.split("values:")[1].split()]
            for line in open(path) if "values:" in line]


def main_compare(args):
    fmt, run_output, expected = args[:3]
    split = args[3:] == ["split"]
    want = [[int(b) for b in line.split()] for line in open(expected)]
    got = values_lines(run_output)
    if split:
        # Quants (i8) and scales (f16) against the q8_0 bytes.
        quants, scales = got
        got_blocks = []
        for k in range(len(scales)):
            q = [int(v) & 0xFF for v in quants[32 * k:32 * k + 32]]
            got_blocks.append(half_bytes(scales[k]) + q)
    else:
        size = LAYOUT[fmt][0]
        flat = [int(v) & 0xFF for v in got[0]]
        got_blocks = [flat[i:i + size] for i in range(0, len(flat), size)]
    bad = [(k, g, w) for k, (g, w) in enumerate(zip(got_blocks, want)) if g != w]
    if len(got_blocks) != len(want) or bad:
        print(f"MISMATCH: {len(got_blocks)} blocks vs {len(want)} expected")
        for k, g, w in bad[:3]:
            print(f"  block {k}: got      {g}\n  block {k}: expected {w}")
        sys.exit(1)
    print(f"bytes match ({len(want)} blocks)")


def main():
    if sys.argv[1] == "encode":
        return main_encode(sys.argv[2:])
    if sys.argv[1] == "compare":
        return main_compare(sys.argv[2:])
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
