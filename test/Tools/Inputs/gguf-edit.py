"""Writes a copy of a GGUF file with one field changed, for the readers'
error tests (no numpy needed).

    gguf-edit.py IN OUT magic TEXT           the 4-byte magic
    gguf-edit.py IN OUT version N            the version
    gguf-edit.py IN OUT offset TENSOR N      a tensor's data offset
    gguf-edit.py IN OUT type TENSOR ID       a tensor's ggml type id
    gguf-edit.py IN OUT rename TENSOR NEW    a tensor's name (same length)
    gguf-edit.py IN OUT value-type KEY ID    a scalar entry's value type id
                                             (one of the same size)
"""

import struct
import sys

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def walk(data):
    """Positions: key -> offset of its value type field; tensor name ->
    (offset of its name, of its type field, of its offset field)."""
    pos = 8
    n_tensors, n_kv = struct.unpack_from("<QQ", data, pos)
    pos += 16

    def string(pos):
        n = struct.unpack_from("<Q", data, pos)[0]
        return data[pos + 8:pos + 8 + n].decode(), pos + 8 + n

    def skip_value(type_id, pos):
        if type_id == 8:
            return string(pos)[1]
        if type_id == 9:
            element, n = struct.unpack_from("<IQ", data, pos)
            pos += 12
            for _ in range(n):
                pos = skip_value(element, pos)
            return pos
        return pos + SIZES[type_id]

    keys = {}
    for _ in range(n_kv):
        key, pos = string(pos)
        keys[key] = pos
        type_id = struct.unpack_from("<I", data, pos)[0]
        pos = skip_value(type_id, pos + 4)
    tensors = {}
    for _ in range(n_tensors):
        name_at = pos
        name, pos = string(pos)
        dims = struct.unpack_from("<I", data, pos)[0]
        pos += 4 + 8 * dims
        tensors[name] = (name_at, pos, pos + 4)
        pos += 12
    return keys, tensors


def main(argv):
    src, dst, what = argv[0], argv[1], argv[2]
    data = bytearray(open(src, "rb").read())
    keys, tensors = walk(bytes(data))
    if what == "magic":
        data[0:4] = argv[3].encode()
    elif what == "version":
        struct.pack_into("<I", data, 4, int(argv[3]))
    elif what == "offset":
        struct.pack_into("<Q", data, tensors[argv[3]][2], int(argv[4]))
    elif what == "type":
        struct.pack_into("<I", data, tensors[argv[3]][1], int(argv[4]))
    elif what == "rename":
        old, new = argv[3], argv[4]
        assert len(old) == len(new)
        at = tensors[old][0] + 8
        data[at:at + len(new)] = new.encode()
    elif what == "value-type":
        at = keys[argv[3]]
        old = struct.unpack_from("<I", data, at)[0]
        assert SIZES[old] == SIZES[int(argv[4])]
        struct.pack_into("<I", data, at, int(argv[4]))
    else:
        raise SystemExit("unknown edit " + what)
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
