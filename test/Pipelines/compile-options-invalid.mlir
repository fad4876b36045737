// A bad cachet-compile option is a diagnostic naming the option, with exit
// status 1 and no abort (`not` fails on a signal): the options of the passes
// given as text, enum values, the object format and numbers.
// RUN: not cachet-opt %s --cachet-compile="attention-options=bogus=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ATTENTION
// RUN: not cachet-opt %s --cachet-compile="attention-options={" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BRACE
// RUN: not cachet-opt %s --cachet-compile="matvec-options=rows-per-block=x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MATVEC
// RUN: not cachet-opt %s --cachet-compile="prefetch-options=nope=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not cachet-opt %s --cachet-compile="dequant-transpose-options=nope=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEQUANT
// RUN: not cachet-opt %s --cachet-compile="matvec-kernel=banana" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not cachet-opt %s --cachet-compile="attention-kernel=fast" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ATTKERNEL
// RUN: not cachet-opt %s --cachet-compile="target=nvvm format=nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not cachet-opt %s --cachet-compile="workgroup-size=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORKGROUP
// RUN: not cachet-opt %s --cachet-compile-reference="bogus=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REFERENCE
// RUN: not cachet-opt %s --cachet-compile="dequant-once-options=nope=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONCE
// RUN: not cachet-opt %s --cachet-compile="pad-options=pad=x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: not cachet-opt %s --cachet-compile="attention-options={row-blocks=3}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not cachet-opt %s --cachet-compile="prefetch-options={pdl-wait=later}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WAIT
// RUN: not cachet-opt %s --cachet-compile="profile=h300" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PROFILE
// dequant-once's options reach the pass: a q4_0 layer of 6 queries per KV
// head is decode-shaped for the default min-queries (32), rewritten when
// forced.
// RUN: cachet-gen --hidden=64 --ffn=96 --past=2 --tokens=3 --kv=q4_0 -o %t.mlir
// RUN: cachet-opt %t.mlir --cachet-compile="target=spirv profile=lavapipe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONCE-DEFAULT
// RUN: cachet-opt %t.mlir --cachet-compile="target=spirv profile=lavapipe dequant-once-options={min-queries=1 force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONCE-FORCED
// A good set of options still compiles.
// RUN: cachet-opt %s --cachet-compile="target=spirv profile=lavapipe matvec-kernel=generic attention-kernel=scalar attention-options={key-tile=16}" -o /dev/null

// ATTENTION: error: cachet-compile: bad attention-options: <Pass-Options-Parser>: no such option bogus
// BRACE: error: cachet-compile: bad attention-options: <Pass-Options-Parser>: no such option {
// MATVEC: error: cachet-compile: bad matvec-options:
// PREFETCH: error: cachet-compile: bad prefetch-options: <Pass-Options-Parser>: no such option nope
// DEQUANT: error: cachet-compile: bad dequant-transpose-options: <Pass-Options-Parser>: no such option nope
// KERNEL: for the --matvec-kernel option: Cannot find option named 'banana'!
// KERNEL: error: cachet-compile: bad option in 'matvec-kernel=banana'
// ATTKERNEL: for the --attention-kernel option: Cannot find option named 'fast'!
// FORMAT: error: cachet-compile: bad format 'nope': one of isa, bin, fatbin, llvm, offloading
// WORKGROUP: error: cachet-compile: bad workgroup-size 0: must be positive
// REFERENCE: error: cachet-compile: bad option in 'bogus=1'
// ONCE: error: cachet-compile: bad dequant-once-options: <Pass-Options-Parser>: no such option nope
// PAD: error: cachet-compile: bad pad-options:
// RANGE: error: cachet-compile: bad attention-options: cachet-select-kernel-configs: bad row-blocks 3: a power of two from 1
// WAIT: for the --pdl-wait option: Cannot find option named 'later'!
// WAIT: error: cachet-compile: bad prefetch-options
// PROFILE: error: cachet-compile: bad profile 'h300': unknown device profile 'h300' (built-ins: h200,
// ONCE-DEFAULT: remark: cachet-dequant-once-kv: not rewritten: decode-shaped: 6 < min-queries 32
// ONCE-FORCED: remark: cachet-dequant-once-kv: rewritten (forced)

func.func @add(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.add ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
