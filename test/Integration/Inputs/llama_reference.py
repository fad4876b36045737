"""An independent reference of what cachet-gen writes (pure Python, no numpy).

Usage: llama_reference.py RUN_OUTPUT ARGS_FILE [cachet-gen options]

RUN_OUTPUT is the output of `cachet-run --print-results` on the generated
function (or of mlir-runner on test/Tools/Inputs/cpu_main.py's wrapper), ARGS_FILE the `PREFIX.args` file that `cachet-gen --write-inputs`
wrote (the `--input=` flags, in argument order), and the options are the ones
given to cachet-gen (the same defaults apply). The script recomputes the layer
or model from the input files in double precision, rounding to the activation
type where the generated IR does, and compares the first result (the layer's
output, or the model's next token and logits) with the GPU's. It prints
`reference match (...)` or the mismatches and exits non-zero on one.

The compiled CPU reference of cachet-run comes from the same IR as the GPU
code, so it cannot catch a generator that writes the wrong layer; this can.
Only the KV formats f16, bf16 and q8_0 are implemented, and the packed
weight formats (--weight-format) q8_0, q4_0, q4_K and q6_K, decoded here by
ggml's dequantize_row_* rules (ggml-quants.c).
"""
import math
import re
import struct
import sys

DEFAULTS = {
    "kind": "layer", "hidden": 128, "heads": 4, "kv-heads": 2, "head-dim": 32,
    "ffn": 256, "vocab": 256, "layers": 2, "tokens": 4, "past": 12,
    "max-seq": 0, "eps": 1e-5, "dtype": "f16", "kv": "f16", "round": "away",
    "weights": "args",
}


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def read(path, element, count):
    data = open(path, "rb").read()
    if element == "f32":
        return list(struct.unpack("<%df" % count, data))
    if element == "f16":
        return list(struct.unpack("<%de" % count, data))
    if element == "bf16":
        halves = struct.unpack("<%dH" % count, data)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in halves]
    if element == "i8":
        return list(struct.unpack("<%db" % count, data))
    if element == "i32":
        return list(struct.unpack("<%di" % count, data))
    raise SystemExit("unsupported element type " + element)


def half_at(b, i):
    return struct.unpack_from("<e", b, i)[0]


def k_scale_min(s, j):
    """q4_K's 6-bit scale and min j of its 12 packed bytes s."""
    if j < 4:
        return s[j] & 63, s[j + 4] & 63
    return ((s[j + 4] & 15) | (s[j - 4] >> 6) << 4,
            (s[j + 4] >> 4) | (s[j] >> 6) << 4)


def decode_block(fmt, b):
    """The values of one ggml block `b` (bytes) of format `fmt`, in f32."""
    if fmt == "q8_0":
        d = half_at(b, 0)
        return [f32(d * q) for q in struct.unpack_from("<32b", b, 2)]
    if fmt == "q4_0":
        d, qs = half_at(b, 0), b[2:18]
        return ([f32(d * ((q & 15) - 8)) for q in qs]
                + [f32(d * ((q >> 4) - 8)) for q in qs])
    if fmt == "q4_K":
        d, dmin, s, qs = half_at(b, 0), half_at(b, 2), b[4:16], b[16:144]
        out = []
        for j in range(4):
            q = qs[32 * j:32 * j + 32]
            for k, shift in ((2 * j, 0), (2 * j + 1, 4)):
                sc, m = k_scale_min(s, k)
                d1, m1 = f32(d * sc), f32(dmin * m)
                out += [f32(d1 * ((v >> shift) & 15) - m1) for v in q]
        return out
    if fmt == "q6_K":
        ql, qh = b[0:128], b[128:192]
        sc = struct.unpack_from("<16b", b, 192)
        d = half_at(b, 208)
        out = [0.0] * 256
        for n in range(2):
            lo, hi, s = ql[64 * n:], qh[32 * n:], sc[8 * n:]
            for l in range(32):
                i = l // 16
                q = (((lo[l] & 15) | ((hi[l] >> 0) & 3) << 4) - 32,
                     ((lo[l + 32] & 15) | ((hi[l] >> 2) & 3) << 4) - 32,
                     ((lo[l] >> 4) | ((hi[l] >> 4) & 3) << 4) - 32,
                     ((lo[l + 32] >> 4) | ((hi[l] >> 6) & 3) << 4) - 32)
                for part in range(4):
                    out[128 * n + 32 * part + l] = f32(
                        f32(d * s[i + 2 * part]) * q[part])
        return out
    raise SystemExit("llama_reference.py: --weight-format=%s not implemented"
                     % fmt)


BLOCKS = {"q8_0": (32, 34), "q4_0": (32, 18), "q4_K": (256, 144),
          "q6_K": (256, 210)}


def rows(flat, n):
    return [flat[i:i + n] for i in range(0, len(flat), n)]


def main():
    run_output, args_file = sys.argv[1], sys.argv[2]
    o = dict(DEFAULTS)
    for a in sys.argv[3:]:
        key, value = a[2:].split("=", 1)
        o[key] = value
    for key in ("hidden", "heads", "kv-heads", "head-dim", "ffn", "vocab",
                "layers", "tokens", "past", "max-seq"):
        o[key] = int(o[key])
    o["eps"] = float(o["eps"])
    if o["weights"] != "args":
        raise SystemExit("llama_reference.py: needs --weights=args")
    if o["kv"] not in ("f16", "bf16", "q8_0"):
        raise SystemExit("llama_reference.py: --kv=%s not implemented" % o["kv"])
    H, HQ, HKV, DH, F = (o["hidden"], o["heads"], o["kv-heads"],
                         o["head-dim"], o["ffn"])
    T, P = o["tokens"], o["past"]
    S = o["max-seq"] or P + T
    L = P + T
    G = HQ // HKV
    dt = f16 if o["dtype"] == "f16" else bf16
    kvt = {"f16": f16, "bf16": bf16, "q8_0": None}[o["kv"]]
    files = [a[len("--input="):] for a in open(args_file).read().split()]
    fi = iter(files)

    def take(element, shape):
        count = 1
        for d in shape:
            count *= d
        return read(next(fi), element, count)

    def matrix(rows_, cols, packed=True):
        fmt = o.get("weight-format", "dense")
        if not packed or fmt == "dense":
            return rows(take(o["dtype"], [rows_, cols]), cols)
        if fmt not in BLOCKS:
            decode_block(fmt, b"")
        values, size = BLOCKS[fmt]
        data = open(next(fi), "rb").read()
        flat = []
        for k in range(0, len(data), size):
            flat += [dt(v) for v in decode_block(fmt, data[k:k + size])]
        if len(flat) != rows_ * cols:
            raise SystemExit("llama_reference.py: %d %s values, expected %d"
                             % (len(flat), fmt, rows_ * cols))
        return rows(flat, cols)

    def project(x, w):
        return [[math.fsum(a * b for a, b in zip(xr, wr)) for wr in w]
                for xr in x]

    def rms_norm(x, w):
        out = []
        for xr in x:
            r = 1.0 / math.sqrt(f32(math.fsum(v * v for v in xr) / H)
                                + o["eps"])
            out.append([dt(v * r * g) for v, g in zip(xr, w)])
        return out

    def rope(x, heads, cos, sin):
        half = DH // 2
        out = []
        for t in range(T):
            c, s = cos[P + t], sin[P + t]
            row = []
            for h in range(heads):
                v = x[t][h * DH:(h + 1) * DH]
                for d in range(DH):
                    rot = -v[d + half] if d < half else v[d - half]
                    row.append(dt(v[d] * c[d] + rot * s[d]))
            out.append(row)
        return out

    def round_q(x):
        if o["round"] == "even":
            return round(x)
        return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)

    def kv_rows(new, cache):
        """The first L positions of the cache after the append, as the
        activation type, [pos][Hkv * Dh]."""
        if kvt is not None:
            values = rows(cache, HKV * DH)
            for t in range(T):
                values[P + t] = [kvt(v) for v in new[t]]
            return [[dt(v) for v in r] for r in values[:L]]
        q, s = cache
        q, s = rows(q, HKV * DH), rows(s, HKV * DH // 32)
        for t in range(T):
            qr, sr = [], []
            for b in range(HKV * DH // 32):
                block = new[t][32 * b:32 * b + 32]
                d = f32(max(abs(v) for v in block) / 127.0)
                inv = f32(1.0 / d) if d != 0 else 0.0
                qr += [int(round_q(f32(v * inv))) for v in block]
                sr.append(f16(d))
            q[P + t], s[P + t] = qr, sr
        if o["dtype"] == "f16":
            return [[f16(q[p][i] * s[p][i // 32]) for i in range(HKV * DH)]
                    for p in range(L)]
        return [[bf16(q[p][i] * s[p][i // 32]) for i in range(HKV * DH)]
                for p in range(L)]

    def layer(x, weights, caches, cos, sin):
        attn_norm, wq, wk, wv, wo, ffn_norm, wg, wu, wd = weights
        xn = rms_norm(x, attn_norm)
        q = rope(project(xn, wq), HQ, cos, sin)
        k = rope(project(xn, wk), HKV, cos, sin)
        v = [[dt(e) for e in r] for r in project(xn, wv)]
        kc = kv_rows(k, caches[0] if kvt else (caches[0], caches[2]))
        vc = kv_rows(v, caches[1] if kvt else (caches[1], caches[3]))
        scale = f32(1.0 / math.sqrt(DH))
        ctx = [[0.0] * (HQ * DH) for _ in range(T)]
        for h in range(HQ):
            kh = (h // G) * DH
            for i in range(T):
                qv = q[i][h * DH:(h + 1) * DH]
                scores = []
                for j in range(L):
                    if j <= P + i:
                        dot = math.fsum(a * b for a, b in
                                        zip(qv, kc[j][kh:kh + DH]))
                        scores.append(f32(dot) * scale)
                    else:
                        scores.append(-math.inf)
                m = max(scores)
                ex = [math.exp(s - m) for s in scores]
                total = math.fsum(ex)
                p = [dt(e / total) for e in ex]
                for d in range(DH):
                    ctx[i][h * DH + d] = dt(math.fsum(
                        p[j] * vc[j][kh + d] for j in range(L)))
        attn = project(ctx, wo)
        hres = [[dt(a + b) for a, b in zip(xr, ar)] for xr, ar in zip(x, attn)]
        hn = rms_norm(hres, ffn_norm)
        gate, up = project(hn, wg), project(hn, wu)
        act = [[dt(g / (1.0 + math.exp(-g)) * u) for g, u in zip(gr, ur)]
               for gr, ur in zip(gate, up)]
        down = project(act, wd)
        return [[dt(a + b) for a, b in zip(hr, dr)] for hr, dr in zip(hres, down)]

    def layer_weights():
        return [take(o["dtype"], [H]), matrix(HQ * DH, H), matrix(HKV * DH, H),
                matrix(HKV * DH, H), matrix(H, HQ * DH), take(o["dtype"], [H]),
                matrix(F, H), matrix(F, H), matrix(H, F)]

    def layer_caches():
        if kvt:
            return [take(o["kv"], [S, HKV, DH]) for _ in range(2)]
        return [take("i8", [S, HKV, DH]), take("i8", [S, HKV, DH]),
                take("f16", [S, HKV, DH // 32]),
                take("f16", [S, HKV, DH // 32])]

    if o["kind"] == "layer":
        x = rows(take(o["dtype"], [T, H]), H)
        weights = layer_weights()
        caches = layer_caches()
        cos = rows(take("f32", [S, DH]), DH)
        sin = rows(take("f32", [S, DH]), DH)
        expected = [sum(layer(x, weights, caches, cos, sin), [])]
    else:
        ids = take("i32", [T])
        table = matrix(o["vocab"], H, packed=False)
        weights = [layer_weights() for _ in range(o["layers"])]
        norm = take(o["dtype"], [H])
        head = matrix(o["vocab"], H)
        caches = [layer_caches() for _ in range(o["layers"])]
        cos = rows(take("f32", [S, DH]), DH)
        sin = rows(take("f32", [S, DH]), DH)
        x = [list(table[i]) for i in ids]
        for w, c in zip(weights, caches):
            x = layer(x, w, c, cos, sin)
        logits = project(rms_norm(x, norm), head)
        expected = [None, sum(logits, [])]

    text = open(run_output).read()
    if "Unranked Memref" in text:
        number = r"-?(?:inf|nan|[0-9.]+(?:e[-+]?[0-9]+)?)"
        got = [[float(v) for v in re.findall(number, block.split("data =")[1])]
               for block in text.split("Unranked Memref")[1:]]
    else:
        got = [[float(v) for v in line.split()[1:]]
               for line in text.splitlines()
               if line.strip().startswith("values:")]
    status = 0
    for r, want in enumerate(expected):
        if want is None:
            continue
        have = got[r]
        rms = math.sqrt(math.fsum(w * w for w in want) / len(want))
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(have, want))
               if abs(g - w) > 0.03 * max(abs(w), rms)]
        if len(have) != len(want) or bad:
            print("result %d MISMATCH: %d values vs %d expected; first: %s"
                  % (r, len(have), len(want), bad[:4]))
            status = 1
        else:
            print("result %d: reference match (%d values)" % (r, len(want)))
    if o["kind"] == "model":
        token = int(got[0][0])
        last = expected[1][-o["vocab"]:]
        best = max(last)
        if abs(last[token] - best) > 0.03 * max(abs(best), 1e-3):
            print("next token %d: logit %g, the best is %g (token %d)"
                  % (token, last[token], best, last.index(best)))
            status = 1
        else:
            print("next token: reference match")
    sys.exit(status)


if __name__ == "__main__":
    main()
