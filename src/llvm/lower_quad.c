/* Layout conversions of 8-bit tiles within quads of lanes, by shuffles:
 * the mma accumulator's layout holds 2 consecutive columns a register pair
 * and lane (l % 4) holds columns 2(l % 4), +8, +16, +24 of each 32; wgmma's
 * 8-bit register A holds 4 consecutive K a lane, 4(l % 4) and +16.  When
 * two layouts agree on every thread bit but lane bits 0 and 1, and every
 * destination pair of registers comes whole from one source pair, and the
 * four lanes of a quad draw each destination pair from at most two source
 * pairs, those two are packed into one word; each destination word is then
 * two shuffles of such words, the lane and the half taken from 2-bit tables
 * indexed by the lane's place in its quad.  This is how attention's fp8 P
 * reaches the second wgmma without shared memory (Triton's conversion does
 * the same within quads). */
#include "lower.h"

enum { QUAD = 4, MAX_QUAD_REG_BITS = 10 };

/* Where each destination register pair of each quad lane comes from (arrays of `pairs`). */
typedef struct QuadPlan {
  int pairs, words;
  unsigned char (*lane)[QUAD]; /* the source lane in the quad */
  unsigned char (*half)[QUAD]; /* which half of the source word */
  int *word;                   /* the source word, the same in every lane */
  int (*unit)[2];              /* per source word: the source pairs in its halves */
} QuadPlan;

static uint32_t reg_offset(const Side *s, int r) {
  uint32_t off = 0;
  for (int i = 0; i < s->n_reg; i++)
    if (r >> i & 1) off ^= s->reg[i];
  return off;
}

static uint32_t quad_offset(const Side *s, int q) { return (q & 1 ? s->thread[0] : 0) ^ (q & 2 ? s->thread[1] : 0); }

/* The source register holding offset `off` in quad lane *q; -1 if none. */
static int find_source(const Side *from, uint32_t off, int *q) {
  for (*q = 0; *q < QUAD; (*q)++)
    for (int k = 0; k < 1 << from->n_reg; k++)
      if (reg_offset(from, k) == (off ^ quad_offset(from, *q))) return k;
  return -1;
}

/* The source pair that pair p of quad lane q comes from whole (its lane in
 * *lane); -1 if none does. */
static int source_pair(const Side *from, const Side *to, int p, int q, int *lane) {
  int lanes[2], k[2];
  for (int j = 0; j < 2; j++) {
    k[j] = find_source(from, reg_offset(to, 2 * p + j) ^ quad_offset(to, q), &lanes[j]);
    if (k[j] < 0) return -1;
  }
  *lane = lanes[0];
  return lanes[0] == lanes[1] && k[0] % 2 == 0 && k[1] == k[0] + 1 ? k[0] / 2 : -1;
}

/* The word holding source pairs a and b (a <= b), made if new. */
static int word_of(QuadPlan *P, int a, int b) {
  for (int w = 0; w < P->words; w++)
    if (P->unit[w][0] == a && P->unit[w][1] == b) return w;
  P->unit[P->words][0] = a, P->unit[P->words][1] = b;
  return P->words++;
}

/* Plans destination pair p: at most two source pairs over the quad's lanes. */
static int plan_pair(QuadPlan *P, const Side *from, const Side *to, int p) {
  int unit[QUAD], lane;
  for (int q = 0; q < QUAD; q++) {
    if ((unit[q] = source_pair(from, to, p, q, &lane)) < 0) return 0;
    P->lane[p][q] = (unsigned char)lane;
  }
  int a = unit[0], b = unit[0];
  for (int q = 1; q < QUAD; q++) {
    if (unit[q] != a && unit[q] != b && a != b) return 0;
    if (unit[q] < a) a = unit[q];
    if (unit[q] > b) b = unit[q];
  }
  P->word[p] = word_of(P, a, b);
  for (int q = 0; q < QUAD; q++) P->half[p][q] = (unsigned char)(unit[q] != a);
  return 1;
}

static int plan_quads(Lower *L, QuadPlan *P, const Side *from, const Side *to) {
  for (int b = 2; b < TID_BITS; b++)
    if (from->thread[b] != to->thread[b]) return 0;
  if (from->n_reg < 1 || to->n_reg < 1 || to->n_reg > MAX_QUAD_REG_BITS || from->n_reg > MAX_QUAD_REG_BITS) return 0;
  P->pairs = (1 << to->n_reg) / 2, P->words = 0;
  size_t n = (size_t)P->pairs;
  P->lane = arena_alloc(L->arena, n * sizeof *P->lane), P->half = arena_alloc(L->arena, n * sizeof *P->half);
  P->word = arena_alloc(L->arena, n * sizeof *P->word), P->unit = arena_alloc(L->arena, n * sizeof *P->unit);
  for (int p = 0; p < P->pairs; p++)
    if (!plan_pair(P, from, to, p)) return 0;
  return 1;
}

/* table[q], entries of `bits` bits packed into one constant, for this lane's q. */
static LLVMValueRef by_quad_lane(Lower *L, const unsigned char *table, int bits, LLVMValueRef q) {
  uint32_t packed = 0;
  for (int i = 0; i < QUAD; i++) packed |= (uint32_t)table[i] << (bits * i);
  LLVMValueRef shift = LLVMBuildMul(L->b, q, lower_i32(L, bits), "");
  LLVMValueRef v = LLVMBuildLShr(L->b, lower_i32(L, (int)packed), shift, "");
  return LLVMBuildAnd(L->b, v, lower_i32(L, (1 << bits) - 1), "");
}

/* Destination pair p: 16 bits of the source word its lane's table names
 * (q: the lane's place in its quad; base: the quad's first lane). */
static LLVMValueRef shuffled_pair(Lower *L, const QuadPlan *P, int p, LLVMValueRef *words, LLVMValueRef q,
                                  LLVMValueRef base) {
  LLVMValueRef source = LLVMBuildOr(L->b, base, by_quad_lane(L, P->lane[p], 2, q), "");
  LLVMValueRef word = L->target->shuffle_idx(L, words[P->word[p]], source);
  LLVMValueRef shift = LLVMBuildMul(L->b, by_quad_lane(L, P->half[p], 1, q), lower_i32(L, 16), "");
  return LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, word, shift, ""), lower_i32(L, 0xffff), "");
}

int lower_quad_shuffle(Lower *L, Regs src, const Side *from, const Side *to, LLVMTypeRef elem, Regs out) {
  QuadPlan P;
  if (elem != L->i8 || src.n % 4 || out.n % 4 || !plan_quads(L, &P, from, to)) return 0;
  LLVMValueRef *words = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)P.words);
  for (int w = 0; w < P.words; w++) {
    LLVMValueRef bytes[4] = {src.v[2 * P.unit[w][0]], src.v[2 * P.unit[w][0] + 1], src.v[2 * P.unit[w][1]],
                             src.v[2 * P.unit[w][1] + 1]};
    words[w] = lower_pack(L, bytes, 4, L->i32);
  }
  LLVMValueRef q = LLVMBuildAnd(L->b, L->tid, lower_i32(L, QUAD - 1), "");
  LLVMValueRef base = LLVMBuildAnd(L->b, L->tid, lower_i32(L, WARP_SIZE - QUAD), "");
  for (int w = 0; w < out.n / 4; w++) {
    LLVMValueRef lo = shuffled_pair(L, &P, 2 * w, words, q, base), hi = shuffled_pair(L, &P, 2 * w + 1, words, q, base);
    LLVMValueRef word = LLVMBuildOr(L->b, lo, LLVMBuildShl(L->b, hi, lower_i32(L, 16), ""), "");
    lower_unpack(L, word, L->i8, 4, out.v + 4 * w);
  }
  return 1;
}
