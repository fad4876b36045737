#!/usr/bin/env python3
"""A minimal GGUF reader: metadata, tensor infos and decoded tensors.

Independent of cachet's C++ reader (include/cachet/Generate/Gguf.h) and of
the `gguf` package: written from ggml's GGUF description (docs/gguf.md) and
block formats (ggml-common.h, ggml-quants.c's dequantize_row_*), for the
Python references to load the same models cachet runs.

    from gguf_reader import GGUFFile
    with GGUFFile("model.gguf") as f:
        f.metadata["llama.block_count"]          # 32
        f.tensor("blk.0.attn_q.weight")          # float32, shape [ne1, ne0]

Parsing needs only the standard library; decoding tensors needs numpy.
Decoded types: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K,
q3_K, q4_K, q5_K, q6_K, tq1_0, tq2_0, each as ggml's dequantize_row_*
computes it (float32 arithmetic in the same order).

Command line:
    gguf_reader.py dump FILE             header, metadata, tensor table (the
                                         same lines as `cachet-gguf dump`,
                                         less its llama line)
    gguf_reader.py values FILE [NAME...] each tensor's decoded values on a
                                         line: NAME then the values (%.9g)
Bad input exits with status 1 and `gguf_reader: <message>`.
"""

import mmap
import os
import struct
import sys

# ggml type id: (name, values per block, bytes per block).
GGML_TYPES = {
    0: ("f32", 1, 4),
    1: ("f16", 1, 2),
    2: ("q4_0", 32, 18),
    3: ("q4_1", 32, 20),
    6: ("q5_0", 32, 22),
    7: ("q5_1", 32, 24),
    8: ("q8_0", 32, 34),
    10: ("q2_K", 256, 84),
    11: ("q3_K", 256, 110),
    12: ("q4_K", 256, 144),
    13: ("q5_K", 256, 176),
    14: ("q6_K", 256, 210),
    20: ("iq4_nl", 32, 18),
    30: ("bf16", 1, 2),
    34: ("tq1_0", 256, 54),
    35: ("tq2_0", 256, 66),
}

# GGUF value type id: (name, struct format or None).
VALUE_TYPES = {
    0: ("u8", "<B"),
    1: ("i8", "<b"),
    2: ("u16", "<H"),
    3: ("i16", "<h"),
    4: ("u32", "<I"),
    5: ("i32", "<i"),
    6: ("f32", "<f"),
    7: ("bool", "<B"),
    8: ("string", None),
    9: ("array", None),
    10: ("u64", "<Q"),
    11: ("i64", "<q"),
    12: ("f64", "<d"),
}

IQ4NL_LEVELS = [-127, -104, -83, -65, -49, -35, -22, -10,
                1, 13, 25, 38, 53, 69, 89, 113]

INT64_MAX = (1 << 63) - 1
# The most elements a metadata array may have, the longest key (as
# cachet's reader).
MAX_ARRAY_ELEMENTS = 1 << 24
MAX_KEY_BYTES = 65535


def escape(s):
    """`s` with backslashes and double quotes escaped and bytes outside
    printable ASCII written \\xNN, as messages and dumps show names."""
    out = []
    for c in s.encode("utf-8", "surrogateescape"):
        if c in (0x5c, 0x22):
            out.append("\\" + chr(c))
        elif c < 0x20 or c >= 0x7f:
            out.append("\\x%02x" % c)
        else:
            out.append(chr(c))
    return "".join(out)


class GGUFError(Exception):
    """Malformed, truncated or unsupported input."""


class TensorInfo:
    """One tensor: `ne` in ggml order (ne[0] innermost), `offset` from the
    data section's start, `nbytes` of data."""

    def __init__(self, name, ne, type_id, offset, nbytes):
        self.name = name
        self.ne = ne
        self.type_id = type_id
        self.type_name = GGML_TYPES[type_id][0]
        self.offset = offset
        self.nbytes = nbytes

    @property
    def n_elements(self):
        n = 1
        for d in self.ne:
            n *= d
        return n

    @property
    def shape(self):
        """numpy order: the reverse of ne."""
        return tuple(reversed(self.ne))


class _Cursor:
    """Bounds-checked little-endian reads."""

    def __init__(self, data, path):
        self.data = data
        self.pos = 0
        self.path = path

    def remaining(self):
        return len(self.data) - self.pos

    def take(self, n, what):
        if n > self.remaining():
            raise GGUFError("%s: unexpected end of file reading %s at byte %d "
                            "(file size %d)" % (self.path, what, self.pos,
                                                len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what):
        n = self.unpack("<Q", "the length of " + what)
        return bytes(self.take(n, what)).decode("utf-8", "surrogateescape")


def _min_value_bytes(type_id):
    name, fmt = VALUE_TYPES[type_id]
    if fmt:
        return struct.calcsize(fmt)
    return 12 if name == "array" else 8


class GGUFFile:
    """A GGUF file (versions 2 and 3), mapped read-only.

    version, alignment, data_offset: the header's and data section's facts.
    metadata: key -> value (int, float, bool, str, or a list for arrays).
    metadata_types: key -> "u32", "string", "array[string]", ...
    tensors: [TensorInfo] in file order; tensor_infos: name -> TensorInfo.
    """

    def __init__(self, path):
        self.path = path
        self._map = None
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._data = memoryview(self._map) if self._map else memoryview(b"")
        self.metadata = {}
        self.metadata_types = {}
        self.tensors = []
        self.tensor_infos = {}
        try:
            self._parse()
        except GGUFError:
            self.close()
            raise

    def close(self):
        """Unmaps the file (views from raw() must be gone by then)."""
        self._data.release()
        if self._map:
            self._map.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fail(self, message):
        raise GGUFError("%s: %s" % (self.path, message))

    def _scalar(self, c, type_id, what):
        name, fmt = VALUE_TYPES[type_id]
        if name == "string":
            return c.string(what)
        if name == "array":
            self._fail("%s is an array of arrays, which is not supported" %
                       what)
        v = c.unpack(fmt, what)
        if name == "bool":
            if v > 1:
                self._fail("%s is a bool of value %d, expected 0 or 1" %
                           (what, v))
            return bool(v)
        return v

    def _value(self, c, type_id, what):
        if type_id not in VALUE_TYPES:
            self._fail("%s has unknown value type %d" % (what, type_id))
        if VALUE_TYPES[type_id][0] != "array":
            return VALUE_TYPES[type_id][0], self._scalar(c, type_id, what)
        element = c.unpack("<I", "the element type of " + what)
        if element not in VALUE_TYPES:
            self._fail("%s is an array of unknown value type %d" %
                       (what, element))
        n = c.unpack("<Q", "the length of " + what)
        if n > MAX_ARRAY_ELEMENTS:
            self._fail("%s has %d elements, more than the %d allowed" %
                       (what, n, MAX_ARRAY_ELEMENTS))
        if n > c.remaining() // _min_value_bytes(element):
            self._fail("%s has %d elements, more than the %d bytes left in "
                       "the file hold" % (what, n, c.remaining()))
        values = [self._scalar(c, element, "element %d of %s" % (k, what))
                  for k in range(n)]
        return "array[%s]" % VALUE_TYPES[element][0], values

    def _parse(self):
        c = _Cursor(self._data, self.path)
        magic = bytes(c.take(4, "the magic"))
        if magic != b"GGUF":
            shown = "".join(chr(b) if 0x20 <= b < 0x7f else "?" for b in magic)
            self._fail("not a GGUF file (magic '%s')" % shown)
        self.version = c.unpack("<I", "the version")
        if self.version not in (2, 3):
            self._fail("unsupported GGUF version %d (versions 2 and 3 are "
                       "read)" % self.version)
        n_tensors = c.unpack("<Q", "the tensor count")
        n_kv = c.unpack("<Q", "the metadata count")
        if n_kv > c.remaining() // 12 or n_tensors > c.remaining() // 24:
            self._fail("%d metadata entries and %d tensors do not fit in the "
                       "file (%d bytes)" % (n_kv, n_tensors, len(self._data)))

        for k in range(n_kv):
            key = c.string("the key of metadata entry %d" % k)
            size = len(key.encode("utf-8", "surrogateescape"))
            if not 1 <= size <= MAX_KEY_BYTES:
                self._fail("metadata entry %d has a key of %d bytes, expected "
                           "1 to %d" % (k, size, MAX_KEY_BYTES))
            if key in self.metadata:
                self._fail("duplicate metadata key '%s'" % escape(key))
            what = "metadata key '%s'" % escape(key)
            type_id = c.unpack("<I", "the type of " + what)
            self.metadata_types[key], self.metadata[key] = \
                self._value(c, type_id, what)

        self.alignment = 32
        if "general.alignment" in self.metadata:
            if self.metadata_types["general.alignment"] != "u32":
                self._fail("general.alignment is %s, expected u32" %
                           self.metadata_types["general.alignment"])
            a = self.metadata["general.alignment"]
            if a == 0 or a & (a - 1):
                self._fail("general.alignment %d is not a power of two" % a)
            self.alignment = a

        for k in range(n_tensors):
            info = self._tensor_info(c, k)
            if info.name in self.tensor_infos:
                self._fail("duplicate tensor name '%s'" % escape(info.name))
            self.tensors.append(info)
            self.tensor_infos[info.name] = info

        a = self.alignment
        self.data_offset = (c.pos + a - 1) // a * a
        data_size = max(0, len(self._data) - self.data_offset)
        for t in self.tensors:
            if t.offset % a:
                self._fail("tensor '%s' has offset %d, not a multiple of the "
                           "alignment %d" % (escape(t.name), t.offset, a))
            if t.offset > data_size or t.nbytes > data_size - t.offset:
                self._fail("tensor '%s' (%d bytes at offset %d) extends past "
                           "the end of the file (%d bytes of data from byte "
                           "%d)" % (escape(t.name), t.nbytes, t.offset,
                                    data_size, self.data_offset))
        by_offset = sorted(self.tensors, key=lambda t: t.offset)
        for x, y in zip(by_offset, by_offset[1:]):
            if x.offset + x.nbytes > y.offset and x.nbytes and y.nbytes:
                self._fail("tensors '%s' and '%s' overlap (offsets %d and %d)"
                           % (escape(x.name), escape(y.name), x.offset,
                              y.offset))

    def _tensor_info(self, c, k):
        name = c.string("the name of tensor info %d" % k)
        if not name:
            self._fail("tensor info %d has an empty name" % k)
        what = "tensor '%s'" % escape(name)
        dims = c.unpack("<I", "the number of dimensions of " + what)
        if dims > 4:
            self._fail("%s has %d dimensions, at most 4 are allowed" %
                       (what, dims))
        ne = []
        elements = 1
        for j in range(dims):
            n = c.unpack("<Q", "dimension %d of %s" % (j, what))
            elements *= n
            if n > INT64_MAX or elements > INT64_MAX:
                self._fail("%s has too many elements (dimension %d is %d)" %
                           (what, j, n))
            ne.append(n)
        type_id = c.unpack("<I", "the type of " + what)
        if type_id not in GGML_TYPES:
            self._fail("%s has unknown or unsupported ggml type %d" %
                       (what, type_id))
        type_name, block, block_bytes = GGML_TYPES[type_id]
        row = ne[0] if ne else 1
        if row % block:
            self._fail("%s of type %s has rows of %d values, not a multiple "
                       "of its %d-value blocks" %
                       (what, type_name, row, block))
        offset = c.unpack("<Q", "the offset of " + what)
        return TensorInfo(name, ne, type_id, offset,
                          elements // block * block_bytes)

    def raw(self, name):
        """The tensor's bytes (a memoryview into the mapped file)."""
        t = self.tensor_infos[name]
        start = self.data_offset + t.offset
        return self._data[start:start + t.nbytes]

    def tensor(self, name):
        """The tensor decoded to a float32 numpy array of shape t.shape."""
        t = self.tensor_infos[name]
        return dequantize(t.type_name, self.raw(name), t.n_elements).reshape(
            t.shape)


# ----------------------------------------------------------------------------
# Decoding (numpy)
# ----------------------------------------------------------------------------


def _blocks(np, raw, block_bytes):
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, block_bytes)


def _half(np, blocks, at):
    """The f16 at byte `at` of each block, as float32 of shape [nb, 1]."""
    return blocks[:, at:at + 2].copy().view("<f2").astype(np.float32)


def _two_bits(np, qs):
    """The 2-bit fields of 64-byte (or 32n-byte) groups in ggml's k-quant
    order: per 32 bytes, 4 shifts of 32 values."""
    nb = qs.shape[0]
    q = qs.reshape(nb, -1, 1, 32) >> (2 * np.arange(4, dtype=np.uint8))[
        None, None, :, None]
    return (q & 3).reshape(nb, -1)


def _scale_min_k4(np, sc):
    """q4_K / q5_K's 8 6-bit scales and mins from their 12 packed bytes."""
    sc = sc.astype(np.int32)
    scales = np.concatenate(
        [sc[:, 0:4] & 63, (sc[:, 8:12] & 15) | ((sc[:, 0:4] >> 6) << 4)], 1)
    mins = np.concatenate(
        [sc[:, 4:8] & 63, (sc[:, 8:12] >> 4) | ((sc[:, 4:8] >> 6) << 4)], 1)
    return scales.astype(np.float32), mins.astype(np.float32)


def dequantize(type_name, raw, count):
    """`count` values of ggml type `type_name` from the bytes `raw`, as a
    flat float32 numpy array."""
    import numpy as np

    f32 = np.float32
    if type_name == "f32":
        return np.frombuffer(raw, dtype="<f4", count=count).astype(f32)
    if type_name == "f16":
        return np.frombuffer(raw, dtype="<f2", count=count).astype(f32)
    if type_name == "bf16":
        bits = np.frombuffer(raw, dtype="<u2", count=count).astype(np.uint32)
        return (bits << 16).view(f32)
    block_bytes = next(v[2] for v in GGML_TYPES.values() if v[0] == type_name)
    b = _blocks(np, raw, block_bytes)
    nb = b.shape[0]

    if type_name == "q8_0":
        return (b[:, 2:].view(np.int8).astype(f32) * _half(np, b, 0)).ravel()
    if type_name in ("q4_0", "iq4_nl", "q4_1"):
        qs = b[:, 4:20] if type_name == "q4_1" else b[:, 2:18]
        q = np.concatenate([qs & 15, qs >> 4], 1)
        if type_name == "q4_1":
            return (q.astype(f32) * _half(np, b, 0) + _half(np, b, 2)).ravel()
        if type_name == "iq4_nl":
            q = np.array(IQ4NL_LEVELS, dtype=f32)[q]
        else:
            q = q.astype(f32) - 8
        return (q * _half(np, b, 0)).ravel()
    if type_name in ("q5_0", "q5_1"):
        one = type_name == "q5_1"
        qh = b[:, (4 if one else 2):(8 if one else 6)].copy().view("<u4")
        qs = b[:, (8 if one else 6):(24 if one else 22)].astype(np.uint32)
        j = np.arange(16, dtype=np.uint32)
        lo = (qs & 15) | ((qh >> j) & 1) << 4
        hi = (qs >> 4) | ((qh >> (j + 16)) & 1) << 4
        q = np.concatenate([lo, hi], 1).astype(f32)
        if one:
            return (q * _half(np, b, 0) + _half(np, b, 2)).ravel()
        return ((q - 16) * _half(np, b, 0)).ravel()
    if type_name == "q2_K":
        sc = b[:, 0:16]
        dl = _half(np, b, 80) * (sc & 15).astype(f32)
        ml = _half(np, b, 82) * (sc >> 4).astype(f32)
        q = _two_bits(np, b[:, 16:80]).astype(f32)
        return (np.repeat(dl, 16, 1) * q - np.repeat(ml, 16, 1)).ravel()
    if type_name == "q3_K":
        sc = b[:, 96:108].astype(np.int32)
        j = np.arange(16)
        low = np.concatenate([sc[:, 0:8] & 15, sc[:, 0:8] >> 4], 1)
        high = (sc[:, 8 + j % 4] >> (2 * (j // 4))) & 3
        dl = _half(np, b, 108) * ((low | high << 4) - 32).astype(f32)
        hbit = (b[:, None, 0:32] >> np.arange(8, dtype=np.uint8)[
            None, :, None]) & 1
        q = _two_bits(np, b[:, 32:96]).astype(np.int32) - 4 * (
            1 - hbit.reshape(nb, 256).astype(np.int32))
        return (np.repeat(dl, 16, 1) * q.astype(f32)).ravel()
    if type_name in ("q4_K", "q5_K"):
        five = type_name == "q5_K"
        scales, mins = _scale_min_k4(np, b[:, 4:16])
        dl = _half(np, b, 0) * scales
        ml = _half(np, b, 2) * mins
        qs = b[:, 48:176] if five else b[:, 16:144]
        qs = qs.reshape(nb, 4, 1, 32)
        q = np.concatenate([qs & 15, qs >> 4], 2).reshape(nb, 256)
        if five:
            hbit = (b[:, None, 16:48] >> np.arange(8, dtype=np.uint8)[
                None, :, None]) & 1
            q = q | (hbit.reshape(nb, 256) << 4)
        return (np.repeat(dl, 32, 1) * q.astype(f32) -
                np.repeat(ml, 32, 1)).ravel()
    if type_name == "q6_K":
        ql = b[:, 0:128].reshape(nb, 2, 2, 32)
        low = np.stack([ql[:, :, 0] & 15, ql[:, :, 1] & 15,
                        ql[:, :, 0] >> 4, ql[:, :, 1] >> 4], 2)
        qh = b[:, 128:192].reshape(nb, 2, 1, 32)
        high = (qh >> (2 * np.arange(4, dtype=np.uint8))[
            None, None, :, None]) & 3
        q = (low | high << 4).astype(f32) - 32
        sc = b[:, 192:208].view(np.int8).astype(f32).reshape(nb, 2, 4, 2)
        d = _half(np, b, 208).reshape(nb, 1, 1, 1)
        return (np.repeat(d * sc, 16, 3) * q).ravel()
    if type_name == "tq1_0":
        pow3 = np.array([1, 3, 9, 27, 81], dtype=np.uint16)

        def digits(x, n):
            q = (x[:, None, :].astype(np.uint16) * pow3[None, :n, None]) & 255
            return ((q * 3) >> 8).reshape(nb, -1)

        t = np.concatenate([digits(b[:, 0:32], 5), digits(b[:, 32:48], 5),
                            digits(b[:, 48:52], 4)], 1)
        return ((t.astype(f32) - 1) * _half(np, b, 52)).ravel()
    if type_name == "tq2_0":
        q = _two_bits(np, b[:, 0:64]).astype(f32)
        return ((q - 1) * _half(np, b, 64)).ravel()
    raise GGUFError("no decoder for type %s" % type_name)


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------


def _scalar_string(type_name, v):
    if type_name == "bool":
        return "true" if v else "false"
    if type_name == "f32":
        return "%.9g" % v
    if type_name == "f64":
        return "%.17g" % v
    if type_name == "string":
        return '"' + escape(v) + '"'
    return str(v)


def dump(f, out):
    out.write("version %d\n" % f.version)
    out.write("alignment %d\n" % f.alignment)
    out.write("data offset %d\n" % f.data_offset)
    out.write("metadata %d\n" % len(f.metadata))
    for key, v in f.metadata.items():
        t = f.metadata_types[key]
        if not t.startswith("array"):
            out.write("  %s %s %s\n" % (escape(key), t, _scalar_string(t, v)))
            continue
        element = t[len("array["):-1]
        shown = [_scalar_string(element, e) for e in v[:4]]
        if len(v) > 4:
            shown.append("...")
        out.write("  %s %s %d [%s]\n" % (escape(key), t, len(v),
                                          ", ".join(shown)))
    out.write("tensors %d\n" % len(f.tensors))
    for t in f.tensors:
        out.write("  %s %s [%s] offset %d bytes %d\n" %
                  (escape(t.name), t.type_name,
                   ", ".join(str(d) for d in t.ne),
                   t.offset, t.nbytes))


def values(f, names, out):
    for name in names or [t.name for t in f.tensors]:
        if name not in f.tensor_infos:
            raise GGUFError("%s: no tensor '%s'" % (f.path, escape(name)))
        v = f.tensor(name).ravel().tolist()
        out.write(escape(name) + "".join(" %.9g" % x for x in v) + "\n")


def main(argv):
    if len(argv) < 2 or argv[0] not in ("dump", "values") or (
            argv[0] == "dump" and len(argv) != 2):
        sys.stderr.write("usage: gguf_reader.py dump FILE | "
                         "values FILE [NAME...]\n")
        return 2
    try:
        with GGUFFile(argv[1]) as f:
            if argv[0] == "dump":
                dump(f, sys.stdout)
            else:
                values(f, argv[2:], sys.stdout)
    except (GGUFError, OSError) as e:
        sys.stderr.write("gguf_reader: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
