/* tilec run (run.c). */
#ifndef TILEC_RUN_H
#define TILEC_RUN_H

#include "tile/tile.h"

int tilec_run(int argc, char **argv);

#endif
