/* results.c - a layer under the harness that includes a harness header (not allowed). */
#include "sweep.h"
