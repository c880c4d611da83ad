/* datadir.c - the default config directory (datadir.h). */
/* realpath is X/Open, beyond the POSIX.1-2008 base the build asks for */
#define _XOPEN_SOURCE 700
#include "datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *gs_default_configs_dir(void)
{
    static char installed[PATH_MAX];
    if (is_dir("configs")) return "configs";
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char rel[PATH_MAX + sizeof GS_INSTALLED_CONFIGS + 1];
            snprintf(rel, sizeof rel, "%s/%s", exe, GS_INSTALLED_CONFIGS);
            /* canonical, so results name /usr/share/..., not /usr/bin/../share/... */
            if (is_dir(rel) && realpath(rel, installed)) return installed;
        }
    }
    return "configs";
}
