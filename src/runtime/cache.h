/* The on-disk cache of compiled kernels: one file per key (the SHA-256 of
 * everything that determines the code, computed by the JIT) in the cache
 * directory.  A file is a header (magic, format version, image kind,
 * lengths, then at byte 32 the SHA-256 of the whole entry but the digest
 * itself), then the image (cubin or PTX), then the metadata JSON.  Writers go through a temporary file in the same directory and a
 * rename, so readers see a whole entry or none, and any number of processes
 * may fill the cache at once.  Entries that fail their checks are reported
 * as corrupt for the caller to rebuild. */
#ifndef TILE_CACHE_H
#define TILE_CACHE_H

#include <stddef.h>

/* Format 2: the digest covers the header too (format 1's covered the image
 * and metadata only, so a flipped kind or a moved boundary passed). */
enum { CACHE_FORMAT = 2, CACHE_HEADER_SIZE = 64, CACHE_DIGEST_AT = 32 };

typedef struct CacheEntry {
  unsigned char *image;   /* malloc'd by cache_read */
  size_t image_size;
  int image_is_ptx;
  char *metadata;         /* malloc'd by cache_read, NUL-terminated */
  size_t metadata_len;
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
