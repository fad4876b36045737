//===- Passes.td - cachet pass declarations ----------------*- tablegen -*-===//

#ifndef CACHET_PASSES_TD
#define CACHET_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttachDevice : Pass<"cachet-attach-device", "mlir::ModuleOp"> {
  let summary = "Attach a device profile to the module";
  let description = [{
    Resolves `profile` (a built-in name, or a path to a JSON profile such as
    `cachet-probe` writes) and stores it as the module attribute
    `cachet.device`, which every other cachet pass reads. A profile that
    cannot be resolved or whose fields are out of range is an error naming
    the profile (and for JSON, the file and the field). An existing profile
    is replaced.

    Before:

    ```mlir
    module {
      func.func @f() { return }
    }
    ```

    After `cachet-attach-device{profile=gfx1151}`:

    ```mlir
    module attributes {cachet.device = #cachet.device<name = "gfx1151",
        vendor = "amd", arch = "gfx1151", cache_line = 128, l2_bytes = 2097152,
        alias_stride = 2048, alias_pad = 128, compute_units = 40,
        dram_gbps = 2.560000e+02, unified_memory = true,
        strided_read_penalty = 3.200000e+00, pdl = false, l2_prefetch = "none",
        coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32,
        shared_memory_bytes = 65536>} {
      func.func @f() { return }
    }
    ```

    Built-in profiles: `h200`, `rtx4070`, `rtx2060s`, `gfx1151`, `gfx942`,
    `lavapipe` (docs/device-profiles.md).
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Built-in profile name or path to a JSON profile">,
  ];
  let dependentDialects = ["::cachet::CachetDialect"];
}

#endif // CACHET_PASSES_TD
