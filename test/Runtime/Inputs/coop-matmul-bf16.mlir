// A 16x16x16 bf16 product with an f32 accumulator through KHR cooperative
// matrices (SPV_KHR_bfloat16), by one subgroup of 32 lanes: c = a * b, a
// and b row-major bf16
// (bindings 0 and 1), c row-major f32 (binding 2), the row stride in
// elements a push constant. Serialized with mlir-translate for
// test/Runtime/vulkan-coop-matrix.test.
spirv.module Logical GLSL450 requires #spirv.vce<v1.6,
    [Shader, StorageBuffer16BitAccess, CooperativeMatrixKHR, BFloat16TypeKHR, BFloat16CooperativeMatrixKHR],
    [SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage,
     SPV_KHR_cooperative_matrix, SPV_KHR_bfloat16]> {
  spirv.GlobalVariable @a bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>
  spirv.GlobalVariable @b bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>
  spirv.GlobalVariable @c bind(0, 2) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
  spirv.GlobalVariable @params : !spirv.ptr<!spirv.struct<(i32 [0])>, PushConstant>
  spirv.func @coop_matmul() "None" {
    %zero = spirv.Constant 0 : i32
    %accInit = spirv.Constant 0.0 : f32
    %paramsAddr = spirv.mlir.addressof @params : !spirv.ptr<!spirv.struct<(i32 [0])>, PushConstant>
    %stridePtr = spirv.AccessChain %paramsAddr[%zero] : !spirv.ptr<!spirv.struct<(i32 [0])>, PushConstant>, i32 -> !spirv.ptr<i32, PushConstant>
    %stride = spirv.Load "PushConstant" %stridePtr : i32
    %aAddr = spirv.mlir.addressof @a : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>
    %bAddr = spirv.mlir.addressof @b : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>
    %cAddr = spirv.mlir.addressof @c : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
    %aPtr = spirv.AccessChain %aAddr[%zero, %zero] : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>, i32, i32 -> !spirv.ptr<bf16, StorageBuffer>
    %bPtr = spirv.AccessChain %bAddr[%zero, %zero] : !spirv.ptr<!spirv.struct<(!spirv.rtarray<bf16, stride=2> [0])>, StorageBuffer>, i32, i32 -> !spirv.ptr<bf16, StorageBuffer>
    %cPtr = spirv.AccessChain %cAddr[%zero, %zero] : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>, i32, i32 -> !spirv.ptr<f32, StorageBuffer>
    %a = spirv.KHR.CooperativeMatrixLoad %aPtr, %stride, <RowMajor> : !spirv.ptr<bf16, StorageBuffer>, i32 -> !spirv.coopmatrix<16x16xbf16, Subgroup, MatrixA>
    %b = spirv.KHR.CooperativeMatrixLoad %bPtr, %stride, <RowMajor> : !spirv.ptr<bf16, StorageBuffer>, i32 -> !spirv.coopmatrix<16x16xbf16, Subgroup, MatrixB>
    %acc = spirv.CompositeConstruct %accInit : (f32) -> !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>
    %d = spirv.KHR.CooperativeMatrixMulAdd %a, %b, %acc : !spirv.coopmatrix<16x16xbf16, Subgroup, MatrixA>, !spirv.coopmatrix<16x16xbf16, Subgroup, MatrixB> -> !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>
    spirv.KHR.CooperativeMatrixStore %cPtr, %d, %stride, <RowMajor> : !spirv.ptr<f32, StorageBuffer>, !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>, i32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @coop_matmul, @a, @b, @c, @params
  spirv.ExecutionMode @coop_matmul "LocalSize", 32, 1, 1
}
