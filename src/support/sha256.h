/* SHA-256 (FIPS 180-4), for the disk cache's keys and checksums.  Small and
 * dependency-free; not constant-time (nothing here is secret). */
#ifndef TILE_SHA256_H
#define TILE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct Sha256 {
  uint32_t state[8];
  uint64_t length;        /* bytes hashed so far */
  unsigned char block[64];/* the partial block */
  size_t used;            /* bytes in `block` */
} Sha256;

void sha256_init(Sha256 *h);
void sha256_update(Sha256 *h, const void *data, size_t len);
void sha256_final(Sha256 *h, unsigned char digest[32]);
/* The digest of one buffer. */
void sha256(const void *data, size_t len, unsigned char digest[32]);
/* 64 lowercase hex digits and a NUL into `hex`. */
void sha256_hex(const unsigned char digest[32], char hex[65]);

#endif
