/*
 * datadir.h - where gensweep finds its data: the generation configs when --configs is not
 * given, and a config, workload or calibration case file named by a bare name (gen3,
 * llama3-8b-decode-4k, cases).
 *
 * The installed data directory is <prefix>/share/gensweep for <prefix>/bin/gensweep, found
 * relative to the running binary (as `cmake --install` and the .deb place them), so any prefix
 * works; a build tree's binary has none.
 *
 * Default config directory: ./configs when it is a directory (a checkout of the repository),
 * else the installed configs, else "configs" (whose absence the caller reports).
 *
 * A file argument (gs_data_find): ARG itself when it is a path (has a '/') or names something
 * other than a directory in the current directory (an explicit path always wins; the loader
 * reports what is wrong with it); else the bare name NAME is NAME.yaml (or NAME when it ends in
 * .yaml/.yml) looked up in ./SUBDIR, then in the installed data directory's SUBDIR.
 */
#ifndef GS_DATADIR_H
#define GS_DATADIR_H

#include <stddef.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The data directory relative to the binary's directory. */
#define GS_INSTALLED_DATA "../share/gensweep"

/* The installed data directory, canonical (/usr/share/gensweep, not /usr/bin/../share/...),
 * or NULL when there is none next to the binary. A static string. */
const char *gs_installed_data_dir(void);

/* The default config directory (a static string, valid for the life of the process). */
const char *gs_default_configs_dir(void);

/* The file ARG stands for (see the top of this file): ARG itself, or the path found for the
 * bare name in ./SUBDIR or the installed SUBDIR, copied into out. `what` names the kind of file
 * for the message ("config", "workload", "case file"). Returns GS_OK, or GS_ERR_IO with a
 * message naming every place looked in (GS_ERR_USAGE for an empty ARG, GS_ERR_INVALID when a
 * path does not fit in out). */
gs_status gs_data_find(const char *subdir, const char *what, const char *arg, char *out,
                       size_t out_size, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
