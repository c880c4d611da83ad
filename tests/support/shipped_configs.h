/*
 * shipped_configs.h - the generation configs shipped in configs/ (every *.yaml directly in it,
 * sorted by name), for tests that run on each. Needs GS_SOURCE_DIR (set for every test).
 */
#ifndef GS_TEST_SHIPPED_CONFIGS_H
#define GS_TEST_SHIPPED_CONFIGS_H

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

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

#endif
