/* Printing of syntax trees, untyped (after parsing) and typed (after the
 * checker): one node a line, children indented, like clang's -ast-dump. */
#include "sema.h"

#include <string.h>

static const char *const kind_names[] = {
#define NODE(id, name) name,
#include "ast.def"
#undef NODE
};

const char *node_kind_name(NodeKind k) { return kind_names[k]; }

const char *ast_keyword(const Node *n) {
  switch (n->kind) {
  case ND_CLASS: return "class";
  case ND_WITH: return "with";
  case ND_TRY: return "try";
  case ND_RAISE: return "raise";
  case ND_GLOBAL: return token_kind_name(n->op);
  case ND_DEL: return "del";
  case ND_YIELD: return "yield";
  default: return node_kind_name(n->kind);
  }
}

Node *node_new(Arena *a, NodeKind kind, Loc loc) {
  Node *n = arena_alloc(a, sizeof *n);
  n->kind = kind;
  n->loc = loc;
  return n;
}

void ast_too_deep(Diags *d, Loc loc) {
  diag_error(d, loc, "nested too deeply (limit %d levels of expressions and blocks)", AST_MAX_DEPTH);
}

typedef struct Visit {
  const Node *n;
  int depth;
} Visit;
typedef Vec(Visit) VisitVec;

static void push_child(Arena *a, VisitVec *stack, const Node *n, int depth) {
  if (n) vec_push(a, stack, ((Visit){n, depth}));
}

/* Depth first with an explicit stack: the tree may be deeper than the C
 * stack allows (a chain of 40,000 'and's is 40,000 deep).  Children are
 * pushed last first, so statements are visited in source order. */
int ast_check_depth(const Node *root, Diags *d) {
  VisitVec stack = {0};
  push_child(d->arena, &stack, root, 0);
  while (stack.len) {
    Visit v = stack.data[--stack.len];
    if (v.depth > AST_MAX_DEPTH) {
      ast_too_deep(d, v.n->loc);
      return 1;
    }
    const NodeVec *lists[] = {&v.n->orelse, &v.n->body, &v.n->kwargs, &v.n->args};
    for (int l = 0; l < 4; l++)
      for (int i = lists[l]->len - 1; i >= 0; i--) push_child(d->arena, &stack, lists[l]->data[i], v.depth + 1);
    push_child(d->arena, &stack, v.n->c, v.depth + 1);
    push_child(d->arena, &stack, v.n->b, v.depth + 1);
    push_child(d->arena, &stack, v.n->a, v.depth + 1);
  }
  return 0;
}

static void print_string(Buf *out, const char *s, size_t n) {
  buf_puts(out, "\"");
  for (size_t i = 0; i < n && i < 200; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) buf_printf(out, "\\x%02x", c);
    else buf_putn(out, (const char *)&c, 1);
  }
  buf_puts(out, n > 200 ? "\"..." : "\"");
}

static void print_details(const Node *n, Buf *out) {
  switch (n->kind) {
  case ND_INT:
    if (n->is_u64) buf_printf(out, " %llu", (unsigned long long)n->ival);
    else buf_printf(out, " %lld", (long long)n->ival);
    break;
  case ND_FLOAT: buf_printf(out, " %.17g", n->fval); break;
  case ND_BOOL: buf_puts(out, n->ival ? " True" : " False"); break;
  case ND_STR: buf_puts(out, " "); print_string(out, n->str, n->str_len); break;
  case ND_BINOP:
  case ND_UNARY:
  case ND_BOOLOP:
  case ND_AUGASSIGN: buf_printf(out, " '%s'", token_kind_name(n->op)); break;
  case ND_COMPARE: buf_printf(out, " '%s%s'", n->negated ? "not " : "", token_kind_name(n->op)); break;
  default:
    if (n->name) buf_printf(out, " %s", n->name);
  }
}

static void print_node(const Node *n, Buf *out, int depth);

static void print_list(const NodeVec *v, const char *label, Buf *out, int depth) {
  if (!v->len) return;
  if (label) buf_printf(out, "%*s%s:\n", depth * 2, "", label);
  for (int i = 0; i < v->len; i++) print_node(v->data[i], out, depth + (label ? 1 : 0));
}

static void print_node(const Node *n, Buf *out, int depth) {
  if (!n) return;
  Arena *a = out->arena;
  buf_printf(out, "%*s%s", depth * 2, "", kind_names[n->kind]);
  print_details(n, out);
  if (n->loc.src) buf_printf(out, " <%d:%d>", n->loc.line, n->loc.col);
  if (n->kind == ND_CONST) buf_printf(out, " %s", n->cval ? value_str(a, n->cval) : "<error>");
  if (n->kind == ND_PARAM && n->cval) buf_printf(out, " : constexpr = %s", value_str(a, n->cval));
  if (n->type) buf_printf(out, " : %s", type_str(a, n->type));
  buf_puts(out, "\n");
  if (n->kind == ND_FUNCDEF) {
    print_list(&n->kwargs, "decorators", out, depth + 1);
    print_list(&n->args, NULL, out, depth + 1);
    print_node(n->a, out, depth + 1);
    print_list(&n->body, "body", out, depth + 1);
    return;
  }
  if (n->kind == ND_ASSIGN) { /* targets first, as written */
    print_list(&n->args, NULL, out, depth + 1);
    print_node(n->b, out, depth + 1);
    return;
  }
  print_node(n->a, out, depth + 1);
  print_node(n->b, out, depth + 1);
  print_node(n->c, out, depth + 1);
  print_list(&n->args, NULL, out, depth + 1);
  print_list(&n->kwargs, NULL, out, depth + 1);
  print_list(&n->body, n->kind == ND_IF ? "then" : n->kind == ND_MODULE ? NULL : "body", out, depth + 1);
  print_list(&n->orelse, "else", out, depth + 1);
}

void ast_print(const Node *n, Buf *out) { print_node(n, out, 0); }

static void print_meta(const KernelMeta *m, Buf *out) {
  Arena *a = out->arena;
  if (m->configs.len || m->keys.len) {
    buf_puts(out, "Autotune key=(");
    for (int i = 0; i < m->keys.len; i++) buf_printf(out, "%s%s", i ? ", " : "", m->keys.data[i]);
    buf_puts(out, ")");
    for (int i = 0; i < m->reset_to_zero.len; i++) buf_printf(out, "%s%s", i ? ", " : " reset_to_zero=(", m->reset_to_zero.data[i]);
    buf_puts(out, m->reset_to_zero.len ? ")" : "");
    for (int i = 0; i < m->restore_value.len; i++) buf_printf(out, "%s%s", i ? ", " : " restore_value=(", m->restore_value.data[i]);
    buf_puts(out, m->restore_value.len ? ")" : "");
    if (m->warmup_ms > 0 || m->rep_ms > 0) buf_printf(out, " warmup=%g rep=%g", m->warmup_ms, m->rep_ms);
    buf_puts(out, "\n");
  }
  for (int i = 0; i < m->configs.len; i++) {
    const TuneConfig *c = &m->configs.data[i];
    buf_printf(out, "  Config %d:", i);
    for (int j = 0; j < c->names.len; j++) buf_printf(out, " %s=%s", c->names.data[j], value_str(a, c->values.data[j]));
    buf_printf(out, " num_warps=%d num_stages=%d", c->num_warps, c->num_stages);
    if (c->maxnreg) buf_printf(out, " maxnreg=%d", c->maxnreg);
    buf_puts(out, "\n");
  }
  for (int i = 0; i < m->heuristic_names.len; i++)
    buf_printf(out, "Heuristic %s <%d:%d>\n", m->heuristic_names.data[i], m->heuristic_lambdas.data[i]->loc.line,
               m->heuristic_lambdas.data[i]->loc.col);
}

void checked_print(const CheckedKernel *k, Buf *out) {
  print_meta(&k->meta, out);
  for (int i = 0; i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (p->divisibility > 1) buf_printf(out, "Hint %s divisibility=%d\n", p->name, p->divisibility);
  }
  ast_print(k->def, out);
}
