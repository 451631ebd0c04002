/* The on-disk cache of compiled kernels: one file per key (the SHA-256 of
 * everything that determines the code, computed by the JIT) in the cache
 * directory.  A file is a header (magic, format version, image kind,
 * lengths, then at byte 40 the SHA-256 of the whole entry but the digest
 * itself), then the image (cubin or PTX), the metadata JSON and the
 * dependencies: the files beyond the source that the compilation read,
 * which the key cannot see (the JIT writes and checks them: jit_deps.c;
 * here they are bytes).  Writers go through a temporary file in the same
 * directory and a rename, so readers see a whole entry or none, and any
 * number of processes may fill the cache at once.  Entries that fail their
 * checks are reported as corrupt for the caller to rebuild. */
#ifndef TILE_CACHE_H
#define TILE_CACHE_H

#include <stddef.h>

/* Format 3: the dependencies' section (format 2 had none, so an entry of a
 * kernel importing files could not say which; format 1's digest did not
 * cover the header, so a flipped kind or a moved boundary passed). */
enum { CACHE_FORMAT = 3, CACHE_HEADER_SIZE = 72, CACHE_DIGEST_AT = 40 };

typedef struct CacheEntry {
  unsigned char *image;   /* malloc'd by cache_read */
  size_t image_size;
  int image_is_ptx;
  char *metadata;         /* malloc'd by cache_read, NUL-terminated */
  size_t metadata_len;
  char *deps;             /* malloc'd by cache_read, NUL-terminated; NULL or "" when none */
  size_t deps_len;
} CacheEntry;

/* The entry's path: DIR/KEY.tile. */
int cache_path(const char *dir, const char *key, char *path, size_t size);
/* 1: found, *e filled (free with cache_entry_free); 0: no entry; -1: an
 * entry that is unreadable or corrupt, `why` says how. */
int cache_read(const char *dir, const char *key, CacheEntry *e, char *why, size_t whysize);
/* Creates `dir` as needed and writes the entry atomically.  0, or -1 with
 * `why` (the directory cannot be made or written: not fatal to the caller). */
int cache_write(const char *dir, const char *key, const CacheEntry *e, char *why, size_t whysize);
void cache_entry_free(CacheEntry *e);

#endif
