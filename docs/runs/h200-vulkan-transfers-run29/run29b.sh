set -u
D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
mkdir -p /work/main/build/runtime/test/shaders && cp $D/shaders/*.spv /work/main/build/runtime/test/shaders/
timeout 120 $B/cachet-runtime-test --skip-corrupt-modules > $OUT/runtime-test.log 2>&1; echo "exit $?" >> $OUT/runtime-test.log
timeout 120 $B/cachet-runtime-test --skip-corrupt-modules --force-staging > $OUT/runtime-test-staging.log 2>&1; echo "exit $?" >> $OUT/runtime-test-staging.log
grep -ac "^PASS" $OUT/runtime-test*.log; grep -a "^FAIL\|exit\|failure\|mgpuMemcpy" $OUT/runtime-test*.log
