# Sourced by the scripts of scripts/device/ with DIR set: unpacks the Vulkan
# loader and libglvnd from .gl/ (the Debian packages the device README
# names) where the server lacks them, points the
# loader at the NVIDIA driver's ICD where it exists, and puts DIR/lib (with
# libcachet_runtime) on the library path.
# (NVIDIA's Vulkan ICD needs libglvnd's libGLdispatch too: without it the
# loader reports VK_ERROR_INCOMPATIBLE_DRIVER.)
if [ -d .gl ] && ! { ldconfig -p | grep -q libvulkan.so.1 &&
                     ldconfig -p | grep -q libGLdispatch.so.0; }; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# start_ggml_build LOG: where GGML_DIR is set, builds ggml's CUDA backend
# and bench/ggml-peers' driver into /tmp/ggml-build in the background
# (ggml-peers.sh builds, then runs the driver with --help only), so that
# cachet's cases run meanwhile; `wait $build` before timing ggml.
start_ggml_build() {
  [ -n "${GGML_DIR:-}" ] || return 0
  (JOBS=12 timeout 420 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --help > "$1" 2>&1; echo "build rc $?" >> "$1") &
  build=$!
}
# check ARTIFACT...: each through cachet-runner --check --compare-rewrites
# (B: the folder of cachet-runner), its verdict lines.
check() {
  for c in "$@"; do
    echo "== $c"
    timeout 60 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"
  done
}
