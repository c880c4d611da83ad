/*
 * family.c - the family table (gs/family.h) and the config checks it drives.
 *
 * The table is generated at configure time from the genN/ folders that register a family
 * (gs_families.inc: one GS_FAMILY(genN) line each, in build order); each folder defines
 * `const gs_family gs_family_genN`.
 */
#include "gs/family.h"

#include <string.h>

#include "gs/strbuf.h"

#define GS_FAMILY(n) extern const gs_family gs_family_##n;
#include "gs_families.inc"
#undef GS_FAMILY

static const gs_family *const table[] = {
#define GS_FAMILY(n) &gs_family_##n,
#include "gs_families.inc"
#undef GS_FAMILY
};

static const char *const feature_names[] = {
#define GS_FEAT_NAME(e, n, how, on) n,
    GS_FEATURE_TABLE(GS_FEAT_NAME)
#undef GS_FEAT_NAME
};
static const char *const feature_keys[] = {
#define GS_FEAT_KEY(e, n, how, on) how,
    GS_FEATURE_TABLE(GS_FEAT_KEY)
#undef GS_FEAT_KEY
};

const char *gs_feature_name(gs_feature f)
{
    return (int)f >= 0 && f < GS_FEATURE_COUNT ? feature_names[f] : "?";
}

const char *gs_feature_config_key(gs_feature f)
{
    return (int)f >= 0 && f < GS_FEATURE_COUNT ? feature_keys[f] : "?";
}

uint32_t gs_config_features(const gs_config *c)
{
    uint32_t f = 0;
    if (!c) return 0;
#define GS_FEAT_ON(e, n, how, on)                                                                  \
    if (on) f |= 1u << (e);
    GS_FEATURE_TABLE(GS_FEAT_ON)
#undef GS_FEAT_ON
    return f;
}

size_t gs_family_count(void)
{
    return GS_ARRAY_LEN(table);
}

const gs_family *gs_family_at(size_t i)
{
    return i < GS_ARRAY_LEN(table) ? table[i] : NULL;
}

const gs_family *gs_family_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < GS_ARRAY_LEN(table); i++)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}

void gs_family_list(char *buf, size_t size)
{
    if (!buf || !size) return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < GS_ARRAY_LEN(table) && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", table[i]->name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

uint64_t gs_family_extension_ops(void)
{
    uint64_t ops = 0;
    for (size_t i = 0; i < GS_ARRAY_LEN(table); i++)
        ops |= table[i]->isa_ops;
    return ops;
}

/* "gen3, gen4" : the families that have feature f (or "none"). */
static void with_feature(uint32_t bit, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < GS_ARRAY_LEN(table) && used < size; i++) {
        if (!(table[i]->features & bit)) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", table[i]->name);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (!buf[0]) snprintf(buf, size, "none");
}

size_t gs_family_check_config(const gs_config *c, const char *file, int line, int col,
                              gs_diags *diags)
{
    if (!c || !diags) return 0;
    size_t before = diags->count + diags->dropped;
    const gs_family *f = gs_family_find(c->family);
    if (!f) {
        char known[256];
        gs_family_list(known, sizeof known);
        gs_diags_add(diags, GS_ERR_INVALID, file, line, col,
                     "family: unknown family '%s'; expected one of %s (the genN/ folders that "
                     "register a family)",
                     c->family ? c->family : "", known);
        return diags->count + diags->dropped - before;
    }
    uint32_t want = gs_config_features(c);
    for (int k = 0; k < GS_FEATURE_COUNT; k++) {
        uint32_t bit = 1u << k;
        if (!(want & bit) || (f->features & bit)) continue;
        char has[256];
        with_feature(bit, has, sizeof has);
        gs_diags_add(diags, GS_ERR_INVALID, file, line, col,
                     "family: %s enables %s, which family %s does not have (families with it: "
                     "%s)",
                     feature_keys[k], feature_names[k], f->name, has);
    }
    if (f->validate) f->validate(c, diags);
    return diags->count + diags->dropped - before;
}
