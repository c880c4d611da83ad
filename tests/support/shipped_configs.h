/*
 * shipped_configs.h - the generation configs shipped in configs/ (every *.yaml directly in it,
 * sorted by name), for tests that run on each: their paths, a test-name for each, and loading
 * one. Needs GS_SOURCE_DIR (test_paths.h, in every test).
 */
#ifndef GS_TEST_SHIPPED_CONFIGS_H
#define GS_TEST_SHIPPED_CONFIGS_H

#include <ctype.h>
#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gs/config.h"

inline std::vector<std::string> gs_test_shipped_configs()
{
    std::vector<std::string> out;
    const std::string dir = std::string(GS_SOURCE_DIR) + "/configs";
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent *e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 5 && n.substr(n.size() - 5) == ".yaml") out.push_back(dir + "/" + n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

/* "gen1" for .../configs/gen1.yaml, other characters than letters and digits as '_' (a
 * parameterised test's name). */
inline std::string gs_test_config_name(const std::string &path)
{
    std::string n = path.substr(path.rfind('/') + 1);
    n = n.substr(0, n.size() - 5);
    for (auto &c : n)
        if (!isalnum((unsigned char)c)) c = '_';
    return n;
}

/* The config at `path`, its diagnostics dropped (NULL when it does not load); gs_config_free. */
inline gs_config *gs_test_load_config(const std::string &path)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load(path.c_str(), &d);
    gs_diags_free(&d);
    return cfg;
}

#endif
