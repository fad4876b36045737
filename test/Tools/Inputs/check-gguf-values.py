"""Checks `cachet-gguf values` output against bench/gguf_reader.py's decoding
of the same random llama GGUF, and the values' scales.

    check-gguf-values.py FILE.gguf VALUES.txt

Prints `TYPE: N tensors match, M weights scaled 1/sqrt(fan_in)` (TYPE: that
of blk.0.attn_q.weight) or what differs, with exit status 1. The decoders
may differ by rounding (a fused multiply-add), so values match when within
1e-6 relative. Scales: each projection weight's standard deviation times
sqrt(ne[0]) within [0.85, 1.15] and its mean within 0.05 of it; norms in
[0.9, 1.1]; embeddings in [-0.5, 0.5].
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
from gguf_reader import GGUFFile  # noqa: E402


def main(path, values_path):
    failures = []
    matched = 0
    weights = 0
    with GGUFFile(path) as f:
        for line in open(values_path):
            fields = line.split()
            name = fields[0]
            cpp = np.array([float(x) for x in fields[1:]], dtype=np.float64)
            py = f.tensor(name).astype(np.float64).ravel()
            if cpp.shape != py.shape or not np.all(
                    np.abs(cpp - py) <= 1e-6 * np.abs(py)):
                failures.append("%s: values differ" % name)
                continue
            matched += 1
            ne = f.tensor_infos[name].ne
            if "norm" in name:
                if not np.all((py >= 0.9) & (py <= 1.1)):
                    failures.append("%s: a norm weight outside [0.9, 1.1]" %
                                    name)
            elif name == "token_embd.weight":
                if not np.all(np.abs(py) <= 0.5):
                    failures.append("%s: an embedding outside [-0.5, 0.5]" %
                                    name)
            else:
                std = py.std()
                scaled = std * np.sqrt(ne[0])
                if not 0.85 <= scaled <= 1.15 or abs(py.mean()) > 0.05 * std:
                    failures.append("%s: std * sqrt(%d) = %.3f, mean %.3g" %
                                    (name, ne[0], scaled, py.mean()))
                weights += 1
        if len(f.tensors) != matched + len(failures):
            failures.append("%d tensors in the file, %d in the values" %
                            (len(f.tensors), matched + len(failures)))
        weight_type = f.tensor_infos["blk.0.attn_q.weight"].type_name
    for failure in failures:
        print("FAIL " + failure)
    if failures:
        return 1
    print("%s: %d tensors match, %d weights scaled 1/sqrt(fan_in)" %
          (weight_type, matched, weights))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
