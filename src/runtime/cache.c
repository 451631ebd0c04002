/* The disk cache's files (see cache.h for the format and guarantees). */
#include "cache.h"
#include "../support/file.h"
#include "../support/endian.h"
#include "../support/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'T', 'I', 'L', 'E', 'K', 'R', 'N', 'L'};
enum { MAX_ENTRY_BYTES = 1 << 30 };

/* Of the whole entry: the header before the digest (the kind and where the
 * sections end are as much the entry as their bytes), then each section. */
static void entry_digest(const unsigned char header[CACHE_DIGEST_AT], const CacheEntry *e, unsigned char digest[32]) {
  Sha256 h;
  sha256_init(&h);
  sha256_update(&h, header, CACHE_DIGEST_AT);
  sha256_update(&h, e->image, e->image_size);
  sha256_update(&h, e->metadata, e->metadata_len);
  sha256_update(&h, e->deps, e->deps_len);
  sha256_final(&h, digest);
}

int cache_path(const char *dir, const char *key, char *path, size_t size) {
  int n = snprintf(path, size, "%s/%s.tile", dir, key);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

void cache_entry_free(CacheEntry *e) {
  free(e->image);
  free(e->metadata);
  free(e->deps);
  memset(e, 0, sizeof *e);
}

static int corrupt(char *why, size_t whysize, const char *what) {
  snprintf(why, whysize, "%s", what);
  return -1;
}

/* A NUL-terminated malloc'd copy of a text section. */
static char *copy_text(const unsigned char *data, size_t len) {
  char *t = malloc(len + 1);
  if (!t) return NULL;
  memcpy(t, data, len);
  t[len] = 0;
  return t;
}

/* Checks a whole file's bytes and splits them into *e. */
static int decode(const unsigned char *data, size_t size, CacheEntry *e, char *why, size_t whysize) {
  if (size < CACHE_HEADER_SIZE || memcmp(data, magic, sizeof magic)) return corrupt(why, whysize, "bad magic");
  if (le_get(data + 8, 4) != CACHE_FORMAT) return corrupt(why, whysize, "another format version");
  uint64_t image_size = le_get(data + 16, 8), metadata_len = le_get(data + 24, 8), deps_len = le_get(data + 32, 8);
  if (image_size > size || metadata_len > size || deps_len > size ||
      CACHE_HEADER_SIZE + image_size + metadata_len + deps_len != size)
    return corrupt(why, whysize, "lengths do not match the file (truncated?)");
  const unsigned char *image = data + CACHE_HEADER_SIZE, *metadata = image + image_size, *deps = metadata + metadata_len;
  CacheEntry view = {(unsigned char *)image, image_size, 0, (char *)metadata, metadata_len, (char *)deps, deps_len};
  unsigned char digest[32];
  entry_digest(data, &view, digest);
  if (memcmp(digest, data + CACHE_DIGEST_AT, 32)) return corrupt(why, whysize, "checksum mismatch");
  e->image = malloc(image_size ? image_size : 1);
  e->metadata = copy_text(metadata, metadata_len);
  e->deps = copy_text(deps, deps_len);
  if (!e->image || !e->metadata || !e->deps) {
    cache_entry_free(e);
    return corrupt(why, whysize, "out of memory");
  }
  memcpy(e->image, image, image_size);
  e->image_size = image_size;
  e->metadata_len = metadata_len;
  e->deps_len = deps_len;
  e->image_is_ptx = le_get(data + 12, 4) == 1;
  return 1;
}

static int read_fd(int fd, unsigned char *data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t got = read(fd, data + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    done += (size_t)got;
  }
  return 0;
}

int cache_read(const char *dir, const char *key, CacheEntry *e, char *why, size_t whysize) {
  char path[4096];
  memset(e, 0, sizeof *e);
  if (!dir || cache_path(dir, key, path, sizeof path)) return 0;
  char cause[128];
  int fd = file_open_regular(path, cause, sizeof cause);
  if (fd < 0) return errno == ENOENT ? 0 : corrupt(why, whysize, cause);
  struct stat st;
  int status = -1;
  unsigned char *data = NULL;
  if (fstat(fd, &st) || st.st_size < 0 || st.st_size > MAX_ENTRY_BYTES) {
    corrupt(why, whysize, "cannot size the file, or it is too large");
  } else if (!(data = malloc((size_t)st.st_size + 1))) {
    corrupt(why, whysize, "out of memory");
  } else if (read_fd(fd, data, (size_t)st.st_size)) {
    corrupt(why, whysize, "read error");
  } else {
    status = decode(data, (size_t)st.st_size, e, why, whysize);
  }
  free(data);
  close(fd);
  return status;
}

/* mkdir -p: every missing component of `dir`. */
static int make_dirs(const char *dir, char *why, size_t whysize) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return corrupt(why, whysize, "path too long");
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p) continue;
    char saved = *p;
    *p = 0;
    if (mkdir(path, 0777) && errno != EEXIST) {
      snprintf(why, whysize, "cannot create '%s': %s", path, strerror(errno));
      return -1;
    }
    if (!saved) return 0;
    *p = saved;
  }
}

static int write_fd(int fd, const void *data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t put = write(fd, (const char *)data + done, size - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return -1;
    done += (size_t)put;
  }
  return 0;
}

static void encode_header(const CacheEntry *e, unsigned char header[CACHE_HEADER_SIZE]) {
  memset(header, 0, CACHE_HEADER_SIZE);
  memcpy(header, magic, sizeof magic);
  le_put(header + 8, CACHE_FORMAT, 4);
  le_put(header + 12, e->image_is_ptx ? 1 : 0, 4);
  le_put(header + 16, e->image_size, 8);
  le_put(header + 24, e->metadata_len, 8);
  le_put(header + 32, e->deps_len, 8);
  entry_digest(header, e, header + CACHE_DIGEST_AT);
}

int cache_write(const char *dir, const char *key, const CacheEntry *e, char *why, size_t whysize) {
  char path[4096], temp[4200];
  if (!dir || cache_path(dir, key, path, sizeof path)) return corrupt(why, whysize, "no cache directory");
  if (make_dirs(dir, why, whysize)) return -1;
  snprintf(temp, sizeof temp, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(temp);
  if (fd < 0) {
    snprintf(why, whysize, "cannot write in '%s': %s", dir, strerror(errno));
    return -1;
  }
  unsigned char header[CACHE_HEADER_SIZE];
  encode_header(e, header);
  int failed = fchmod(fd, 0644) || write_fd(fd, header, sizeof header) || write_fd(fd, e->image, e->image_size) ||
               write_fd(fd, e->metadata, e->metadata_len) || write_fd(fd, e->deps, e->deps_len);
  int saved = errno;
  failed |= close(fd) != 0;
  if (!failed && rename(temp, path) == 0) return 0;
  saved = failed ? saved : errno;
  unlink(temp);
  snprintf(why, whysize, "cannot write '%s': %s", path, strerror(saved));
  return -1;
}
