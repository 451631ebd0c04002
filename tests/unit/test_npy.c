/* The .npy reader and writer: round trips of every dtype through a file,
 * files byte for byte as numpy writes them, the message of every refusal,
 * and random bytes that must give a message, never a crash.
 * Usage: test_npy [seed]   (the seed is printed, so a failing run replays) */
#include "check.h"
#include "../../src/tools/tilec/npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { ERR = 256, FILE_MAX = 4096 };

/* xorshift64*: the test's own generator, so a seed means the same data everywhere. */
static uint64_t next_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

static void fill_random(void *p, size_t n, uint64_t *seed) {
  for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = (unsigned char)next_random(seed);
}

static unsigned char *read_whole(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = malloc(1 << 20);
  *len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
  if (f) fclose(f);
  return buf;
}

static void write_whole(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(bytes, 1, len, f);
    fclose(f);
  }
}

static int same_array(const NpyArray *a, const NpyArray *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || a->count != b->count || a->elem_size != b->elem_size)
    return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return a->count == 0 || memcmp(a->data, b->data, a->count * a->elem_size) == 0;
}

/* What numpy.save guarantees of a 1.0 file: data at a multiple of 64, the
 * header ending in '\n', nothing after the data. */
static int numpy_layout(const unsigned char *b, size_t len, const NpyArray *a) {
  if (len < 10 || b[6] != 1) return 0;
  size_t at = 10 + (size_t)(b[8] | b[9] << 8);
  return at % 64 == 0 && len == at + a->count * a->elem_size && b[at - 1] == '\n';
}

/* ---- round trips --------------------------------------------------------- */

static void round_trip_one(NpyDtype t, int rank, const int64_t *shape, const char *path, uint64_t *seed) {
  NpyArray a, b, c;
  char err[ERR] = "";
  size_t len;
  CHECK(npy_alloc(&a, t, rank, shape, err, sizeof err) == 0);
  fill_random(a.data, a.count * a.elem_size, seed);
  if (t == NPY_BOOL)
    for (size_t i = 0; i < a.count; i++) ((unsigned char *)a.data)[i] &= 1;
  CHECK(npy_write(path, &a, err, sizeof err) == 0);
  CHECK(npy_read(path, &b, err, sizeof err) == 0);
  unsigned char *bytes = read_whole(path, &len);
  CHECK(npy_read_memory(bytes, len, "mem", &c, err, sizeof err) == 0);
  CHECK(numpy_layout(bytes, len, &a));
  a.dtype = t == NPY_BF16 ? NPY_U16 : t == NPY_FP8E4NV || t == NPY_FP8E5 || t == NPY_FP8E4B15 ? NPY_U8 : t; /* bits: u16, u8 */
  int same = same_array(&a, &b) && same_array(&a, &c);
  CHECK(same);
  if (!same) fprintf(stderr, "  dtype %s rank %d: %s\n", npy_dtype_name(t), rank, err);
  free(bytes);
  npy_free(&a);
  npy_free(&b);
  npy_free(&c);
}

static void test_round_trips(const char *path, uint64_t *seed) {
  static const struct {
    int rank;
    int64_t shape[3];
  } shapes[] = {{1, {7}}, {2, {3, 5}}, {3, {2, 3, 5}}, {0, {0}}, {1, {0}}, {3, {4, 0, 3}}, {2, {1, 13}}};
  for (int t = 0; t < NPY_DTYPE_COUNT; t++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      round_trip_one((NpyDtype)t, shapes[i].rank, shapes[i].shape, path, seed);
}

/* ---- files as numpy writes them -------------------------------------------- */

/* np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)), byte for byte:
 * a 128-byte 1.0 header, then six little-endian floats. */
static const char ARANGE_F32[] =
    "\x93NUMPY" "\x01\x00" "\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    "                    "                   /* 20: room for shape[0] to grow to 21 digits */
    "                                      " /* 38: to 128 bytes */
    "\n"
    "\x00\x00\x00\x00" "\x00\x00\x80\x3f" "\x00\x00\x00\x40"
    "\x00\x00\x40\x40" "\x00\x00\x80\x40" "\x00\x00\xa0\x40";
_Static_assert(sizeof ARANGE_F32 - 1 == 128 + 24, "the arange file is 152 bytes");

/* np.save(f, np.array(3.5)): a scalar, shape (), no room to grow. */
static const char SCALAR_F64[] =
    "\x93NUMPY" "\x01\x00" "\x76\x00"
    "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"
    "                                                              " /* 62 */
    "\n"
    "\x00\x00\x00\x00\x00\x00\x0c\x40";
_Static_assert(sizeof SCALAR_F64 - 1 == 128 + 8, "the scalar file is 136 bytes");

/* np.save(f, np.array([True, False, True])) */
static const char BOOLS[] =
    "\x93NUMPY" "\x01\x00" "\x76\x00"
    "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"
    "                    "                    /* 20 */
    "                                        " /* 40 */
    "\n"
    "\x01\x00\x01";
_Static_assert(sizeof BOOLS - 1 == 128 + 3, "the bool file is 131 bytes");

/* np.save(f, np.zeros((100000, 0), np.int16)): six digits leave 15 to grow. */
static const char EMPTY_I16[] =
    "\x93NUMPY" "\x01\x00" "\x76\x00"
    "{'descr': '<i2', 'fortran_order': False, 'shape': (100000, 0), }"
    "               "                         /* 15 */
    "                                      "  /* 38 */
    "\n";
_Static_assert(sizeof EMPTY_I16 - 1 == 128, "the empty file is 128 bytes");

/* numpy under Python 2 (before 1.9): 'L' on ints, header padded to 16 bytes. */
static const char PY2_I64[] =
    "\x93NUMPY" "\x01\x00" "\x46\x00"
    "{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }"
    "           " /* 11 */
    "\n"
    "\x01\x00\x00\x00\x00\x00\x00\x00" "\x02\x00\x00\x00\x00\x00\x00\x00"
    "\x03\x00\x00\x00\x00\x00\x00\x00";
_Static_assert(sizeof PY2_I64 - 1 == 80 + 24, "the Python 2 file is 104 bytes");

/* Reads `bytes`, checks the dtype and shape, and that writing the array
 * gives the same bytes back when numpy's own file was the input. */
static void check_numpy_file(const char *bytes, size_t len, NpyDtype t, int rank, const int64_t *shape,
                             int rewrites_same, const char *path, NpyArray *out) {
  char err[ERR] = "";
  size_t written_len;
  CHECK(npy_read_memory(bytes, len, "numpy.npy", out, err, sizeof err) == 0);
  CHECK(out->dtype == t && out->rank == rank);
  for (int i = 0; i < rank; i++) CHECK(out->shape[i] == shape[i]);
  if (!rewrites_same) return;
  CHECK(npy_write(path, out, err, sizeof err) == 0);
  unsigned char *written = read_whole(path, &written_len);
  CHECK(written_len == len && memcmp(written, bytes, len) == 0);
  free(written);
}

static void test_numpy_files(const char *path) {
  NpyArray a;
  check_numpy_file(ARANGE_F32, sizeof ARANGE_F32 - 1, NPY_F32, 2, (int64_t[]){2, 3}, 1, path, &a);
  for (int i = 0; i < 6; i++) CHECK(((float *)a.data)[i] == (float)i);
  npy_free(&a);
  check_numpy_file(SCALAR_F64, sizeof SCALAR_F64 - 1, NPY_F64, 0, NULL, 1, path, &a);
  CHECK(a.count == 1 && *(double *)a.data == 3.5);
  npy_free(&a);
  check_numpy_file(BOOLS, sizeof BOOLS - 1, NPY_BOOL, 1, (int64_t[]){3}, 1, path, &a);
  CHECK(memcmp(a.data, "\x01\x00\x01", 3) == 0);
  npy_free(&a);
  check_numpy_file(EMPTY_I16, sizeof EMPTY_I16 - 1, NPY_I16, 2, (int64_t[]){100000, 0}, 1, path, &a);
  CHECK(a.count == 0);
  npy_free(&a);
  check_numpy_file(PY2_I64, sizeof PY2_I64 - 1, NPY_I64, 1, (int64_t[]){3}, 0, path, &a);
  CHECK(((int64_t *)a.data)[0] == 1 && ((int64_t *)a.data)[2] == 3);
  npy_free(&a);
}

/* ---- headers in other spellings ---------------------------------------------- */

/* A file of format `major`.0 around `dict`: padded with spaces and '\n' so
 * the data starts at a multiple of 64, then `n` bytes of `data`. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data, size_t n) {
  size_t at = major == 1 ? 10 : 12, len = strlen(dict), total = (at + len + 1 + 63) / 64 * 64;
  size_t hlen = total - at;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  for (size_t i = 0; i < at - 8; i++) buf[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(buf + at, dict, len);
  memset(buf + at + len, ' ', total - at - len - 1);
  buf[total - 1] = '\n';
  if (n) memcpy(buf + total, data, n);
  return total + n;
}

static const struct {
  int major;
  const char *dict;
  NpyDtype dtype;
  int rank;
  int64_t shape[3];
} SPELLINGS[] = {
    {1, "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}", NPY_I32, 1, {2}},
    {1, "{'descr': '<i1', 'fortran_order': False, 'shape': (4,), }", NPY_I8, 1, {4}},
    {1, "{'descr': '=u2', 'fortran_order': False, 'shape': (2, 2), }", NPY_U16, 2, {2, 2}},
    {1, "{'descr': '|i2', 'fortran_order': False, 'shape': (3,), }", NPY_I16, 1, {3}},
    {1, "{'descr': 'f8', 'fortran_order': False, 'shape': (), }", NPY_F64, 0, {0}},
    {1, "{'descr': '>u1', 'fortran_order': False, 'shape': (5,), }", NPY_U8, 1, {5}},
    {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (5), }", NPY_F16, 1, {5}},
    {1, "{'descr': '<u8', 'fortran_order': True, 'shape': (5,), }", NPY_U64, 1, {5}},
    {1, "{'descr': '<u4', 'fortran_order': True, 'shape': (1, 4, 1), }", NPY_U32, 3, {1, 4, 1}},
    {1, "{ 'descr' :'<f4' ,\n\t'fortran_order':False,'shape':( 3 , 1 , ) , }", NPY_F32, 2, {3, 1}},
    {2, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", NPY_I64, 2, {2, 3}},
    {3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", NPY_F32, 1, {1}},
};

static void test_spellings(void) {
  static const unsigned char zeros[128]; /* more data than any needs: trailing bytes are fine */
  unsigned char buf[FILE_MAX];
  for (size_t i = 0; i < sizeof SPELLINGS / sizeof SPELLINGS[0]; i++) {
    NpyArray a;
    char err[ERR] = "";
    size_t len = make_npy(buf, SPELLINGS[i].major, SPELLINGS[i].dict, zeros, sizeof zeros);
    int ok = npy_read_memory(buf, len, "x.npy", &a, err, sizeof err) == 0;
    CHECK(ok && a.dtype == SPELLINGS[i].dtype && a.rank == SPELLINGS[i].rank);
    for (int d = 0; ok && d < a.rank; d++) CHECK(a.shape[d] == SPELLINGS[i].shape[d]);
    if (!ok) fprintf(stderr, "  %s: %s\n", SPELLINGS[i].dict, err);
    npy_free(&a);
  }
}

/* ---- refusals ---------------------------------------------------------------- */

static void check_refused(const void *bytes, size_t len, const char *message) {
  NpyArray a;
  char err[ERR] = "";
  memset(&a, 0x5a, sizeof a);
  CHECK(npy_read_memory(bytes, len, "x.npy", &a, err, sizeof err) == -1);
  CHECK(a.data == NULL && a.count == 0 && a.rank == 0);
  CHECK_CONTAINS(err, message);
  CHECK(strncmp(err, "x.npy: ", 7) == 0 && !strchr(err, '\n'));
  npy_free(&a);
}

static const struct {
  const char *dict, *message;
} BAD_HEADERS[] = {
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", "x.npy: fortran_order arrays are not supported"},
    {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", "x.npy: big-endian dtype '>f4' is not supported"},
    {"{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", "x.npy: unsupported dtype '<c8'"},
    {"{'descr': '<V2', 'fortran_order': False, 'shape': (2, 3), }", "x.npy: void dtype '<V2' is not supported"},
    {"{'descr': '<f3', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '<f3'"},
    {"{'descr': '<f4x', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '<f4x'"},
    {"{'descr': '<f99999999999999999999', 'fortran_order': False, 'shape': (), }", "unsupported dtype '<f9999"},
    {"{'descr': '', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype ''"},
    {"{'descr': '\x01\x7f', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '?" "?'" /* two bytes shown as '?' */},
    {"{'descr': '<U4', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '<U4'"},
    {"{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '|O'"},
    {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "structured dtypes are not supported"},
    {"{'descr': 5, 'fortran_order': False, 'shape': (2,), }", "expected a string for 'descr', found 5"},
    {"{'descr': '<f4', 'fortran_order': False, }", "x.npy: header has no 'shape' key"},
    {"{'descr': '<f4', 'shape': (2,), }", "header has no 'fortran_order' key"},
    {"{}", "header has no 'descr' key"},
    {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }", "malformed header: expected ':' after a key, found '<f4'"},
    {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", "expected ',' or '}', found 'fortran_order'"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "expected a key string, found its end"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}', found its end"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x", "found an unterminated string"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", "expected the end of the header after '}', found x"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }}", "after '}', found }"},
    {"['descr', '<f4']", "malformed header: expected '{', found ["},
    {"", "malformed header: expected '{', found its end"},
    {"{'descr': '<f4', 'fortran_order': None, 'shape': (2,), }", "expected True or False for 'fortran_order', found None"},
    {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "expected True or False for 'fortran_order', found 0"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", "expected a tuple for 'shape', found ["},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.5), }", "expected ',' or ')' in 'shape', found ."},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", "expected ',' or ')' in 'shape', found 3"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", "expected an integer in 'shape', found ,"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (-), }", "expected an integer in 'shape', found -"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
     "x.npy: shape has more than 8 dimensions"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", "shape (2, -3) has a negative dimension"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576, 2), }",
     "shape (1048576, 1048576, 2) has more than 2^40 elements"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 99999999999999999999999), }",
     "shape (0, 9223372036854775807) has a dimension over 2^40"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (-99999999999999999999,), }", "has a negative dimension"},
    {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "header repeats key 'descr'"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", "unexpected key 'extra' in header"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 5: 1, }", "expected a key string, found 5"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), \x80: 1, }", "expected a key string, found ?"},
};

static void test_bad_headers(void) {
  unsigned char buf[FILE_MAX];
  for (size_t i = 0; i < sizeof BAD_HEADERS / sizeof BAD_HEADERS[0]; i++) {
    size_t len = make_npy(buf, 1, BAD_HEADERS[i].dict, NULL, 0);
    check_refused(buf, len, BAD_HEADERS[i].message);
  }
}

#define BYTES(s) s, sizeof(s) - 1

static void test_bad_preambles(void) {
  unsigned char buf[FILE_MAX];
  check_refused(BYTES("hello, world: not numpy at all"), "x.npy: not a .npy file (bad magic)");
  check_refused(BYTES("\x93NUMPZ\x01\x00"), "not a .npy file (bad magic)");
  check_refused(BYTES(""), "x.npy: truncated header: the file has only 0 bytes");
  check_refused(NULL, 100, "truncated header: the file has only 0 bytes");
  check_refused(BYTES("\x93NUM"), "truncated header: the file has only 4 bytes");
  check_refused(BYTES("\x93NUMPY\x01\x00\x76"), "truncated header: the file has only 9 bytes");
  check_refused(BYTES("\x93NUMPY\x02\x00\x76\x00\x00"), "truncated header: the file has only 11 bytes");
  check_refused(BYTES("\x93NUMPY\x04\x00\x76\x00"), "unsupported .npy format version 4.0");
  check_refused(BYTES("\x93NUMPY\x00\x00\x76\x00"), "unsupported .npy format version 0.0");
  check_refused(BYTES("\x93NUMPY\x01\x01\x76\x00"), "unsupported .npy format version 1.1");
  check_refused(ARANGE_F32, 30, "x.npy: header length 118 goes beyond the end of the file (30 bytes)");
  check_refused(BYTES("\x93NUMPY\x02\x00\xff\xff\xff\xff{}"),
                "header length 4294967295 goes beyond the end of the file (14 bytes)");
  size_t len = make_npy(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1000,), }", buf + 1024, 400);
  check_refused(buf, len, "x.npy: truncated: header says 1000 bytes of data, file has 400");
  check_refused(ARANGE_F32, sizeof ARANGE_F32 - 2, "truncated: header says 24 bytes of data, file has 23");
}

/* Messages: cut to the buffer given, none when there is no buffer, the file's name first. */
static void test_messages(const char *path) {
  NpyArray a;
  char small[8], err[ERR] = "";
  CHECK(npy_read_memory(BYTES("nonsense"), "x.npy", &a, small, sizeof small) == -1);
  CHECK(strcmp(small, "x.npy: ") == 0);
  CHECK(npy_read_memory(BYTES("nonsense"), "x.npy", &a, NULL, 0) == -1);
  CHECK(npy_read_memory(BYTES("nonsense"), NULL, &a, err, sizeof err) == -1);
  CHECK(strcmp(err, "not a .npy file (bad magic)") == 0);
  CHECK(npy_read("/nonexistent/dir/x.npy", &a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "/nonexistent/dir/x.npy: cannot open: ");
  CHECK(npy_read("/", &a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "/: cannot open: Is a directory"); /* a FIFO would block */
  write_whole(path, ARANGE_F32, 100);
  CHECK(npy_read(path, &a, err, sizeof err) == -1);
  CHECK(strncmp(err, path, strlen(path)) == 0);
  CHECK_CONTAINS(err, ": header length 118 goes beyond the end of the file (100 bytes)");
  write_whole(path, BYTES("PK\x03\x04 a zip, say"));
  CHECK(npy_read(path, &a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, ": not a .npy file (bad magic)");
  write_whole(path, BYTES(""));
  CHECK(npy_read(path, &a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, ": truncated header: the file has only 0 bytes");
  CHECK(a.data == NULL);
}

/* ---- writing and building ------------------------------------------------------- */

/* `path` is a regular file or absent, and stays absent after the refusal. */
static void check_write_refused(NpyArray *a, const char *path, const char *message) {
  char err[ERR] = "";
  remove(path);
  CHECK(npy_write(path, a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, message);
  CHECK(access(path, F_OK) != 0);
}

/* A device that refuses every write: the error comes back, the device stays. */
static void check_full_device(NpyArray *a) {
  char err[ERR] = "";
  struct stat st;
  if (access("/dev/full", W_OK) != 0) return;
  CHECK(npy_write("/dev/full", a, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "/dev/full: write failed: ");
  CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
}

static void test_write_refusals(const char *path) {
  NpyArray a;
  char err[ERR] = "";
  CHECK(npy_alloc(&a, NPY_F32, 2, (int64_t[]){2, 3}, err, sizeof err) == 0);
  check_write_refused(&a, "/nonexistent/dir/y.npy", "/nonexistent/dir/y.npy: cannot open for writing: ");
  a.count = 5;
  check_write_refused(&a, path, ": count 5 does not match shape (2, 3)");
  a.count = 6, a.elem_size = 2;
  check_write_refused(&a, path, "elem_size 2 is not the size of fp32");
  a.elem_size = 4, a.shape[1] = -3;
  check_write_refused(&a, path, "shape (2, -3) has a negative dimension");
  a.shape[1] = 3, a.rank = 9;
  check_write_refused(&a, path, "rank 9 is not 0 to 8");
  a.rank = 2, a.dtype = NPY_DTYPE_COUNT;
  check_write_refused(&a, path, "invalid dtype 16");
  a.dtype = NPY_F32;
  void *data = a.data;
  a.data = NULL;
  check_write_refused(&a, path, "array has no data");
  a.data = data;
  check_full_device(&a);
  npy_free(&a);
  npy_free(&a); /* twice is fine */
}

static void test_alloc(void) {
  NpyArray a;
  char err[ERR] = "";
  CHECK(npy_alloc(&a, NPY_BF16, 0, NULL, err, sizeof err) == 0);
  CHECK(a.rank == 0 && a.count == 1 && a.elem_size == 2 && *(uint16_t *)a.data == 0);
  npy_free(&a);
  CHECK(a.data == NULL && a.count == 0);
  CHECK(npy_alloc(&a, NPY_I8, 2, (int64_t[]){4, -1}, err, sizeof err) == -1);
  CHECK(strcmp(err, "shape (4, -1) has a negative dimension") == 0);
  CHECK(npy_alloc(&a, NPY_I8, 9, (int64_t[9]){0}, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "rank 9 is not 0 to 8");
  CHECK(npy_alloc(&a, NPY_I8, 1, NULL, err, sizeof err) == -1);
  CHECK(npy_alloc(&a, (NpyDtype)-1, 0, NULL, err, sizeof err) == -1);
  CHECK(npy_alloc(&a, NPY_F64, 3, (int64_t[]){1 << 20, 1 << 20, 2}, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "has more than 2^40 elements");
  CHECK(a.data == NULL);
}

static void test_dtype_names(void) {
  static const char *names[] = {"i1", "i8", "i16", "i32", "i64", "u8", "u16",
                                "u32", "u64", "fp16", "bf16", "fp32", "fp64", "fp8e4nv", "fp8e5", "fp8e4b15"};
  static const size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 1};
  _Static_assert(sizeof names / sizeof names[0] == NPY_DTYPE_COUNT, "a name per dtype");
  for (int t = 0; t < NPY_DTYPE_COUNT; t++) {
    NpyDtype back = NPY_DTYPE_COUNT;
    CHECK(strcmp(npy_dtype_name((NpyDtype)t), names[t]) == 0);
    CHECK(npy_dtype_size((NpyDtype)t) == sizes[t]);
    CHECK(npy_dtype_from_name(names[t], &back) == 0 && back == (NpyDtype)t);
  }
  NpyDtype t;
  CHECK(npy_dtype_from_name("float32", &t) == -1);
  CHECK(npy_dtype_from_name("", &t) == -1);
  CHECK(npy_dtype_from_name(NULL, &t) == -1);
  CHECK(strcmp(npy_dtype_name(NPY_DTYPE_COUNT), "?") == 0 && npy_dtype_size((NpyDtype)99) == 0);
}

/* ---- random bytes -------------------------------------------------------------- */

/* Any outcome is fine but a crash, a leak (under the sanitizers), an array
 * larger than its bytes, or a message that is empty or spans lines. */
static int sane_outcome(const void *bytes, size_t len) {
  NpyArray a;
  char err[ERR] = "";
  if (npy_read_memory(bytes, len, "fuzz.npy", &a, err, sizeof err) != 0)
    return a.data == NULL && strncmp(err, "fuzz.npy: ", 10) == 0 && err[10] && !strchr(err, '\n');
  int sane = a.rank <= NPY_MAX_RANK && a.count * a.elem_size <= len && a.data != NULL;
  npy_free(&a);
  return sane;
}

/* Bytes a header is made of, so mutations reach the parser's corners. */
static const char HEADER_BYTES[] = "{}()[]:, '\"0123456789-LTrueFalsedescrshapefortran_order<>|=bfiuVc\n\x80";

static void mutate(unsigned char *buf, size_t len, uint64_t *seed) {
  int edits = 1 + (int)(next_random(seed) % 4);
  for (int e = 0; e < edits; e++) {
    size_t at = next_random(seed) % len;
    uint64_t r = next_random(seed);
    buf[at] = r & 1 ? (unsigned char)HEADER_BYTES[(r >> 1) % (sizeof HEADER_BYTES - 1)] : (unsigned char)(r >> 8);
  }
}

static void test_random_bytes(uint64_t *seed) {
  unsigned char buf[FILE_MAX];
  int sane = 1;
  for (int i = 0; i < 1000; i++) { /* noise, half of it behind a valid preamble */
    size_t len = next_random(seed) % 300;
    fill_random(buf, len, seed);
    if (i % 2 && len >= 12) memcpy(buf, "\x93NUMPY", 6), buf[6] = (unsigned char)(1 + i % 3), buf[7] = 0;
    sane &= sane_outcome(buf, len);
  }
  for (int i = 0; i < 3000; i++) { /* numpy's files with a few bytes changed, cut short at times */
    const char *src = i % 3 == 0 ? ARANGE_F32 : i % 3 == 1 ? SCALAR_F64 : PY2_I64;
    size_t len = i % 3 == 0 ? sizeof ARANGE_F32 - 1 : i % 3 == 1 ? sizeof SCALAR_F64 - 1 : sizeof PY2_I64 - 1;
    memcpy(buf, src, len);
    mutate(buf + 8, len - 8, seed);
    if (i % 5 == 0) len = next_random(seed) % len;
    sane &= sane_outcome(buf, len);
  }
  CHECK(sane);
}

int main(int argc, char **argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
  if (seed == 0) seed = 1; /* xorshift's one fixed point */
  printf("test_npy seed %llu\n", (unsigned long long)seed);
  char path[] = "/tmp/test_npy_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  test_round_trips(path, &seed);
  test_numpy_files(path);
  test_spellings();
  test_bad_headers();
  test_bad_preambles();
  test_messages(path);
  test_write_refusals(path);
  test_alloc();
  test_dtype_names();
  test_random_bytes(&seed);
  remove(path);
  return check_report();
}
