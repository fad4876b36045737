// A kernel that shuffles across a subgroup, with the specialization constant
// through which cachet-spirv-subgroup-size records the subgroup size it was
// written for (SpecId 0x63616368, CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID).
// SIZE is replaced by the test. Serialized with mlir-translate for
// test/Runtime/spirv-subgroup-size.test.
spirv.module Logical GLSL450 requires #spirv.vce<v1.3,
    [Shader, GroupNonUniformShuffle], [SPV_KHR_storage_buffer_storage_class]> {
  spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = SIZE : i32
  spirv.GlobalVariable @out bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
  spirv.GlobalVariable @id built_in("LocalInvocationId") : !spirv.ptr<vector<3xi32>, Input>
  spirv.func @shuffle() "None" {
    %zero = spirv.Constant 0 : i32
    %one = spirv.Constant 1 : i32
    %idAddr = spirv.mlir.addressof @id : !spirv.ptr<vector<3xi32>, Input>
    %ids = spirv.Load "Input" %idAddr : vector<3xi32>
    %x = spirv.CompositeExtract %ids[0 : i32] : vector<3xi32>
    %v = spirv.ConvertSToF %x : i32 to f32
    %s = spirv.GroupNonUniformShuffleXor <Subgroup> %v, %one : f32, i32
    %outAddr = spirv.mlir.addressof @out : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
    %p = spirv.AccessChain %outAddr[%zero, %x] : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>, i32, i32 -> !spirv.ptr<f32, StorageBuffer>
    spirv.Store "StorageBuffer" %p, %s : f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @shuffle, @id
  spirv.ExecutionMode @shuffle "LocalSize", 64, 1, 1
}
