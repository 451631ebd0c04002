/* libFuzzer harness over the disk cache's reader (src/runtime/cache.c): every
 * input is written as the file of one entry and read back.  An entry either
 * reads whole (its image, metadata and dependency list exactly the file's,
 * which a writer reproduces byte for byte) or is refused with a reason;
 * never a crash, a read past the file, or a hang (a FIFO or directory at
 * the path is tests/unit/test_runtime.c's).  The first 72 bytes are the
 * header: the seeds (fuzz_rt_seeds) are sound entries, so mutations reach
 * past the checksum only by the checksum's own failure; so each input, and
 * a sound entry's list, also goes to the JIT's reader of dependency lists
 * (src/driver/jit_deps.c), where a list that reads must be the bytes its
 * writer gives for it.  Nothing here opens the files a list names. */
#include "../../src/driver/driver.h"
#include "../../src/runtime/cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void remove_dir(void) {
  char path[128];
  const char *keys[] = {"entry", "again"};
  for (int i = 0; i < 2; i++) {
    cache_path(dir, keys[i], path, sizeof path);
    unlink(path);
  }
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  snprintf(dir, sizeof dir, "/tmp/tile-fuzz-cache-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  atexit(remove_dir);
  return 0;
}

/* A list either is refused with a reason or reads back as its bytes. */
static void check_deps(const char *deps, size_t len) {
  Arena a;
  arena_init(&a, 1 << 26);
  ModuleFiles files;
  char why[256] = "";
  if (jit_deps_parse(&a, deps, len, &files, why, sizeof why) == 0) {
    size_t back_len;
    const char *back = jit_deps_format(&a, &files, &back_len);
    if (back_len != len || memcmp(back, deps, len)) __builtin_trap();
  } else if (!why[0]) {
    __builtin_trap();
  }
  arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[128], why[256] = "";
  cache_path(dir, "entry", path, sizeof path);
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  CacheEntry e;
  int r = cache_read(dir, "entry", &e, why, sizeof why);
  if (r == 1) { /* sound: writing it again gives the same bytes */
    if (CACHE_HEADER_SIZE + e.image_size + e.metadata_len + e.deps_len != size ||
        memcmp(e.image, data + CACHE_HEADER_SIZE, e.image_size))
      __builtin_trap();
    check_deps(e.deps, e.deps_len);
    if (cache_write(dir, "again", &e, why, sizeof why) == 0) {
      CacheEntry back;
      if (cache_read(dir, "again", &back, why, sizeof why) != 1 || back.metadata_len != e.metadata_len ||
          back.deps_len != e.deps_len)
        __builtin_trap();
      cache_entry_free(&back);
    }
    cache_entry_free(&e);
  } else if (r == -1 && !why[0]) {
    __builtin_trap(); /* a refusal says why */
  }
  unlink(path);
  check_deps((const char *)data, size);
  return 0;
}
