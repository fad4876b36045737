"""Wraps a cachet-gen function in an @main that mlir-runner can run on the CPU.

Usage: cpu_main.py GENERATED.mlir ARGS_FILE > MAIN.mlir

ARGS_FILE is the `PREFIX.args` file of `cachet-gen --write-inputs`. @main
passes each input file's bytes as an `arith.constant dense<"0x...">` to the
generated function and prints every floating-point or integer result with
printMemrefF32 / printMemrefI32 (f16 and bf16 results widened to f32), so
that an upstream-only lowering checks the generated IR without cachet.
"""
import re
import sys


def element(tensor_type):
    return tensor_type[len("tensor<"):-1].split("x")[-1]


def shape(tensor_type):
    return tensor_type[len("tensor<"):-1].split("x")[:-1]


def main():
    text = open(sys.argv[1]).read()
    files = [a[len("--input="):] for a in open(sys.argv[2]).read().split()]
    header = re.search(r"func\.func @(\w+)\((.*?)\)\n\s*-> \((.*?)\) \{",
                       text, re.S)
    name = header.group(1)
    arg_types = re.findall(r"%\w+: (tensor<[^>]*>)", header.group(2))
    # Result attributes ({cachet.argmax_of = ...}) are not part of the type.
    result_types = [re.sub(r" \{.*\}$", "", t.strip())
                    for t in header.group(3).split(", ")]
    assert len(arg_types) == len(files), (len(arg_types), len(files))
    out = [text,
           "func.func private @printMemrefF32(memref<*xf32>)",
           "func.func private @printMemrefI32(memref<*xi32>)",
           "func.func @main() {"]
    args = []
    for i, (t, path) in enumerate(zip(arg_types, files)):
        data = open(path, "rb").read().hex().upper()
        out.append('  %%a%d = arith.constant dense<"0x%s"> : %s' % (i, data, t))
        args.append("%%a%d" % i)
    out.append("  %%r:%d = call @%s(%s) : (%s) -> (%s)" % (
        len(result_types), name, ", ".join(args), ", ".join(arg_types),
        ", ".join(result_types)))
    for i, t in enumerate(result_types):
        e = element(t)
        dims = shape(t)
        value = "%%r#%d" % i
        if e in ("f16", "bf16"):
            wide = "tensor<%sxf32>" % "x".join(dims)
            n = len(dims)
            ds = ", ".join("d%d" % k for k in range(n))
            out += [
                "  %%w%d_e = tensor.empty() : %s" % (i, wide),
                "  %%w%d = linalg.generic {indexing_maps = [affine_map<(%s) -> "
                "(%s)>, affine_map<(%s) -> (%s)>], iterator_types = [%s]} "
                "ins(%s : %s) outs(%%w%d_e : %s) {" % (
                    i, ds, ds, ds, ds, ", ".join(['"parallel"'] * n), value, t,
                    i, wide),
                "  ^bb0(%%in: %s, %%o: f32):" % e,
                "    %f = arith.extf %in : " + e + " to f32",
                "    linalg.yield %f : f32",
                "  } -> " + wide]
            value, t, e = "%%w%d" % i, wide, "f32"
        if e not in ("f32", "i32"):
            continue
        memref = t.replace("tensor<", "memref<")
        out += [
            "  %%m%d = bufferization.to_buffer %s : %s to %s" % (
                i, value, t, memref),
            "  %%u%d = memref.cast %%m%d : %s to memref<*x%s>" % (
                i, i, memref, e),
            "  call @printMemref%s(%%u%d) : (memref<*x%s>) -> ()" % (
                e.upper(), i, e)]
    out += ["  return", "}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
