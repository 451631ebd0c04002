/* Opening the files the library reads (sources, images, metadata, cache
 * entries, .npy arrays): only regular files.  A FIFO at the path would block
 * the open or the read forever, and a directory or device is never what was
 * meant, so they are refused without blocking. */
#ifndef TILE_FILE_H
#define TILE_FILE_H

#include <stddef.h>
#include <stdio.h>

/* A read-only descriptor for `path` if it is a regular file; -1 with why
 * ("No such file or directory", "not a regular file") otherwise. */
int file_open_regular(const char *path, char *why, size_t whysize);
/* The same as a stdio stream ("rb"); NULL with why. */
FILE *file_fopen_regular(const char *path, char *why, size_t whysize);

#endif
