set -u
W=/tmp/w27b; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
mkdir -p /work/main/build/runtime/test/shaders && cp $D/shaders/*.spv /work/main/build/runtime/test/shaders/
timeout 200 $B/cachet-runtime-test > $W/runtime-test.log 2>&1; echo "exit $?" >> $W/runtime-test.log
timeout 200 $B/cachet-runtime-test --force-staging > $W/runtime-test-staging.log 2>&1; echo "exit $?" >> $W/runtime-test-staging.log
cp $W/*.log $OUT/
grep -ac "^PASS" $W/runtime-test.log $W/runtime-test-staging.log
grep -a "^FAIL\|exit\|SKIP" $W/runtime-test*.log | head -20
grep -a "device info\|large\|staging\|reuse" $W/runtime-test.log | head -10
