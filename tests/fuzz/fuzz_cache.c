/* libFuzzer harness over the disk cache's reader (src/runtime/cache.c): every
 * input is written as the file of one entry and read back.  An entry either
 * reads whole (its image and metadata exactly the file's, which a writer
 * reproduces byte for byte) or is refused with a reason; never a crash, a
 * read past the file, or a hang (a FIFO or directory at the path is
 * tests/unit/test_runtime.c's).  The first 64 bytes are the header: the
 * seeds (fuzz_rt_seeds) are sound entries, so mutations reach past the
 * checksum only by the checksum's own failure. */
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
    if (CACHE_HEADER_SIZE + e.image_size + e.metadata_len != size || memcmp(e.image, data + CACHE_HEADER_SIZE, e.image_size))
      __builtin_trap();
    if (cache_write(dir, "again", &e, why, sizeof why) == 0) {
      CacheEntry back;
      if (cache_read(dir, "again", &back, why, sizeof why) != 1 || back.metadata_len != e.metadata_len) __builtin_trap();
      cache_entry_free(&back);
    }
    cache_entry_free(&e);
  } else if (r == -1 && !why[0]) {
    __builtin_trap(); /* a refusal says why */
  }
  unlink(path);
  return 0;
}
