/* gensweep's entry point: the commands (commands.c). */
#include "commands.h"

int main(int argc, char **argv)
{
    return gs_main(argc, argv);
}
