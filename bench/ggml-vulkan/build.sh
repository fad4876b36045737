#!/usr/bin/env bash
# Builds ggml's Vulkan backend and bench/ggml-peers on a GPU machine with no
# internet and no Vulkan SDK, from the archives in .peers/ (made by
# bench/ggml-vulkan/make-archives.sh; .peers/COMMITS), then times nothing:
# the last stage runs `bench/ggml-peers.sh ... --backend=vulkan --help`
# (build only; scripts/device/ggml-vulkan-peers-h200.sh times).
#
# Run from the repository root, with .peers/ and .gl/ carried along:
#   bash bench/ggml-vulkan/build.sh [STAGE...]
# STAGE: loader  install the Vulkan loader from .gl/*.deb (dpkg -x; ldconfig)
#                where libvulkan.so.1 is missing
#        icd     show (and where missing but the driver's libGLX_nvidia is
#                there, write) the NVIDIA Vulkan ICD manifest
#        unpack  unpack the archives into $WORK
#        headers install Vulkan-Headers and SPIRV-Headers into $WORK/prefix
#        glslc   build shaderc's glslc into $WORK/prefix/bin, and check it
#                compiles every ggml feature-test shader
#        ggml    build libggml (Vulkan) and ggml-peers via bench/ggml-peers.sh
#        all     (default) loader icd unpack headers glslc ggml
# (stages glslc and ggml each run the earlier stages they need when their
# output is missing, so `glslc` then `ggml` as two calls works.)
# Environment: WORK (default /tmp/peers-vk), BUILD (ggml build folder,
# default $WORK/ggml-vk-build), JOBS (default 16), CONFIGURE_ONLY=1 (glslc and
# ggml stages stop after CMake's configure step).
# Afterwards, time with e.g.:
#   GGML_PEERS_CMAKE_ARGS="$(cat $WORK/cmake-args)" GGML_COMMIT=... \
#     bench/ggml-peers.sh $WORK/ggml $WORK/ggml-vk-build --backend=vulkan --quick
# (this script prints the exact line at the end).
set -eu
set -o pipefail

root=$(pwd)
peers=$root/.peers
WORK=${WORK:-/tmp/peers-vk}
BUILD=${BUILD:-$WORK/ggml-vk-build}
JOBS=${JOBS:-16}
CONFIGURE_ONLY=${CONFIGURE_ONLY:-0}
PREFIX=$WORK/prefix
LIBVULKAN=${LIBVULKAN:-/usr/lib/x86_64-linux-gnu/libvulkan.so.1}
t_all=$(date +%s)

stage_begin() {
  stage=$1
  t0=$(date +%s)
  echo "=== [$(date +%T)] stage $stage: begin"
}
stage_end() {
  echo "=== [$(date +%T)] stage $stage: done in $(($(date +%s) - t0)) s"
}
die() {
  echo "!!! stage ${stage:-?} FAILED: $*" >&2
  exit 1
}
# run LOG CMD...: runs CMD with its output in LOG; on failure prints the
# log's tail and stops.
run() {
  local log=$1
  shift
  echo "+ $* (log: $log)"
  if ! "$@" >"$log" 2>&1; then
    echo "!!! last 60 lines of $log:" >&2
    tail -60 "$log" >&2
    die "$1 exited non-zero"
  fi
}
need() {
  command -v "$1" >/dev/null 2>&1 || die "missing tool: $1"
}

[ -f "$peers/ggml.tar.xz" ] || {
  echo "run from the repository root, with .peers/ carried along" >&2
  exit 2
}
need cmake
need tar
need xz
need python3
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); else gen=(); fi
# shaderc, glslang, SPIRV-Tools and Vulkan-Headers need CMake 3.22.1;
# FindVulkan's glslc component (ggml) needs 3.24.
cmake_version=$(cmake --version | awk 'NR == 1 {print $3}')
if [ "$(printf '%s\n' 3.24 "$cmake_version" | sort -V | head -1)" != 3.24 ]; then
  echo "CMake $cmake_version is older than 3.24" >&2
  exit 2
fi
echo "cmake $cmake_version, generator ${gen[*]:-default}, JOBS=$JOBS, WORK=$WORK"

do_loader() {
  stage_begin loader
  if [ -e "$LIBVULKAN" ]; then
    echo "$LIBVULKAN is there"
  else
    ls "$root"/.gl/libvulkan1_*.deb >/dev/null 2>&1 || die "no .gl/libvulkan1_*.deb (carry .gl)"
    for f in "$root"/.gl/*.deb; do
      echo "+ dpkg -x $f /"
      dpkg -x "$f" /
    done
    ldconfig
    [ -e "$LIBVULKAN" ] || die "$LIBVULKAN still missing after dpkg -x"
  fi
  ldconfig -p | grep -E 'libvulkan|libGLX_nvidia|libGLdispatch|libnvidia-glcore|libnvidia-glvkspirv' || true
  stage_end
}

do_icd() {
  stage_begin icd
  local found=0 f
  for f in /etc/vulkan/icd.d/*.json /usr/share/vulkan/icd.d/*.json \
    /usr/local/share/vulkan/icd.d/*.json; do
    [ -f "$f" ] || continue
    found=1
    echo "--- $f"
    cat "$f"
    echo
  done
  if [ $found = 0 ]; then
    if ldconfig -p | grep 'libGLX_nvidia.so.0' >/dev/null; then
      mkdir -p /etc/vulkan/icd.d
      cat >/etc/vulkan/icd.d/nvidia_icd.json <<'EOF'
{
    "file_format_version" : "1.0.1",
    "ICD": {
        "library_path": "libGLX_nvidia.so.0",
        "api_version" : "1.3.0"
    }
}
EOF
      echo "wrote /etc/vulkan/icd.d/nvidia_icd.json (libGLX_nvidia.so.0 is there)"
    else
      echo "WARNING: no Vulkan ICD manifest and no libGLX_nvidia.so.0: the" \
        "NVIDIA driver's Vulkan part is not in this machine (container without" \
        "the 'graphics' driver capability?); ggml will build but find no" \
        "Vulkan device." >&2
    fi
  fi
  stage_end
}

do_unpack() {
  stage_begin unpack
  mkdir -p "$WORK"
  local a d
  for a in ggml:ggml shaderc-src:shaderc vulkan-headers:vulkan-headers; do
    d=${a#*:}
    a=${a%%:*}
    rm -rf "${WORK:?}/$d"
    echo "+ tar -xJf .peers/$a.tar.xz -C $WORK"
    tar -xJf "$peers/$a.tar.xz" -C "$WORK"
    [ -d "$WORK/$d" ] || die "$a.tar.xz holds no $d/"
  done
  stage_end
}

do_headers() {
  [ -d "$WORK/vulkan-headers" ] || do_unpack
  stage_begin headers
  run "$WORK/vulkan-headers.log" bash -c "
    cmake ${gen[*]} -S '$WORK/vulkan-headers' -B '$WORK/vulkan-headers-build' \
      -DCMAKE_INSTALL_PREFIX='$PREFIX' -DVULKAN_HEADERS_ENABLE_TESTS=OFF \
      -DVULKAN_HEADERS_ENABLE_MODULE=OFF &&
    cmake --install '$WORK/vulkan-headers-build'"
  run "$WORK/spirv-headers.log" bash -c "
    cmake ${gen[*]} -S '$WORK/shaderc/third_party/spirv-headers' \
      -B '$WORK/spirv-headers-build' -DCMAKE_INSTALL_PREFIX='$PREFIX' \
      -DSPIRV_HEADERS_ENABLE_TESTS=OFF -DSPIRV_HEADERS_ENABLE_INSTALL=ON &&
    cmake --install '$WORK/spirv-headers-build'"
  [ -f "$PREFIX/include/vulkan/vulkan.hpp" ] || die "no vulkan.hpp in $PREFIX"
  [ -f "$PREFIX/include/vulkan/vulkan_structs.hpp" ] || die "no vulkan_structs.hpp in $PREFIX"
  [ -f "$PREFIX/include/spirv/unified1/spirv.hpp" ] || die "no spirv.hpp in $PREFIX"
  ls "$PREFIX"/share/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake >/dev/null ||
    die "no SPIRV-HeadersConfig.cmake in $PREFIX"
  grep -m1 '#define VK_HEADER_VERSION ' "$PREFIX/include/vulkan/vulkan_core.h"
  stage_end
}

do_glslc() {
  [ -d "$WORK/shaderc" ] || do_unpack
  [ -f "$PREFIX/include/vulkan/vulkan.hpp" ] || do_headers
  stage_begin glslc
  local b=$WORK/shaderc-build
  # Option names checked in the sources: shaderc CMakeLists.txt (SHADERC_*),
  # SPIRV-Tools CMakeLists.txt (SPIRV_SKIP_*, SPIRV_WERROR), glslang
  # CMakeLists.txt (ENABLE_GLSLANG_BINARIES, GLSLANG_TESTS). Not
  # SHADERC_SKIP_INSTALL: shaderc then still turns glslang's install on (it
  # passes a generator expression as a boolean) but SPIRV-Tools' off, and the
  # generate step fails ("glslang-targets ... requires target SPIRV-Tools-opt
  # that is not in any export set").
  run "$WORK/shaderc-configure.log" cmake "${gen[@]}" -S "$WORK/shaderc" -B "$b" \
    -DCMAKE_BUILD_TYPE=Release \
    -DSHADERC_SKIP_TESTS=ON -DSHADERC_SKIP_EXAMPLES=ON \
    -DSHADERC_SKIP_COPYRIGHT_CHECK=ON \
    -DSHADERC_ENABLE_WERROR_COMPILE=OFF \
    -DSPIRV_SKIP_TESTS=ON -DSPIRV_SKIP_EXECUTABLES=ON -DSPIRV_WERROR=OFF \
    -DENABLE_GLSLANG_BINARIES=OFF -DGLSLANG_TESTS=OFF
  if [ "$CONFIGURE_ONLY" = 1 ]; then
    stage_end
    return
  fi
  run "$WORK/shaderc-build.log" cmake --build "$b" --target glslc_exe -j "$JOBS"
  mkdir -p "$PREFIX/bin"
  cp "$b/glslc/glslc" "$PREFIX/bin/glslc"
  "$PREFIX/bin/glslc" --version
  # ggml's CMake takes an extension as supported unless glslc says
  # "extension not supported: NAME"; check here that each test shader
  # really compiles.
  local t ok=1
  for t in "$WORK"/ggml/src/ggml-vulkan/vulkan-shaders/feature-tests/*.comp; do
    if "$PREFIX/bin/glslc" -o /dev/null -fshader-stage=compute --target-env=vulkan1.3 "$t" \
      >"$WORK/feature-test.log" 2>&1; then
      echo "feature test $(basename "$t"): ok"
    else
      echo "feature test $(basename "$t"): FAILED" >&2
      cat "$WORK/feature-test.log" >&2
      ok=0
    fi
  done
  [ $ok = 1 ] || die "glslc fails a ggml feature-test shader"
  stage_end
}

cmake_args() {
  echo "-DVulkan_GLSLC_EXECUTABLE=$PREFIX/bin/glslc -DVulkan_INCLUDE_DIR=$PREFIX/include" \
    "-DVulkan_LIBRARY=$LIBVULKAN -DCMAKE_PREFIX_PATH=$PREFIX ${gen[*]}"
}

do_ggml() {
  [ -d "$WORK/ggml" ] || do_unpack
  [ -f "$PREFIX/include/vulkan/vulkan.hpp" ] || do_headers
  [ -x "$PREFIX/bin/glslc" ] || [ "$CONFIGURE_ONLY" = 1 ] || do_glslc
  [ -e "$LIBVULKAN" ] || do_loader
  stage_begin ggml
  local args commit
  args=$(cmake_args)
  echo "$args" >"$WORK/cmake-args"
  commit=$(awk '$1 == "ggml" {print $3}' "$peers/COMMITS")
  if [ "$CONFIGURE_ONLY" = 1 ]; then
    mkdir -p "$BUILD"
    # shellcheck disable=SC2086 # args is a list of options
    run "$BUILD/configure.log" cmake -S "$root/bench/ggml-peers" -B "$BUILD" \
      -DCMAKE_BUILD_TYPE=Release -DGGML_PEERS_SOURCE="$WORK/ggml" -DGGML_VULKAN=ON $args
    grep -E 'glslc|Vulkan|SPIRV' "$BUILD/configure.log" || true
    stage_end
    return
  fi
  echo "+ GGML_PEERS_CMAKE_ARGS=\"$args\" GGML_COMMIT=$commit JOBS=$JOBS" \
    "bench/ggml-peers.sh $WORK/ggml $BUILD --backend=vulkan --help"
  if ! GGML_PEERS_CMAKE_ARGS="$args" GGML_COMMIT=$commit JOBS=$JOBS \
    bash "$root/bench/ggml-peers.sh" "$WORK/ggml" "$BUILD" --backend=vulkan --help \
    >"$WORK/ggml-peers-build.log" 2>&1; then
    echo "!!! last 40 lines of $WORK/ggml-peers-build.log:" >&2
    tail -40 "$WORK/ggml-peers-build.log" >&2
    [ -f "$BUILD/build.log" ] && { echo "!!! last 60 lines of $BUILD/build.log:" >&2; tail -60 "$BUILD/build.log" >&2; }
    die "bench/ggml-peers.sh failed"
  fi
  grep -E 'glslc|Vulkan found|SPIRV' "$BUILD/configure.log" || true
  ls -la "$BUILD/ggml-peers"
  ldd "$BUILD/ggml-peers" | grep -E 'vulkan|ggml' || true
  stage_end
  echo "to time: GGML_PEERS_CMAKE_ARGS=\"$args\" GGML_COMMIT=$commit JOBS=$JOBS" \
    "bench/ggml-peers.sh $WORK/ggml $BUILD --backend=vulkan [--quick] [--json=FILE]"
}

[ $# -gt 0 ] || set -- all
for s in "$@"; do
  case $s in
  loader | icd | unpack | headers | glslc | ggml | all) ;;
  *)
    echo "unknown stage '$s' (loader icd unpack headers glslc ggml all)" >&2
    exit 2
    ;;
  esac
done
for s in "$@"; do
  case $s in
  loader) do_loader ;;
  icd) do_icd ;;
  unpack) do_unpack ;;
  headers) do_headers ;;
  glslc) do_glslc ;;
  ggml) do_ggml ;;
  all)
    do_loader
    do_icd
    do_unpack
    do_headers
    do_glslc
    do_ggml
    ;;
  *)
    echo "unknown stage '$s' (loader icd unpack headers glslc ggml all)" >&2
    exit 2
    ;;
  esac
done
echo "=== all requested stages done in $(($(date +%s) - t_all)) s"
