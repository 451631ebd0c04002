/* Little-endian integers in byte arrays: the on-disk formats' fields
 * (the cache's entries, kernel bundles). */
#ifndef TILE_ENDIAN_H
#define TILE_ENDIAN_H

#include <stdint.h>

static inline void le_put(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t le_get(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

#endif
