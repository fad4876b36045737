#!/usr/bin/env python3
"""Runs every cachet pass and cachet-compile over a corpus of peer MLIR tests.

The corpus is a folder of .mlir files (the test inputs of IREE, torch-mlir and
StableHLO, fetched outside the repository; never commit them). Each file is
split at `// -----`; a chunk is kept when upstream mlir-opt parses and
verifies it as is (no --allow-unregistered-dialect: a chunk of IREE's,
torch-mlir's or StableHLO's own dialects is not an input cachet can be
given). Each kept chunk then goes through every cachet pass alone (listed
from `cachet-opt --help`; the passes that decide from a device profile get
one first) and through cachet-compile for spirv, nvvm and rocdl, and each
run is classified:

  success     exit 0
  diagnostic  exit 1 with an `error:` message
  crash       a signal, an exit status >= 128, `LLVM ERROR`, a stack dump
  hang        still running after --timeout seconds
  silent      any other failure (a failure without a diagnostic)

Usage:
  scripts/peer-corpus.py CORPUS build/bin/cachet-opt [--jobs 2]
      [--timeout 20] [--work /tmp/peer-corpus] [--variant REGEX]
      [--input REGEX] [--json results.json]

Each pass or pipeline first runs once per file over its kept chunks
(--split-input-file, so a chunk's result does not depend on the others);
when that run crashes, hangs or cannot be read per chunk, each chunk runs
alone, with --timeout seconds. Which chunks mlir-opt parses is cached in
--work.

Prints a table of counts per pass and pipeline (markdown) and every crash,
hang and silent failure with its input, chunk (1-based, as `// -----`
counts), run and the first lines of its stack. Exits 1 when there is a
crash, a hang or a silent failure.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

SPLIT = re.compile(r"^// -----.*$", re.M)

# The passes that decide from a #cachet.device profile get one first.
PROFILE = "h200"
NEEDS_PROFILE = {
    "cachet-dequant-once-kv",
    "cachet-pad-weight-rows",
    "cachet-prefetch-matvec-chains",
    "cachet-lower-matvec",
}
# Pass options a run needs (cachet-dump-kernel-objects writes files: into the
# run's scratch folder).
PASS_OPTIONS = {
    "cachet-attach-device": "profile=" + PROFILE,
    "cachet-dump-kernel-objects": "directory={scratch}",
}
PIPELINES = [
    ("cachet-compile{spirv}", "target=spirv profile=lavapipe"),
    ("cachet-compile{nvvm}", "target=nvvm chip=sm_90 features=+ptx80 profile=h200"),
    ("cachet-compile{rocdl}", "target=rocdl chip=gfx942"),
    ("cachet-compile-reference", ""),
]
KINDS = ["success", "diagnostic", "crash", "hang", "silent"]


def limit_memory():
    """Caps a child's address space so a runaway run cannot take the host."""
    cap = 8 << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def split_chunks(text):
    """Splits a file the way mlir-opt --split-input-file does."""
    return SPLIT.split(text)


def list_passes(cachet_opt):
    """The cachet passes `cachet-opt --help` lists (pipelines excluded)."""
    out = subprocess.run([cachet_opt, "--help"], capture_output=True, text=True).stdout
    names = sorted(set(re.findall(r"^\s+--(cachet-[a-z0-9-]+)\s", out, re.M)))
    return [n for n in names if not n.startswith("cachet-compile")]


def variants(cachet_opt):
    """(name, argument list) for every run of a chunk."""
    result = []
    for name in list_passes(cachet_opt):
        flag = "--" + name
        if name in PASS_OPTIONS:
            flag += "=" + PASS_OPTIONS[name]
        args = [flag]
        if name in NEEDS_PROFILE:
            args = ["--cachet-attach-device=profile=" + PROFILE] + args
        result.append((name, args))
    for name, options in PIPELINES:
        base = name.split("{")[0]
        result.append((name, ["--%s=%s" % (base, options) if options else "--" + base]))
    return result


def run(cmd, timeout, cwd=None, stdout=False):
    """Runs `cmd`; returns (exit status or None on timeout, stderr), and its
    stdout after them when `stdout`."""
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=cwd,
                              preexec_fn=limit_memory)
        result = (proc.returncode, proc.stderr.decode(errors="replace"),
                  proc.stdout.decode(errors="replace"))
    except subprocess.TimeoutExpired as e:
        result = (None, (e.stderr or b"").decode(errors="replace"), "")
    return result if stdout else result[:2]


def classify(rc, err):
    if rc is None:
        return "hang"
    if (rc < 0 or rc >= 128 or "LLVM ERROR" in err or "Stack dump" in err
            or "PLEASE submit a bug report" in err):
        return "crash"
    if rc == 0:
        return "success"
    if rc == 1 and re.search(r"error:", err):
        return "diagnostic"
    return "silent"


def summary_lines(err, count=8):
    """The first error line and the first frames of a stack dump."""
    lines = err.splitlines()
    keep = [l for l in lines if "error" in l.lower() or "Assertion" in l][:2]
    frames = [l.strip() for l in lines if re.match(r"\s*#\d+ ", l)]
    # Skip the signal handler's own frames.
    frames = [f for f in frames if "Signals" not in f and "SignalHandler" not in f
              and "PrintStackTrace" not in f and "libc.so" not in f]
    return keep + frames[:count]


MARK = "//===peer-corpus-chunk===//"


def run_split(cmd, file, count, timeout, cwd=None):
    """Runs `cmd` on `file` with --split-input-file.

    Returns the kind of each of its `count` chunks (success: it printed a
    module, diagnostic: it printed nothing and the run printed an error), or
    None when the run crashed, hung or is otherwise not decided per chunk.
    """
    # The output goes to stdout: mlir-opt deletes an -o file when a chunk fails.
    rc, err, out = run(cmd + [file, "--split-input-file", "--output-split-marker=" + MARK],
                       timeout, cwd, stdout=True)
    if rc not in (0, 1) or classify(rc, err) not in ("success", "diagnostic"):
        return None
    parts = out.split(MARK)
    if len(parts) != count:
        return None
    kinds = ["success" if p.strip() else "diagnostic" for p in parts]
    if "diagnostic" in kinds and rc != 1:
        return None
    return kinds


def collect(corpus, input_re):
    """Splits the corpus into chunks; returns {file: [(chunk index, text)]} of
    the chunks mlir-opt parses and verifies, and the counts of files and
    chunks."""
    files = 0
    total = 0
    kept = {}
    for root, _, names in sorted(os.walk(corpus)):
        for n in sorted(names):
            if not n.endswith(".mlir"):
                continue
            path = os.path.join(root, n)
            rel = os.path.relpath(path, corpus)
            if input_re and not re.search(input_re, rel):
                continue
            files += 1
            chunks = split_chunks(open(path, encoding="utf-8", errors="replace").read())
            total += len(chunks)
            kept[rel] = list(enumerate(chunks, 1))
    return files, total, kept


def write_split(path, chunks):
    """Writes `chunks` ([(index, text)]) as one file split at `// -----`."""
    with open(path, "w") as f:
        f.write("\n// -----\n".join(text for _, text in chunks))


def filter_parsed(kept, mlir_opt, work, timeout, jobs):
    """Keeps the chunks mlir-opt parses and verifies as is (cached in WORK)."""
    cache_path = os.path.join(work, "parses.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    key = lambda text: hashlib.sha1(text.encode()).hexdigest()

    def parse(item):
        rel, chunks = item
        todo = [c for c in chunks if key(c[1]) not in cache]
        if not todo:
            return {}
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            file = os.path.join(tmp, "in.mlir")
            write_split(file, todo)
            kinds = run_split([mlir_opt, "--mlir-disable-threading"], file, len(todo),
                              timeout + len(todo), tmp)
            if kinds is None:
                kinds = []
                for c in todo:
                    write_split(file, [c])
                    rc, _ = run([mlir_opt, "--mlir-disable-threading", file, "-o",
                                 os.devnull], timeout)
                    kinds.append("success" if rc == 0 else "diagnostic")
        return {key(c[1]): k == "success" for c, k in zip(todo, kinds)}

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for result in pool.map(parse, kept.items()):
            cache.update(result)
    with open(cache_path, "w") as f:
        json.dump(cache, f)
    return {rel: [c for c in chunks if cache[key(c[1])]] for rel, chunks in kept.items()
            if any(cache[key(c[1])] for c in chunks)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("cachet_opt")
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "peer-corpus"))
    ap.add_argument("--variant", help="only the runs whose name matches")
    ap.add_argument("--input", help="only the files whose path matches")
    ap.add_argument("--json", help="write every run's result here")
    args = ap.parse_args()
    cachet_opt = os.path.abspath(args.cachet_opt)
    # Runs happen in scratch folders: every path they get is absolute.
    args.work = os.path.abspath(args.work)

    os.makedirs(args.work, exist_ok=True)
    files, total, chunks = collect(args.corpus, args.input)
    kept = filter_parsed(chunks, args.mlir_opt, args.work, args.timeout, args.jobs)
    inputs = sum(len(c) for c in kept.values())
    print("corpus: %d files, %d chunks; mlir-opt parses %d chunks of %d files"
          % (files, total, inputs, len(kept)), flush=True)
    runs = [v for v in variants(cachet_opt)
            if not args.variant or re.search(args.variant, v[0])]
    scratch = os.path.join(args.work, "scratch")
    os.makedirs(scratch, exist_ok=True)

    def one(job):
        """Runs one pass or pipeline over the kept chunks of one file: all at
        once, then chunk by chunk when that run is not decided per chunk."""
        (rel, file_chunks), (name, vargs) = job
        with tempfile.TemporaryDirectory(dir=scratch) as tmp:
            vargs = [a.replace("{scratch}", tmp) for a in vargs]
            cmd = [cachet_opt, "--mlir-disable-threading"] + vargs
            file = os.path.join(tmp, "in.mlir")
            write_split(file, file_chunks)
            kinds = run_split(cmd, file, len(file_chunks),
                              args.timeout + 2 * len(file_chunks), tmp)
            if kinds is not None:
                return [{"input": rel, "chunk": i, "run": name, "kind": k, "rc": None,
                         "detail": []} for (i, _), k in zip(file_chunks, kinds)]
            results = []
            for index, text in file_chunks:
                write_split(file, [(index, text)])
                rc, err = run(cmd + [file, "-o", os.devnull], args.timeout, cwd=tmp)
                kind = classify(rc, err)
                detail = summary_lines(err) if kind not in ("success", "diagnostic") else []
                results.append({"input": rel, "chunk": index, "run": name, "kind": kind,
                                "rc": rc, "detail": detail})
            return results

    jobs = [(item, v) for v in runs for item in sorted(kept.items())]
    results = []
    counts = {name: dict.fromkeys(KINDS, 0) for name, _ in runs}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for n, batch in enumerate(pool.map(one, jobs), 1):
            for r in batch:
                results.append(r)
                counts[r["run"]][r["kind"]] += 1
                if r["kind"] not in ("success", "diagnostic"):
                    print("%s: %s chunk %d: %s" % (r["kind"], r["input"], r["chunk"],
                                                   r["run"]), flush=True)
            if n % 200 == 0:
                print("... %d/%d runs of a file" % (n, len(jobs)), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": files, "chunks": total, "inputs": inputs,
                       "results": results}, f, indent=1)

    print()
    print("| run | inputs | " + " | ".join(KINDS) + " |")
    print("|---|---:|" + "---:|" * len(KINDS))
    for name, _ in runs:
        c = counts[name]
        print("| `%s` | %d | " % (name, sum(c.values()))
              + " | ".join(str(c[k]) for k in KINDS) + " |")
    bad = [r for r in results if r["kind"] not in ("success", "diagnostic")]
    if bad:
        print("\nfailures without a diagnostic:")
        for r in bad:
            print("- %s: %s chunk %d: %s (exit %s)" % (r["kind"], r["input"], r["chunk"],
                                                      r["run"], r["rc"]))
            for line in r["detail"]:
                print("    " + line[:200])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
