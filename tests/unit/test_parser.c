/* Parser: tree shapes, precedence, statements, and recovery after errors. */
#include "check.h"
#include "../../src/frontend/ast.h"

typedef struct Parsed {
  Arena arena;
  Guard guard;
  Diags diags;
  Source src;
  Module *m;
  Buf errors;
} Parsed;

static Node *parse(Parsed *p, const char *text) {
  arena_init(&p->arena, 0);
  p->arena.guard = &p->guard;
  diags_init(&p->diags, &p->arena, &p->guard);
  p->src = (Source){"p.tl", text, strlen(text)};
  TokenVec toks = lex(&p->src, &p->diags);
  p->m = parse_module(&p->src, &toks, &p->diags);
  buf_init(&p->errors, &p->arena);
  diag_render(&p->diags, &p->errors);
  return p->m->root;
}

static const char *dump(Parsed *p, Node *n) {
  Buf b;
  buf_init(&b, &p->arena);
  ast_print(n, &b);
  return buf_cstr(&b);
}

static void test_precedence(void) {
  Parsed p;
  Node *root = parse(&p, "x = a + b * c ** -d & e < f\n");
  Node *v = root->body.data[0]->b;
  /* (((a + (b * (c ** (-d)))) & e) < f) */
  CHECK(v->kind == ND_COMPARE && v->op == TK_LT);
  CHECK(v->a->kind == ND_BINOP && v->a->op == TK_AMP);
  Node *sum = v->a->a;
  CHECK(sum->op == TK_PLUS && sum->b->op == TK_STAR && sum->b->b->op == TK_POW);
  CHECK(sum->b->b->b->kind == ND_UNARY && sum->b->b->b->op == TK_MINUS);
  arena_free(&p.arena);
}

static void test_kernel_shape(void) {
  Parsed p;
  Node *root = parse(&p,
                     "import triton.language as tl\n"
                     "@triton.jit\n"
                     "def k(x_ptr, n, B: tl.constexpr = 64):\n"
                     "    \"\"\"doc\"\"\"\n"
                     "    a, b = tl.program_id(0), tl.program_id(axis=1)\n"
                     "    offs = a * B + tl.arange(0, B)[:, None]\n"
                     "    acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
                     "    for i in tl.range(0, n, 2, num_stages=3):\n"
                     "        pass\n"
                     "    if a == 0:\n        pass\n    elif b:\n        pass\n    else:\n        pass\n");
  CHECK(p.diags.errors == 0);
  CHECK(root->body.len == 2 && root->body.data[1]->kind == ND_FUNCDEF);
  Node *fn = root->body.data[1];
  CHECK(fn->kwargs.len == 1 && fn->args.len == 3);
  CHECK(fn->args.data[2]->a->kind == ND_ATTR && fn->args.data[2]->b->ival == 64);
  CHECK(fn->body.len == 6);
  Node *tup = fn->body.data[1];
  CHECK(tup->kind == ND_ASSIGN && tup->args.data[0]->kind == ND_TUPLE && tup->b->kind == ND_TUPLE);
  Node *aug = fn->body.data[3];
  CHECK(aug->kind == ND_AUGASSIGN && aug->op == TK_PLUS && aug->b->kwargs.len == 2);
  Node *ifs = fn->body.data[5];
  CHECK(ifs->kind == ND_IF && ifs->orelse.len == 1 && ifs->orelse.data[0]->kind == ND_IF);
  CHECK_CONTAINS(dump(&p, fn), "Subscript <6:23>\n");
  CHECK_CONTAINS(dump(&p, fn), "Keyword num_stages <8:32>\n");
  arena_free(&p.arena);
}

static void test_decorator_values(void) {
  Parsed p;
  parse(&p,
        "@triton.autotune(configs=[triton.Config({'B': 2 ** i}, num_warps=4) for i in range(3) if i],\n"
        "                 key=['n'])\n"
        "@triton.heuristics({'E': lambda args: args['n'] % 2 == 0})\n"
        "@triton.jit\n"
        "def k(n):\n    pass\n");
  CHECK(p.diags.errors == 0);
  Node *fn = p.m->root->body.data[0];
  CHECK(fn->kwargs.len == 3);
  CHECK(fn->kwargs.data[0]->kwargs.data[0]->a->kind == ND_LISTCOMP);
  CHECK(fn->kwargs.data[1]->args.data[0]->kind == ND_DICT);
  arena_free(&p.arena);
}

static void test_chained_comparison(void) {
  Parsed p;
  Node *root = parse(&p, "x = 0 <= i < n\n");
  Node *v = root->body.data[0]->b;
  CHECK(v->kind == ND_BOOLOP && v->op == TK_KW_AND);
  CHECK(v->a->kind == ND_COMPARE && v->b->kind == ND_COMPARE && v->b->a->kind == ND_NAME);
  arena_free(&p.arena);
}

static void test_recovery_reports_each_error(void) {
  Parsed p;
  parse(&p,
        "@triton.jit\n"
        "def k(a):\n"
        "    x = 1 +\n"
        "    y = 2\n"
        "    z = a[0] = 3\n"
        "    class C: pass\n"
        "    w = f(a=1, 2)\n");
  CHECK(p.diags.errors == 4);
  CHECK_CONTAINS(buf_cstr(&p.errors), "p.tl:3:12: error: expected an expression, found end of line");
  CHECK_CONTAINS(buf_cstr(&p.errors), "p.tl:5:9: error: cannot assign to an element of a tile");
  CHECK_CONTAINS(buf_cstr(&p.errors), "p.tl:6:5: error: 'class' statements are not supported in kernels");
  CHECK_CONTAINS(buf_cstr(&p.errors), "p.tl:7:16: error: positional argument follows keyword argument");
  arena_free(&p.arena);
}

static void test_deep_nesting_is_an_error(void) {
  Parsed p;
  static char src[8000];
  int n = 0;
  n += sprintf(src + n, "x = ");
  for (int i = 0; i < 3000; i++) src[n++] = '(';
  src[n++] = '1';
  for (int i = 0; i < 3000; i++) src[n++] = ')';
  src[n++] = '\n';
  src[n] = 0;
  parse(&p, src);
  CHECK(p.diags.errors >= 1);
  CHECK_CONTAINS(buf_cstr(&p.errors), "p.tl:1:1005: error: nested too deeply (limit 1000 levels of expressions and blocks)");
  arena_free(&p.arena);
}

/* What a Triton module's host code holds parses without an error (it is
 * kept for the host evaluator, which runs none of it): classes, with, try,
 * raise, global, del, yield, nested defs, attribute and element targets,
 * starred targets and displays, sets, keyword-only parameters, lambdas with
 * defaults, '**' in dicts, ':=', async and await. */
static void test_host_code_parses(void) {
  Parsed p;
  Node *root = parse(&p,
                     "class _attention(torch.autograd.Function, metaclass=M):\n"
                     "    @staticmethod\n"
                     "    def forward(ctx, q, *, causal=False, **kw):\n"
                     "        ctx.causal = causal\n"
                     "        nargs['desc_q'].block_shape = [1, 2]\n"
                     "        p[:, :, M == 0] = float('-inf')\n"
                     "        def grid(META): return (triton.cdiv(q, META['BLOCK']), 1, 1)\n"
                     "        return grid\n"
                     "try:\n"
                     "    import apex\n"
                     "except (ImportError, ModuleNotFoundError) as e:\n"
                     "    HAS = False\n"
                     "else:\n"
                     "    HAS = True\n"
                     "finally:\n"
                     "    pass\n"
                     "with torch.cuda.stream(s) as t, ctx():\n"
                     "    global G\n"
                     "    del x[0], y\n"
                     "    yield a, b\n"
                     "    raise ValueError('no') from None\n"
                     "first, *rest = [*xs, *ys]\n"
                     "ok = n in {16, 32, 64} and {c for c in cs}\n"
                     "f = lambda a, b=2, *args, **kw: a\n"
                     "def g(a, /, b): return a\n"
                     "d = {**base, 'k': 1}\n"
                     "if (n := len(d)) > 1: x = yield from gen()\n"
                     "async def fetch(us):\n"
                     "    async with s() as c:\n"
                     "        return [await c.get(u) async for u in us]\n");
  CHECK(p.diags.errors == 0);
  CHECK(root->body.len == 10);
  CHECK(root->body.data[0]->kind == ND_CLASS && root->body.data[1]->kind == ND_TRY && root->body.data[2]->kind == ND_WITH);
  CHECK(root->body.data[1]->args.len == 1 && root->body.data[1]->orelse.len == 1 && root->body.data[1]->kwargs.len == 1);
  CHECK_CONTAINS(dump(&p, root), "Raise <21:5>");
  arena_free(&p.arena);
}

int main(void) {
  test_precedence();
  test_kernel_shape();
  test_decorator_values();
  test_chained_comparison();
  test_recovery_reports_each_error();
  test_deep_nesting_is_an_error();
  test_host_code_parses();
  return check_report();
}
