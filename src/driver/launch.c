/* Running kernels on the CPU interpreter through the public API: the
 * arguments give the signature (Triton's specialisation: pointers and
 * integers divisible by 16 get ':16', integers equal to 1 become constexpr),
 * the pipeline gives tile IR, and the interpreter runs it on the caller's
 * buffers. */
#include "driver.h"
#include "../interp/interp.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

tile_arg tile_buffer(void *data, const char *dtype, size_t count) {
  tile_arg a = {TILE_ARG_BUFFER, dtype, data, count, 0, 0};
  return a;
}

tile_arg tile_int(long long value) {
  tile_arg a = {TILE_ARG_INT, NULL, NULL, 0, value, 0};
  return a;
}

tile_arg tile_float(double value) {
  tile_arg a = {TILE_ARG_FLOAT, NULL, NULL, 0, 0, value};
  return a;
}

/* Appends the signature entry of argument `i`; 0 and a message if it is bad. */
static int signature_entry(Buf *sig, const tile_arg *a, int i, char *err, size_t errsz) {
  int dt = a->dtype ? dtype_lookup(a->dtype) : -1;
  if (a->dtype && dt < 0) {
    snprintf(err, errsz, "argument %d: unknown dtype '%s' (expected e.g. fp32, fp16, i32)", i, a->dtype);
    return 0;
  }
  buf_puts(sig, i ? "," : "");
  switch (a->kind) {
  case TILE_ARG_BUFFER:
    if (dt < 0 || (!a->data && a->count)) {
      snprintf(err, errsz, "argument %d: a buffer needs a dtype and memory", i);
      return 0;
    }
    buf_printf(sig, "*%s%s", dtype_name((DType)dt), (uintptr_t)a->data % 16 == 0 ? ":16" : "");
    return 1;
  case TILE_ARG_INT:
    if (dt >= 0 && !dtype_is_int((DType)dt)) {
      snprintf(err, errsz, "argument %d: an integer argument cannot have dtype '%s'", i, a->dtype);
      return 0;
    }
    buf_puts(sig, dt >= 0 ? dtype_name((DType)dt) : a->i >= INT32_MIN && a->i <= INT32_MAX ? "i32" : "i64");
    buf_puts(sig, a->i == 1 ? ":1" : a->i % 16 == 0 ? ":16" : "");
    return 1;
  case TILE_ARG_FLOAT:
    if (dt >= 0 && !dtype_is_float((DType)dt)) {
      snprintf(err, errsz, "argument %d: a float argument cannot have dtype '%s'", i, a->dtype);
      return 0;
    }
    buf_puts(sig, dt >= 0 ? dtype_name((DType)dt) : "fp32");
    return 1;
  }
  snprintf(err, errsz, "argument %d: unknown kind %d", i, (int)a->kind);
  return 0;
}

/* Binds the tile IR's parameters to the arguments; buffers keep their order. */
static int bind_arguments(const TirFunc *f, const tile_arg *args, int n, InterpLaunch *L, InterpBuffer *buffers,
                          InterpArg *iargs, char *err, size_t errsz) {
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
    buffers[tp->arg_index].bytes = a->count * (elem == DT_I1 ? 1 : (size_t)dtype_bits(elem) / 8);
    iargs[p].buffer = tp->arg_index;
  }
  L->buffers = buffers;
  L->n_buffers = n;
  L->args = iargs;
  return 1;
}

/* The pipeline under the compilation's guard; NULL after errors. */
static TirFunc *compile_protected(Compilation *c, const tile_options *opts) {
  if (setjmp(c->guard.jump) != 0) return NULL;
  return pipeline_tir(c, opts, NULL);
}

static tile_status run(Compilation *c, const tile_options *opts, const unsigned grid[3], const tile_arg *args, int n,
                       const char **printed) {
  tile_context *ctx = c->ctx;
  char err[512] = "";
  TirFunc *f = compile_protected(c, opts);
  keep_diagnostics(ctx, c, f ? TILE_OK : TILE_ERROR_COMPILE);
  if (!f) return c->diags.errors ? TILE_ERROR_COMPILE : context_fail(ctx, TILE_ERROR_MEMORY, c->guard.message);
  InterpLaunch L = {0};
  InterpBuffer buffers[256];
  InterpArg iargs[256]; /* params that take arguments: at most n <= 256 */
  if (f->params.len > n) {
    snprintf(err, sizeof err, "kernel '%s' has %d run-time parameters but %d arguments were given", f->name,
             f->params.len, n);
    return context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  }
  if (!bind_arguments(f, args, n, &L, buffers, iargs, err, sizeof err)) return context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  Buf out;
  buf_init(&out, &c->arena);
  L.f = f;
  L.output = &out;
  for (int i = 0; i < 3; i++) L.grid[i] = (int)grid[i];
  int failed = interp_run(&L);
  if (printed) *printed = arena_strndup(&ctx->results, buf_cstr(&out), out.len);
  return failed ? context_fail(ctx, TILE_ERROR_RUNTIME, L.error) : TILE_OK;
}

tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                         const unsigned grid[3], const tile_arg *args, int num_args, const char **printed) {
  if (!ctx) return TILE_ERROR_ARGUMENT;
  if (printed) *printed = NULL;
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return TILE_ERROR_MEMORY;
  tile_status s = TILE_OK;
  char err[512] = "";
  tile_options o;
  tile_options_init(&o);
  if (opts) o = *opts;
  Buf sig;
  buf_init(&sig, &c->arena);
  if (!source || !grid || (num_args && !args) || num_args < 0 || num_args > 256) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: NULL source, grid or arguments, or more than 256 arguments");
  } else if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: the grid is larger than a GPU allows (2^31-1 x 65535 x 65535)");
  } else {
    for (int i = 0; i < num_args && s == TILE_OK; i++)
      if (!signature_entry(&sig, &args[i], i, err, sizeof err)) s = context_fail(ctx, TILE_ERROR_ARGUMENT, err);
    if (!o.signature) o.signature = buf_cstr(&sig);
    if (s == TILE_OK) s = run(c, &o, grid, args, num_args, printed);
  }
  compilation_end(c);
  return s;
}
