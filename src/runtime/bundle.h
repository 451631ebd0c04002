/* Kernel bundles (.tlk, docs/abi.md section 12): one file holding a
 * kernel's specialisations, each compiled for several architectures (a
 * cubin and its PTX, with their metadata) and for the CPU interpreter (its
 * tile IR), for every bundled @triton.autotune config.  A header (magic,
 * format version, entry count, file length, a SHA-256 of the whole file), a
 * table of entries (kind, specialisation, config, architecture, the
 * offsets and lengths of the entry's bytes and metadata), the manifest
 * (JSON: the kernel, its signatures, configs and tuning), then the bytes.
 * bundle_decode checks every field of a file it is given as hostile input;
 * bundle_encode writes one (tile_pack). */
#ifndef TILE_BUNDLE_H
#define TILE_BUNDLE_H

#include "kernel.h"

#include <stddef.h>
#include <stdint.h>

enum {
  BUNDLE_FORMAT = 1,
  BUNDLE_HEADER_SIZE = 64,
  BUNDLE_DIGEST_AT = 32,
  BUNDLE_ENTRY_SIZE = 56,
  BUNDLE_MAX_ENTRIES = 1 << 16,
  BUNDLE_MAX_SIGNATURES = 64,
  BUNDLE_MAX_CONFIGS = 1024,
  BUNDLE_ARCH_BYTES = 8,
  BUNDLE_NONE = -1,            /* an entry's specialisation or config when it has none (0xffffffff on disk) */
};

/* What an entry holds. */
#define BUNDLE_KINDS(X)                                   \
  X(BUNDLE_MANIFEST, 0, "manifest")  /* JSON, entry 0 */  \
  X(BUNDLE_CUBIN, 1, "cubin")                             \
  X(BUNDLE_PTX, 2, "ptx")                                 \
  X(BUNDLE_TIR, 3, "tile IR")  /* for the interpreter; metadata target "cpu" */

typedef enum {
#define BUNDLE_KIND_ID(id, value, name) id = value,
  BUNDLE_KINDS(BUNDLE_KIND_ID)
#undef BUNDLE_KIND_ID
  BUNDLE_KIND_COUNT
} BundleKind;

typedef struct BundleEntry {
  int kind;                    /* BundleKind */
  int spec;                    /* index into the manifest's signatures; BUNDLE_NONE for the manifest */
  int config;                  /* the @triton.autotune config; BUNDLE_NONE: the kernel has none */
  char arch[BUNDLE_ARCH_BYTES + 1]; /* "sm_90a" for images; "" otherwise */
  const unsigned char *data;   /* into the bundle's bytes */
  size_t size;
  const char *metadata;        /* a NUL-terminated copy (decoded), NULL for the manifest */
  size_t metadata_len;
  KernelMetadata meta;         /* read and checked (decoded) */
} BundleEntry;

/* A bundle read and checked: everything lives in `arena`. */
typedef struct Bundle {
  Arena arena;
  const char *name;            /* the file's name, for messages */
  unsigned char digest[32];    /* the file's checksum: the autotuner's choices are keyed by it */
  const unsigned char *bytes;  /* a copy of the file */
  size_t size;
  const char *kernel;          /* the manifest's */
  int num_specs;
  const char **signatures;     /* "*fp32:16,*fp32,i32:1" */
  uint16_t **keys;             /* each signature as a launch key (args.h) */
  int *num_args;               /* each key's length */
  int num_configs;             /* configs bundled; 0: the kernel has no @autotune configs */
  int *configs;                /* their indices in the source */
  KernelTuning tuning;         /* when num_configs > 1 */
  BundleEntry *entries;
  int num_entries;
  const struct BundleInterpreter *interp; /* runs the tile IR; NULL: none (libtile_rt) */
} Bundle;

/* Reads and checks `size` bytes into b (arena initialised here; free it
 * with bundle_free).  0, or -1 with "bundle 'NAME': ..." in err. */
int bundle_decode(Bundle *b, const char *name, const void *data, size_t size, char *err, size_t errsize);
void bundle_free(Bundle *b);
/* Where config index `config` is in b->configs (0 for BUNDLE_NONE when the
 * kernel has no configs); -1 if it is not bundled. */
int bundle_config_slot(const Bundle *b, int config);

/* What bundle_encode writes: entries[0] is the manifest (its JSON in data). */
typedef struct BundleBlob {
  int kind, spec, config;
  const char *arch;            /* NULL or "" for none */
  const void *data;
  size_t size;
  const char *metadata;        /* NULL: none */
} BundleBlob;

/* The file's bytes, malloc'd, in *out; -1 when out of memory or too large. */
int bundle_encode(const BundleBlob *blobs, int count, unsigned char **out, size_t *size);

/* The interpreter for bundled tile IR: libtile's (src/driver/pack.c);
 * libtile_rt has none (src/runtime/no_compiler.c).  Each library defines
 * tile_kernel_load_bundle and _file as bundle_load and _load_file with its
 * own. */
typedef struct BundleInterpreter {
  /* Reads the tile IR entry e into s->program, checked, its parameters at
   * the positions e's metadata gives; a status and message in k's context. */
  tile_status (*read)(tile_kernel *k, Spec *s, const BundleEntry *e);
  tile_status (*run)(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n, const size_t *bytes);
  void (*release)(tile_kernel *k, Spec *s);
} BundleInterpreter;
/* tile_kernel_load_bundle and _file; `interp` NULL: none (libtile_rt). */
tile_status bundle_load(tile_context *ctx, const char *name, const void *data, size_t size,
                        const BundleInterpreter *interp, tile_kernel **out);
tile_status bundle_load_file(tile_context *ctx, const char *path, const BundleInterpreter *interp, tile_kernel **out);

#endif
