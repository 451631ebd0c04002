/* Placeholder until the fold pass lands (being written now). */
#include "passes.h"

void tir_fold(TirFunc *f) { (void)f; }
