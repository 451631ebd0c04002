/* Running kernels on the CPU interpreter: tile_run_cpu compiles and runs
 * in one call, specialised on its arguments as Triton specialises (the
 * same key as a GPU launch: src/runtime/args.c); launch_interpreted is the
 * one way tile IR meets host buffers, for it and for CPU-mode launches of
 * tile_kernel. */
#include "driver.h"
#include "../interp/interp.h"
#include "../runtime/args.h"
#include "../runtime/metadata.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Binds the tile IR's parameters to the arguments; buffers keep their order. */
static int bind_arguments(const TirFunc *f, const tile_arg *args, int n, const size_t *bytes, InterpLaunch *L,
                          InterpBuffer *buffers, InterpArg *iargs, char *err, size_t errsz) {
  for (int i = 0; i < n; i++) buffers[i] = (InterpBuffer){"?", args[i].data, 0};
  for (int p = 0; p < f->params.len; p++) {
    const TirParam *tp = &f->params.data[p];
    if (tp->arg_index >= n) {
      snprintf(err, errsz, "kernel '%s' takes more arguments than the %d given", f->name, n);
      return 0;
    }
    const tile_arg *a = &args[tp->arg_index];
    Type *t = tir_type(f, tp->value);
    if ((a->kind == TILE_ARG_BUFFER) != t->is_ptr) {
      snprintf(err, errsz, "argument %d ('%s'): a %s for a parameter of type %s", tp->arg_index, tp->name,
               a->kind == TILE_ARG_BUFFER ? "buffer" : "number", type_str(f->arena, t));
      return 0;
    }
    iargs[p] = (InterpArg){-1, a->i, a->kind == TILE_ARG_FLOAT ? a->f : (double)a->i};
    if (a->kind != TILE_ARG_BUFFER) continue;
    int dt = a->dtype ? dtype_lookup(a->dtype) : -1;
    DType elem = t->elem;
    if (dt != (int)elem) {
      snprintf(err, errsz, "argument %d ('%s'): a buffer of %s for a parameter of type *%s", tp->arg_index, tp->name,
               a->dtype ? a->dtype : "(no dtype)", dtype_name(elem));
      return 0;
    }
    buffers[tp->arg_index].name = tp->name;
    buffers[tp->arg_index].bytes = bytes[tp->arg_index];
    iargs[p].buffer = tp->arg_index;
  }
  L->buffers = buffers;
  L->n_buffers = n;
  L->args = iargs;
  return 1;
}

tile_status launch_interpreted(const TirFunc *f, const unsigned grid[3], const tile_arg *args, int n,
                               const size_t *bytes, double time_limit_s, Buf *printed, char *err, size_t errsize) {
  InterpLaunch L = {0};
  InterpBuffer buffers[MAX_KERNEL_ARGS];
  InterpArg iargs[MAX_KERNEL_ARGS]; /* params that take arguments: at most n <= MAX_KERNEL_ARGS */
  if (n > MAX_KERNEL_ARGS || f->params.len > n) {
    snprintf(err, errsize, "kernel '%s' has %d run-time parameters but %d arguments were given", f->name,
             f->params.len, n);
    return TILE_ERROR_ARGUMENT;
  }
  if (!bind_arguments(f, args, n, bytes, &L, buffers, iargs, err, errsize)) return TILE_ERROR_ARGUMENT;
  L.f = f;
  L.output = printed;
  L.time_limit_s = time_limit_s;
  for (int i = 0; i < 3; i++) L.grid[i] = (int)grid[i];
  if (interp_run(&L) == 0) return TILE_OK;
  snprintf(err, errsize, "%s", L.error);
  return TILE_ERROR_RUNTIME;
}

/* The pipeline under the compilation's guard; NULL after errors. */
static TirFunc *compile_protected(Compilation *c, const tile_options *opts) {
  if (setjmp(c->guard.jump) != 0) return NULL;
  return pipeline_tir(c, opts, NULL);
}

/* Each buffer's bytes from its count: at most what the interpreter can address. */
static int buffer_bytes(const KernelMetadata *m, const tile_arg *args, size_t *bytes, char *err, size_t errsize) {
  for (int i = 0; i < m->num_params; i++) {
    const MetaParam *p = &m->params[i];
    size_t elem = dtype_size(p->dtype), count = args[p->position].count;
    if (!p->is_ptr) continue;
    if (count > INTERP_MAX_BUFFER_BYTES / elem) {
      snprintf(err, errsize, "argument %d ('%s'): %zu elements of %s are more than the interpreter can address (2^43 bytes)",
               p->position, p->name, count, dtype_name((DType)p->dtype));
      return -1;
    }
    bytes[p->position] = count * elem;
  }
  return 0;
}

/* The arguments checked against the kernel's metadata, as tile_launch checks
 * them (src/runtime/args.c), and each buffer's bytes; under c's guard. */
static tile_status check_arguments(Compilation *c, const TirFunc *f, const tile_arg *args, int n, size_t *bytes,
                                   char *err, size_t errsize) {
  KernelMetadata m;
  const char *json = describe_kernel(c, f, NULL, 0);
  if (meta_parse(&c->arena, json, strlen(json), &m, err, errsize)) return TILE_ERROR_COMPILE;
  if (args_check(&m, args, n, NULL, NULL, err, errsize) || buffer_bytes(&m, args, bytes, err, errsize))
    return TILE_ERROR_ARGUMENT;
  return TILE_OK;
}

static tile_status run(Compilation *c, const tile_options *opts, const unsigned grid[3], const tile_arg *args, int n,
                       const char **printed) {
  tile_context *ctx = c->ctx;
  char err[512] = "";
  TirFunc *f = compile_protected(c, opts);
  keep_diagnostics(ctx, c, f ? TILE_OK : TILE_ERROR_COMPILE);
  if (!f) return c->diags.errors ? TILE_ERROR_COMPILE : context_fail(ctx, TILE_ERROR_MEMORY, c->guard.message);
  size_t bytes[MAX_KERNEL_ARGS] = {0};
  Buf out;
  buf_init(&out, &c->arena);
  volatile tile_status s = TILE_ERROR_MEMORY; /* set between setjmp and a possible longjmp */
  if (setjmp(c->guard.jump) == 0) {
    s = check_arguments(c, f, args, n, bytes, err, sizeof err);
    if (s == TILE_OK) s = launch_interpreted(f, grid, args, n, bytes, ctx->interp_time_limit, &out, err, sizeof err);
  } else {
    snprintf(err, sizeof err, "%s", c->guard.message); /* device_print's text over the cap */
  }
  if (s != TILE_OK) return context_fail(ctx, s, err);
  if (printed && !(*printed = arena_strndup(&ctx->results, buf_cstr(&out), out.len)))
    return context_failf(ctx, TILE_ERROR_MEMORY, "out of memory for the %zu bytes device_print wrote", out.len);
  return s;
}

tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                         const unsigned grid[3], const tile_arg *args, int num_args, const char **printed) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  if (printed) *printed = NULL;
  context_begin(ctx);
  tile_options o;
  tile_status s = context_read_options(ctx, opts, "tile_run_cpu", &o);
  if (s != TILE_OK) return s;
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  char err[512] = "", signature[MAX_SIGNATURE];
  uint16_t key[MAX_KERNEL_ARGS];
  if (!source || !grid || (num_args && !args) || num_args < 0 || num_args > MAX_KERNEL_ARGS) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: NULL source, grid or arguments, or more than 256 arguments");
  } else if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: the grid is larger than a GPU allows (2^31-1 x 65535 x 65535)");
  } else if (args_key(args, num_args, key, err, sizeof err)) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  } else {
    key_signature(key, num_args, signature, sizeof signature);
    if (!o.signature) o.signature = signature;
    s = run(c, &o, grid, args, num_args, printed);
  }
  compilation_end(c);
  return s;
}
