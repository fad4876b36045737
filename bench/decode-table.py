#!/usr/bin/env python3
"""Prints the decode attention table of one lease (docs/BENCHMARKS.md).

Reads, from the folder a decode run left (scripts/device/decode-h200.sh):
nvvm-decode.json and spirv-decode.json (cachet-bench --json), torch.json
(bench/torch_anchors.py --json) and ggml-fa.json (bench/ggml-peers.sh
--json). One row per case of cachet-bench's decode table: cachet's kernel
span (rewrites on; median [min, max], us) on CUDA and Vulkan, llama.cpp's
FLASH_ATTN_EXT at the same shape (KV padded to 256 as llama.cpp pads it),
PyTorch SDPA's cuDNN and FlashAttention backends (f16 only), and the time
K+V take at the device-to-device copy bandwidth of the same lease (the
byte limit). Nothing is computed but that limit and the ratios.

Usage: bench/decode-table.py RUN_DIR
"""
import json
import os
import sys


def load(folder, name):
    path = os.path.join(folder, name)
    return json.load(open(path)) if os.path.exists(path) else None


def us(median, low, high):
    return f"{median:.1f} [{low:.1f}, {high:.1f}]"


def main():
    folder = sys.argv[1]
    cuda = load(folder, "nvvm-decode.json")
    vulkan = load(folder, "spirv-decode.json")
    torch = load(folder, "torch.json")
    ggml = load(folder, "ggml-fa.json")
    copy = None
    sdpa = {}
    if torch:
        for row in torch["rows"]:
            if row["table"] == "copy":
                copy = row["bytes"] / (row["median_ms"] * 1e-3)
            if row["table"] == "decode":
                sdpa[(row["label"], row["test"])] = row
    peers = {}
    if ggml:
        for case in ggml["cases"]:
            if case["op"] == "FLASH_ATTN_EXT" and case.get("supported"):
                peers[(case["type"], case["n"], case["depth"])] = case
    spirv = {}
    if vulkan:
        for case in vulkan["cases"]:
            spirv[(case["label"], case["test"])] = case
    print("| case | cachet CUDA | cachet Vulkan | llama.cpp CUDA | SDPA cuDNN "
          "| SDPA FlashAttention | K+V at copy bandwidth |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for case in cuda["cases"]:
        label, test = case["label"], case["test"]
        on = case["on"]["kernels_ms"]
        cells = [f"{label} {test}",
                 us(on["median"] * 1e3, on["min"] * 1e3, on["max"] * 1e3)]
        v = spirv.get((label, test))
        cells.append(us(*(v["on"]["kernels_ms"][k] * 1e3
                          for k in ("median", "min", "max"))) if v else "")
        tg = int(test.split()[0][2:])
        depth = int(test.split("@ d")[1])
        p = peers.get((label, tg, depth))
        cells.append(us(p["median_us"], p["min_us"], p["max_us"])
                     + f", {p['median_us'] / (on['median'] * 1e3):.2f}x"
                     if p else "")
        for backend in ("cuDNN", "FlashAttention"):
            r = sdpa.get((f"{label} SDPA {backend}", test))
            cells.append(us(r["median_ms"] * 1e3, r["min_ms"] * 1e3,
                            r["max_ms"] * 1e3)
                         + f", {r['median_ms'] / on['median']:.2f}x"
                         if r else "")
        cells.append(f"{case['bytes'] / copy * 1e6:.1f}" if copy else "")
        print("| " + " | ".join(cells) + " |")
    print(f"\n(x: the peer's time over cachet's; above 1, cachet is faster. "
          f"Copy bandwidth {copy / 1e12:.3f} TB/s.)" if copy else "")


if __name__ == "__main__":
    main()
