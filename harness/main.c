/* gensweep command-line entry point. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("gensweep %s (%s)\n", GS_VERSION, GS_GIT_COMMIT);
        return 0;
    }
    fprintf(stderr, "usage: gensweep --version\n");
    return 2;
}
