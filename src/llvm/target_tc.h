/* The tensor-core, ldmatrix and cp.async primitives of each target
 * (target_nvptx_tc.c, target_sim_tc.c), for the Target tables. */
#ifndef TILE_LLVM_TARGET_TC_H
#define TILE_LLVM_TARGET_TC_H

#include "lower.h"

void nvptx_ldmatrix(Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out);
void nvptx_mma(Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c);
void nvptx_cp_async(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes);
void nvptx_cp_async_commit(Lower *L);
void nvptx_cp_async_wait(Lower *L, int pending);

void sim_ldmatrix(Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out);
void sim_mma(Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c);
void sim_cp_async(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes);
void sim_cp_async_commit(Lower *L);
void sim_cp_async_wait(Lower *L, int pending);

#endif
