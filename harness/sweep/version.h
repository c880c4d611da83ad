/* version.h - the gensweep version and the git commit the binary was built from.
 *
 * The definitions are generated at build time (cmake/Version.cmake), so a rebuild after a
 * commit reports the new commit without re-running CMake. */
#ifndef GS_HARNESS_VERSION_H
#define GS_HARNESS_VERSION_H

/* "MAJOR.MINOR.PATCH" from the project() call. */
const char *gs_version(void);

/* Short commit id; "-dirty" appended when tracked files differed from it at build time;
 * "unknown" outside a git checkout. */
const char *gs_commit(void);

#endif
