/* libtile's exported surface is include/tile/tile.h; the definitions live in
 * the stage folders and are pulled in whole.  This file only anchors the
 * shared library target. */
#include "tile/tile.h"
