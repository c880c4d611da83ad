/* datadir.c - the installed data directory, the default config directory and the lookup of
 * files named by a bare name (datadir.h). */
/* realpath is X/Open, beyond the POSIX.1-2008 base the build asks for */
#define _XOPEN_SOURCE 700
#include "datadir.h"

#include <errno.h>
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

/* Something a loader can be handed: it exists and is not a directory. */
static int is_file_like(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* <directory of the running binary>/GS_INSTALLED_DATA into buf, not canonical. 0 or -1. */
static int data_dir_beside_binary(char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    int w = snprintf(buf, size, "%s/%s", exe, GS_INSTALLED_DATA);
    return w > 0 && (size_t)w < size ? 0 : -1;
}

const char *gs_installed_data_dir(void)
{
    static char installed[PATH_MAX];
    static int done;
    if (!done) {
        done = 1;
        char rel[PATH_MAX];
        /* canonical, so results name /usr/share/..., not /usr/bin/../share/... */
        if (data_dir_beside_binary(rel, sizeof rel) != 0 || !is_dir(rel) ||
            !realpath(rel, installed))
            installed[0] = '\0';
    }
    return installed[0] ? installed : NULL;
}

const char *gs_default_configs_dir(void)
{
    static char configs[PATH_MAX];
    if (is_dir("configs")) return "configs";
    const char *data = gs_installed_data_dir();
    if (data) {
        int w = snprintf(configs, sizeof configs, "%s/configs", data);
        if (w > 0 && (size_t)w < sizeof configs && is_dir(configs)) return configs;
    }
    return "configs";
}

gs_status gs_data_find(const char *subdir, const char *what, const char *arg, char *out,
                       size_t out_size, gs_error *err)
{
    if (!arg || !arg[0]) return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "no %s given", what);
    const char *found = NULL;
    char here[PATH_MAX], there[PATH_MAX];
    here[0] = there[0] = '\0';
    int explicit_path = strchr(arg, '/') != NULL || is_file_like(arg);
    if (!explicit_path) {
        struct stat sb;
        /* a name the current directory cannot even be asked about: the loader says why */
        explicit_path = stat(arg, &sb) != 0 && errno != ENOENT && errno != ENOTDIR;
    }
    if (explicit_path) {
        found = arg;
    } else {
        const char *ext = ends_with(arg, ".yaml") || ends_with(arg, ".yml") ? "" : ".yaml";
        int w = snprintf(here, sizeof here, "%s/%s%s", subdir, arg, ext);
        if (w < 0 || (size_t)w >= sizeof here)
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "%s '%s': name too long", what,
                                arg);
        const char *data = gs_installed_data_dir();
        char beside[PATH_MAX];
        if (!data && data_dir_beside_binary(beside, sizeof beside) == 0) data = beside;
        if (data) {
            w = snprintf(there, sizeof there, "%s/%s/%s%s", data, subdir, arg, ext);
            if (w < 0 || (size_t)w >= sizeof there) there[0] = '\0';
        }
        if (is_file_like(here))
            found = here;
        else if (gs_installed_data_dir() && there[0] && is_file_like(there))
            found = there;
    }
    if (!found) {
        int is_a_dir = is_dir(arg);
        return gs_error_set(
            err, GS_ERR_IO, NULL, 0, 0, "'%s': %s, and no %s of that name in ./%s%s%s%s", arg,
            is_a_dir ? "a directory, not a file" : "no such file", what, here,
            there[0] ? " or " : "", there[0] ? there : " (no path of the binary to look beside)",
            there[0] && !gs_installed_data_dir()
                ? " (no data directory is installed beside this binary)"
                : "");
    }
    if (strlen(found) >= out_size)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "%s '%s': path too long", what, found);
    memcpy(out, found, strlen(found) + 1);
    return GS_OK;
}
