/* The textual form of tile IR (docs/ir.md):
 *   %7 = add %5, %6 : i32[1024]  loc(24:27)
 * one op a line, regions in braces, every op's source line and column. */
#include "tir.h"
#include "layout.h"

#include <math.h>
#include <stdio.h>


static void print_block(const TirFunc *f, const TirBlock *b, Buf *out, int depth);

static void print_values(Buf *out, const int *v, int n) {
  for (int i = 0; i < n; i++) buf_printf(out, "%s%%%d", i ? ", " : "", v[i]);
}

/* Types, each with its layout in GPU-layout IR (src/tgir). */
static void print_types(const TirFunc *f, Buf *out, const int *v, int n) {
  for (int i = 0; i < n; i++) {
    buf_printf(out, "%s%s", i ? ", " : "", type_str(f->arena, tir_type(f, v[i])));
    if (tir_layout(f, v[i])) buf_printf(out, " %s", layout_name(f->arena, tir_layout(f, v[i])));
  }
}

static void print_string(Buf *out, const char *s) {
  buf_puts(out, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) buf_printf(out, "\\x%02x", c);
    else buf_putn(out, (const char *)&c, 1);
  }
  buf_puts(out, "\"");
}

static void print_float(Buf *out, double v) {
  if (isinf(v)) buf_puts(out, v > 0 ? "inf" : "-inf");
  else if (isnan(v)) buf_puts(out, "nan");
  else buf_printf(out, "%.17g", v);
}

/* 64, %5, or a product: %2*%3*%20, 2*%5. */
static void print_map_field(const TirFunc *f, const TirMapField *x, Buf *out) {
  if (!x->n || x->value != 1) buf_printf(out, "%lld%s", (long long)x->value, x->n ? "*" : "");
  for (int i = 0; i < x->n; i++) buf_printf(out, "%s%%%d", i ? "*" : "", f->params.data[x->params[i]].value);
}

/* " map(base=%0 dims=[%5, %3] stride=%6 box=[64, 128] swizzle=128)": the tensor map a tma_copy reads. */
static void print_tensor_map(const TirFunc *f, const TirTensorMap *m, Buf *out) {
  buf_printf(out, " map(base=%%%d dims=[", f->params.data[m->base].value);
  for (int d = 0; d < 2; d++) {
    if (d) buf_puts(out, ", ");
    print_map_field(f, &m->dims[d], out);
  }
  buf_puts(out, "] stride=");
  print_map_field(f, &m->stride, out);
  buf_printf(out, " box=[%d, %d] swizzle=%d)", m->box[0], m->box[1], m->swizzle);
}

/* The attributes of attrs.def with a form of their own. */
static void print_own(const TirFunc *f, const TirOp *op, TirAttr a, Buf *out) {
  switch (a) {
  case ATTR_VALUE:
    buf_puts(out, " ");
    if (dtype_is_float(tir_type(f, op->results.data[0])->elem)) print_float(out, op->fval);
    else buf_printf(out, "%lld", (long long)op->ival);
    break;
  case ATTR_RANGE: buf_printf(out, " %lld, %lld", (long long)op->ival, (long long)op->ival2); break;
  case ATTR_MAP:
    if (op->ival >= 0 && op->ival < f->tensor_maps.len) print_tensor_map(f, &f->tensor_maps.data[op->ival], out);
    break;
  case ATTR_MODIFIER:
    if (tir_modifier_name(op->code, op->kind)) buf_printf(out, " %s", tir_modifier_name(op->code, op->kind));
    break;
  case ATTR_INTS:
    buf_puts(out, " [");
    for (int i = 0; i < op->n_ints; i++) buf_printf(out, "%s%lld", i ? ", " : "", (long long)op->ints[i]);
    buf_puts(out, "]");
    break;
  case ATTR_TEXT:
    buf_puts(out, " ");
    print_string(out, op->str ? op->str : "");
    break;
  case ATTR_ASM:
    buf_puts(out, " ");
    print_string(out, op->str ? op->str : "");
    buf_puts(out, ", ");
    print_string(out, op->str2 ? op->str2 : "");
    break;
  default: break;
  }
}

static void print_attribute(const TirFunc *f, const TirOp *op, TirAttr a, Buf *out) {
  switch (a) {
#define ATTR_INT(id, spelling, field, always) \
  case ATTR_##id: \
    if ((always) || op->field) buf_printf(out, " " spelling "=%lld", (long long)op->field); \
    break;
#define ATTR_FLAG(id, spelling, bit) \
  case ATTR_##id: \
    if (op->flags & (bit)) buf_puts(out, " " spelling); \
    break;
#define ATTR_NAMED(id, spelling, field, table, what) \
  case ATTR_##id: \
    if (op->field) buf_printf(out, " " spelling "=%s", tir_##table##_name((int)op->field)); \
    break;
#define ATTR_WORD(id, spelling) \
  case ATTR_##id: \
    if (op->str && *op->str) buf_printf(out, " " spelling "=%s", op->str); \
    break;
#include "attrs.def"
  default: print_own(f, op, a, out); break;
  }
}

/* The attributes after the operands, as the op's row in ops.def names them. */
static void print_attributes(const TirFunc *f, const TirOp *op, Buf *out) {
  for (int a = 0; a < ATTR_COUNT; a++)
    if (tir_op_has(op->code, (TirAttr)a)) print_attribute(f, op, (TirAttr)a, out);
}

/* The op's name, with its kind where it has one: cmp.lt, reduce.sum. */
static void print_name(const TirOp *op, Buf *out) {
  buf_puts(out, tir_op_name(op->code));
  const char *kind = tir_kind_name(op->code, op->kind);
  if (kind) buf_printf(out, ".%s", kind);
}

static void print_loc(const TirOp *op, Buf *out) {
  if (op->loc.src) buf_printf(out, "  loc(%d:%d)", op->loc.line, op->loc.col);
  buf_puts(out, "\n");
}

static void print_region(const TirFunc *f, const TirBlock *b, Buf *out, int depth) {
  buf_puts(out, " {\n");
  print_block(f, b, out, depth + 1);
  buf_printf(out, "%*s}", depth * 2, "");
}

/* A region argument, with its layout in GPU-layout IR: "%7" or "%7 #blocked0". */
static void print_arg(const TirFunc *f, Buf *out, int v) {
  buf_printf(out, "%%%d", v);
  if (tir_layout(f, v)) buf_printf(out, " %s", layout_name(f->arena, tir_layout(f, v)));
}

static void print_bound(const TirFunc *f, Buf *out, const TirBlock *b, int first, const TirOp *op, int operand_first) {
  buf_puts(out, "(");
  for (int i = first; i < b->args.len; i++) {
    buf_puts(out, i > first ? ", " : "");
    print_arg(f, out, b->args.data[i]);
    buf_printf(out, " = %%%d", op->operands.data[operand_first + i - first]);
  }
  buf_puts(out, ")");
}

/* for, if and while print their regions in a form of their own. */
static void print_structured(const TirFunc *f, const TirOp *op, Buf *out, int depth) {
  const TirBlock *r0 = op->regions[0], *r1 = op->regions[1];
  if (op->code == TIR_FOR) {
    buf_printf(out, "for %%%d = %%%d to %%%d step %%%d iter", r0->args.data[0], op->operands.data[0],
               op->operands.data[1], op->operands.data[2]);
    print_bound(f, out, r0, 1, op, 3);
  } else if (op->code == TIR_IF) {
    buf_printf(out, "if %%%d", op->operands.data[0]);
  } else {
    buf_puts(out, "while ");
    print_bound(f, out, r0, 0, op, 0);
  }
  print_attributes(f, op, out);
  if (op->results.len) {
    buf_puts(out, " -> ");
    print_types(f, out, op->results.data, op->results.len);
  }
  print_region(f, r0, out, depth);
  if (op->code == TIR_IF && (r1->ops.len > 1 || op->results.len)) {
    buf_puts(out, " else");
    print_region(f, r1, out, depth);
  } else if (op->code == TIR_WHILE) {
    buf_puts(out, " do (");
    for (int i = 0; i < r1->args.len; i++) {
      buf_puts(out, i ? ", " : "");
      print_arg(f, out, r1->args.data[i]);
    }
    buf_puts(out, ")");
    print_region(f, r1, out, depth);
  }
}

static void print_op(const TirFunc *f, const TirOp *op, Buf *out, int depth) {
  buf_printf(out, "%*s", depth * 2, "");
  if (op->results.len) {
    print_values(out, op->results.data, op->results.len);
    buf_puts(out, " = ");
  }
  if (op->regions[0]) {
    print_structured(f, op, out, depth);
    print_loc(op, out);
    return;
  }
  print_name(op, out);
  if (op->operands.len) buf_puts(out, " ");
  print_values(out, op->operands.data, op->operands.len);
  print_attributes(f, op, out);
  if (op->results.len) {
    buf_puts(out, " : ");
    print_types(f, out, op->results.data, op->results.len);
  }
  if (op->combine) {
    buf_puts(out, " combine(");
    print_values(out, op->combine->args.data, op->combine->args.len);
    buf_puts(out, ")");
    print_region(f, op->combine, out, depth);
  }
  print_loc(op, out);
}

static void print_block(const TirFunc *f, const TirBlock *b, Buf *out, int depth) {
  for (int i = 0; i < b->ops.len; i++) print_op(f, b->ops.data[i], out, depth);
}

void tir_print(const TirFunc *f, Buf *out) {
  buf_printf(out, "func @%s(", f->name);
  for (int i = 0; i < f->params.len; i++) {
    const TirParam *p = &f->params.data[i];
    buf_printf(out, "%s%%%d: %s", i ? ", " : "", p->value, type_str(f->arena, tir_type(f, p->value)));
    buf_printf(out, " {name = \"%s\"%s}", p->name, p->divisibility > 1 ? ", divisibility = 16" : "");
  }
  buf_printf(out, ") num_warps=%d num_stages=%d {\n", f->num_warps, f->num_stages);
  print_block(f, f->body, out, 1);
  buf_puts(out, "}\n");
}
