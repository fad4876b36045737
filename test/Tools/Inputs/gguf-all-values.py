"""Writes a small GGUF file by hand (struct only, independent of both
readers): a metadata entry of every value type, arrays of numbers, bools
and strings, odd strings, and three tensors (f32, q8_0, a 3-D f16) at an
alignment of 64.

    gguf-all-values.py OUT
"""

import struct
import sys


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


SCALARS = [
    ("v.u8", 0, "<B", 200),
    ("v.i8", 1, "<b", -100),
    ("v.u16", 2, "<H", 60000),
    ("v.i16", 3, "<h", -30000),
    ("v.u32", 4, "<I", 4000000000),
    ("v.i32", 5, "<i", -2000000000),
    ("v.f32", 6, "<f", 0.1),
    ("v.bool", 7, "<B", 1),
    ("v.u64", 10, "<Q", 18000000000000000000),
    ("v.i64", 11, "<q", -9000000000000000000),
    ("v.f64", 12, "<d", 3.141592653589793),
]


def main(out):
    kv = []
    for key, type_id, fmt, value in SCALARS:
        kv.append(string(key) + struct.pack("<I", type_id) +
                  struct.pack(fmt, value))
    kv.append(string("v.string") + struct.pack("<I", 8) +
              string(b'caf\xc3\xa9 "q" \\ \n'))
    kv.append(string("general.alignment") + struct.pack("<II", 4, 64))
    kv.append(string("a.i32") + struct.pack("<IIQ", 9, 5, 5) +
              struct.pack("<5i", 1, -2, 3, -4, 5))
    kv.append(string("a.f64") + struct.pack("<IIQ", 9, 12, 2) +
              struct.pack("<2d", 0.5, -1e300))
    kv.append(string("a.bool") + struct.pack("<IIQ", 9, 7, 3) +
              bytes([1, 0, 1]))
    kv.append(string("a.string") + struct.pack("<IIQ", 9, 8, 3) +
              string("x") + string("") + string("zz"))
    kv.append(string("a.empty") + struct.pack("<IIQ", 9, 4, 0))

    # name, ne, ggml type, data
    q8 = struct.pack("<e", 0.25) + bytes(range(256 - 16, 256)) + bytes(16)
    tensors = [
        ("t.f32", [3], 0, struct.pack("<3f", 1.0, -2.5, 3.25)),
        ("t.q8_0", [32, 2], 8, q8 + q8),
        ("t.f16", [2, 1, 2], 1, struct.pack("<4e", 1, 2, 3, 4)),
    ]
    infos = b""
    data = b""
    for name, ne, type_id, payload in tensors:
        infos += string(name) + struct.pack("<I", len(ne))
        infos += b"".join(struct.pack("<Q", n) for n in ne)
        infos += struct.pack("<IQ", type_id, len(data))
        data += payload + bytes(-len(payload) % 64)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    head += b"".join(kv) + infos
    head += bytes(-len(head) % 64)
    open(out, "wb").write(head + data)


if __name__ == "__main__":
    main(sys.argv[1])
