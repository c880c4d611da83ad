/* job.c - a library source that includes a command header (not allowed). */
#include "commands.h"
