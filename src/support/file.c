/* Opening regular files without blocking on anything else (see file.h). */
#define _GNU_SOURCE /* O_CLOEXEC with -std=c11 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_open_regular(const char *path, char *why, size_t whysize) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO's open would wait for a writer */
  struct stat st;
  if (fd < 0) {
    snprintf(why, whysize, "%s", strerror(errno));
    return -1;
  }
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    int is_dir = !fstat(fd, &st) && S_ISDIR(st.st_mode);
    snprintf(why, whysize, "%s", is_dir ? strerror(EISDIR) : "not a regular file");
    close(fd);
    errno = is_dir ? EISDIR : EINVAL; /* not ENOENT: something is there */
    return -1;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

FILE *file_fopen_regular(const char *path, char *why, size_t whysize) {
  int fd = file_open_regular(path, why, whysize);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (fd >= 0 && !f) {
    snprintf(why, whysize, "%s", strerror(errno));
    close(fd);
  }
  return f;
}
