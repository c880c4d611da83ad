/*
 * datadir.h - where gensweep finds its generation configs when --configs is not given.
 *
 * Lookup order: ./configs when it is a directory (a checkout of the repository), else the
 * configs installed next to the binary (<prefix>/share/gensweep/configs for <prefix>/bin/gensweep,
 * as `cmake --install` and the .deb place them), else "configs" (whose absence the caller
 * reports).
 */
#ifndef GS_DATADIR_H
#define GS_DATADIR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Relative to the binary's directory. */
#define GS_INSTALLED_CONFIGS "../share/gensweep/configs"

/* The default config directory (a static string, valid for the life of the process). */
const char *gs_default_configs_dir(void);

#ifdef __cplusplus
}
#endif
#endif
