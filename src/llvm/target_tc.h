/* The tensor-core, ldmatrix and cp.async primitives of each target
 * (target_nvptx_tc.c, target_sim_tc.c), for the Target tables: declared
 * from lower.h's TARGET_TC_PRIMITIVES list. */
#ifndef TILE_LLVM_TARGET_TC_H
#define TILE_LLVM_TARGET_TC_H

#include "lower.h"

#define TARGET_TC_PROTOTYPE(target, name, params) void target##_##name params;
TARGET_TC_PRIMITIVES(TARGET_TC_PROTOTYPE, nvptx)
TARGET_TC_PRIMITIVES(TARGET_TC_PROTOTYPE, sim)

/* A target's Target table entries for them: .ldmatrix = nvptx_ldmatrix, ... */
#define TARGET_TC_ENTRY(target, name, params) .name = target##_##name,
#define TARGET_TC_ENTRIES(target) TARGET_TC_PRIMITIVES(TARGET_TC_ENTRY, target)

#endif
