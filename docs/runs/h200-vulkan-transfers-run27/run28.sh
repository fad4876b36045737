set -u
D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
mkdir -p /work/main/build/runtime/test/shaders && cp $D/shaders/*.spv /work/main/build/runtime/test/shaders/
timeout 300 cuda-gdb -batch -ex run -ex bt -ex "info sharedlibrary" --args $B/cachet-runtime-test > $OUT/gdb.log 2>&1
grep -a -A40 "SIGSEGV\|signal" $OUT/gdb.log | head -60
