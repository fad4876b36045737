#!/usr/bin/env bash
# Times llama.cpp's own kernels (ggml's FLASH_ATTN_EXT and MUL_MAT) at the
# shapes of cachet's benchmarks, as a peer baseline (issue 20):
#
#   FLASH_ATTN_EXT  Llama-3-8B attention: head size 128, 32 query heads, 8
#                   KV heads (GQA 4), N = 1, 4, 512 queries after D = 4096,
#                   32768, 65536 cached positions ("ppN @ dD" as in
#                   cachet-bench's attention table, bench/make-suite.py),
#                   KV length D + N padded to a multiple of 256 as llama.cpp
#                   pads it (d4096: 4352 for N 1 and 4, 4608 for N 512),
#                   K/V f16, q8_0, q4_0, a causal f16 mask, F32 precision;
#   MUL_MAT         weights 4096x4096, 14336x4096, 4096x14336 (rows x cols,
#                   ne0 = cols = K as in llama.cpp), bf16, f16, q8_0, q4_0,
#                   q2_K, q4_K, q5_K, q6_K, q4_1, q5_0, q5_1, iq4_nl, tq2_0, tq1_0, times f32
#                   activations of 1, 4, 512 columns.
#
# GGML_DIR is a ggml checkout (or a llama.cpp one; its ggml/ folder is used)
# that the user fetches, e.g. `git clone https://github.com/ggml-org/ggml`;
# it is never vendored in this repository. Tested against ggml d99724f
# (2026-08-21); it needs the device API and ggml-cpp.h (ggml since late
# 2024). This script configures it in BUILD_DIR (Release; -DGGML_CUDA=ON
# -DCMAKE_CUDA_ARCHITECTURES=90 for cuda, -DGGML_VULKAN=ON for vulkan,
# nothing for cpu; more CMake options through GGML_PEERS_CMAKE_ARGS), builds
# only libggml and the driver bench/ggml-peers/ggml-peers.cpp, and runs it.
# The driver prints a markdown table (per case: median and [min, max] us,
# weight GB/s for MUL_MAT, TFLOP/s, the sampled check's relative error), and
# with --json=FILE writes the figures and the ggml commit.
#
# Why a driver of our own and not ggml's tests/test-backend-ops: its perf
# mode (`test-backend-ops perf -o OP -b BACKEND -p REGEX --output csv`)
# times only the cases compiled into its perf list, which holds none of the
# 27 attention cases above (the nearest: f16, one query, KV 4096) and one
# of the three weights (4096x14336, all six types, n 1, 4, 512). Its flash
# attention cases (and the --test-file cases, in test-export-graph-ops'
# format) fill the mask with random values and random -inf blocks, not a
# causal mask (CUDA's kernels skip the KV tiles a mask hides, so the mask
# changes the time), keep K/V head-major rather than as views of a
# token-major cache, and it reports a mean only; more cases would mean
# patching its source. The driver builds the graphs the way llama.cpp does
# (Q, and K/V as views of a token-major cache, a causal f16 mask,
# ggml_flash_attn_ext_set_prec F32; weights in a buffer marked as weights)
# and times ggml_backend_graph_compute: every kernel it times is ggml's,
# and no ggml code is copied. Its header has the timing method (R ops per
# graph, inputs rotated over --rotate-mib) and the check each case gets.
#
# Usage: bench/ggml-peers.sh GGML_DIR BUILD_DIR [--backend=cuda|vulkan|cpu]
#          [--json=FILE] [driver options: --quick --reps=N --depths=D,...
#          --batches=N,... --only=fa|mm --threads=N --rotate-mib=N ...]
#   --quick: depth 256 (KV 512 and 768) and the 4096x4096 weight only, 5
#   repetitions: minutes on a CPU.
#   JOBS (default 2): build parallelism. GGML_COMMIT names the commit of a
#   copy that is not a git checkout.
set -eu
usage="usage: ggml-peers.sh GGML_DIR BUILD_DIR [--backend=cuda|vulkan|cpu] [--json=FILE] [driver options]"
ggml=${1:?$usage}
build=${2:?$usage}
shift 2
backend=cpu
args=()
for arg in "$@"; do
  case $arg in
  --backend=*) backend=${arg#--backend=} ;;
  *) args+=("$arg") ;;
  esac
done
case $backend in
cpu) flags=() ;;
cuda) flags=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90) ;;
vulkan) flags=(-DGGML_VULKAN=ON) ;;
*)
  echo "ggml-peers.sh: --backend must be cuda, vulkan or cpu" >&2
  exit 2
  ;;
esac

source=$ggml
if [ ! -f "$source/include/ggml.h" ] && [ -f "$source/ggml/include/ggml.h" ]; then
  source=$source/ggml
fi
if [ ! -f "$source/include/ggml.h" ]; then
  echo "ggml-peers.sh: $ggml is neither a ggml nor a llama.cpp checkout" >&2
  exit 2
fi
# The checkout's commit only where $ggml is the top of its own git tree: a
# copy without .git inside another repository (as carried to a GPU
# server) would otherwise report that repository's commit. GGML_COMMIT
# names it by hand.
commit=unknown
if [ "$(git -C "$ggml" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$ggml" && pwd -P)" ]; then
  commit=$(git -C "$ggml" rev-parse HEAD 2>/dev/null || echo unknown)
fi
commit=${GGML_COMMIT:-$commit}
if [ -z "${GGML_COMMIT:-}" ] && [ "$commit" != unknown ] && [ -n "$(git -C "$ggml" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit+dirty"
fi

here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build"
# shellcheck disable=SC2086 # GGML_PEERS_CMAKE_ARGS is a list of options
cmake -S "$here/ggml-peers" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_PEERS_SOURCE="$(cd "$source" && pwd)" "${flags[@]}" \
  ${GGML_PEERS_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" --target ggml-peers -j "${JOBS:-2}" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log" >&2; exit 1; }
exec "$build/ggml-peers" --backend="$backend" --ggml-commit="$commit" "${args[@]}"
