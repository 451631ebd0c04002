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
void nvptx_wgmma_fence(Lower *L);
void nvptx_wgmma(Lower *L, int kind, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef b_desc, int trans_a,
                 int trans_b);
void nvptx_wgmma_commit(Lower *L);
void nvptx_wgmma_wait(Lower *L, int pending, LLVMValueRef *acc, int n_acc);
void nvptx_fence_proxy_async(Lower *L);

void sim_ldmatrix(Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out);
void sim_mma(Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c);
void sim_cp_async(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes);
void sim_cp_async_commit(Lower *L);
void sim_cp_async_wait(Lower *L, int pending);
void sim_wgmma_fence(Lower *L);
void sim_wgmma(Lower *L, int kind, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef b_desc, int trans_a,
               int trans_b);
void sim_wgmma_commit(Lower *L);
void sim_wgmma_wait(Lower *L, int pending, LLVMValueRef *acc, int n_acc);
void sim_fence_proxy_async(Lower *L);

#endif
