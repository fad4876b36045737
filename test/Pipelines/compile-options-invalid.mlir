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
// A good set of options still compiles.
// RUN: cachet-opt %s --cachet-compile="target=spirv profile=lavapipe matvec-kernel=generic attention-kernel=scalar attention-options={key-tile=16}" -o /dev/null

// ATTENTION: error: cachet-compile: bad attention-options: <Pass-Options-Parser>: no such option bogus
// BRACE: error: cachet-compile: bad attention-options: {{.*}}missing closing '}'
// MATVEC: error: cachet-compile: bad matvec-options:
// PREFETCH: error: cachet-compile: bad prefetch-options: <Pass-Options-Parser>: no such option nope
// DEQUANT: error: cachet-compile: bad dequant-transpose-options: <Pass-Options-Parser>: no such option nope
// KERNEL: for the --matvec-kernel option: Cannot find option named 'banana'!
// KERNEL: error: cachet-compile: bad option in 'matvec-kernel=banana'
// ATTKERNEL: for the --attention-kernel option: Cannot find option named 'fast'!
// FORMAT: error: cachet-compile: bad format 'nope': one of isa, bin, fatbin, llvm, offloading
// WORKGROUP: error: cachet-compile: bad workgroup-size 0: must be positive
// REFERENCE: error: cachet-compile: bad option in 'bogus=1'

func.func @add(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.add ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
