/* libFuzzer harness over tilec run's command line: the input, split at NUL
 * bytes, is the words after "tilec run" (options, the kernel's file, --,
 * the kernel's arguments: numbers, .npy paths, out:PATH:DTYPE:SHAPE).
 * Parsing reads and writes no file (tilec_run_parse), so any input must
 * give parsed arguments or a message: a crash, leak, hang or sanitizer
 * report (an out-of-bounds copy of a long word, an overflowing count) is a
 * bug.  Its messages go to stderr: run it with -close_fd_mask=2. */
#include "../../src/tools/tilec/run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_WORDS = 200 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char *argv[MAX_WORDS + 3] = {"tilec", "run"};
  int argc = 2;
  for (char *word = text; argc < MAX_WORDS + 2 && word <= text + size; word += strlen(word) + 1) argv[argc++] = word;
  argv[argc] = NULL;
  tilec_run_free(tilec_run_parse(argc, argv));
  free(text);
  return 0;
}
