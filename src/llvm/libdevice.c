/* Linking libdevice: math the GPU has no instruction for (logf, sinf, erf,
 * fp64 exp...) is a call to libdevice's __nv_* functions.  When the module
 * calls any, libdevice.10.bc is read, linked in, and every function but
 * the kernel made internal, so the optimiser keeps only what is called.
 * NVVMReflect (in the NVPTX pipeline) resolves __nvvm_reflect; the module
 * sets no "nvvm-reflect-ftz", so denormals are kept.  The path comes from
 * the caller (GpuTarget.libdevice): the environment is read at the edge. */
#include "lower.h"
#include "llvm.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *first_libdevice_call(LLVMModuleRef m) {
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
    size_t n;
    const char *name = LLVMGetValueName2(fn, &n);
    if (LLVMIsDeclaration(fn) && n > 5 && !strncmp(name, "__nv_", 5)) return name;
  }
  return NULL;
}

static void internalize(LLVMModuleRef m) {
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && LLVMGetFunctionCallConv(fn) != 71) LLVMSetLinkage(fn, LLVMInternalLinkage);
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g) && LLVMGetLinkage(g) == LLVMExternalLinkage) LLVMSetLinkage(g, LLVMInternalLinkage);
}

static LLVMModuleRef read_libdevice(LLVMModuleRef module, const char *path, const char *needed, char *err, size_t size) {
  LLVMMemoryBufferRef buffer;
  char *message = NULL;
  struct stat st; /* LLVM's read of a FIFO would block: only a regular file */
  if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
    snprintf(err, size, "the kernel calls %s, which needs libdevice, but %s is not a regular file", needed, path);
    return NULL;
  }
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buffer, &message)) {
    snprintf(err, size, "the kernel calls %s, which needs libdevice, but %s cannot be read (%s); set TILE_LIBDEVICE_PATH or CUDA_HOME", needed,
             path, message ? message : "no such file");
    LLVMDisposeMessage(message);
    return NULL;
  }
  LLVMModuleRef lib = NULL;
  if (LLVMParseBitcodeInContext2(LLVMGetModuleContext(module), buffer, &lib)) {
    snprintf(err, size, "%s is not a valid LLVM bitcode file", path);
    lib = NULL;
  }
  LLVMDisposeMemoryBuffer(buffer);
  return lib;
}

/* Declarations the PTX may keep: LLVM's and NVVM's intrinsics, what NVVMReflect
 * resolves, and what the CUDA driver supplies (device_print, device_assert). */
static int may_stay_external(const char *name) {
  return !strncmp(name, "llvm.", 5) || !strcmp(name, "__nvvm_reflect") || !strcmp(name, "vprintf") ||
         !strcmp(name, "__assertfail");
}

/* After linking, a function still called but defined nowhere means `path` is
 * not libdevice (or not all of it): ptxas would take the PTX's extern
 * declarations and the cubin would not load.  -1 with the names in err. */
static int check_resolved(LLVMModuleRef m, const char *path, char *err, size_t size) {
  int missing = 0, used = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
    const char *name = LLVMGetValueName2(fn, &(size_t){0});
    if (!LLVMIsDeclaration(fn) || !LLVMGetFirstUse(fn) || may_stay_external(name)) continue;
    if (!missing++) used = snprintf(err, size, "%s does not define %s", path, name);
    else if (used > 0 && (size_t)used < size) used += snprintf(err + used, size - (size_t)used, ", %s", name);
  }
  if (missing && used > 0 && (size_t)used < size)
    snprintf(err + used, size - (size_t)used, ", which the kernel calls: is it libdevice.10.bc? (--libdevice, "
             "TILE_LIBDEVICE_PATH)");
  return missing ? -1 : 0;
}

int lower_link_libdevice(LLVMModuleRef module, const char *path, char *err, size_t size) {
  const char *needed = first_libdevice_call(module);
  if (!needed) return 0;
  if (!path) {
    snprintf(err, size, "the kernel calls %s, which needs libdevice, and no libdevice path was given", needed);
    return -1;
  }
  LLVMModuleRef lib = read_libdevice(module, path, needed, err, size);
  if (!lib) return -1;
  LLVMSetTarget(module, LLVM_NVPTX_TRIPLE); /* same triple and layout: the linker has nothing to warn about */
  LLVMSetTarget(lib, LLVM_NVPTX_TRIPLE);
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(module));
  if (LLVMLinkModules2(module, lib)) {
    snprintf(err, size, "linking %s failed", path);
    return -1;
  }
  if (check_resolved(module, path, err, size)) return -1;
  internalize(module);
  return 0;
}
