/*
 * speedup.c - matching jobs across generations and their speedups (see speedup.h). Both sides
 * are sorted by key and merged, so a pair of generations costs O(n log n).
 */
#include "speedup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/common.h"

typedef struct entry {
    char key[160];
    const cJSON *job;
    double t; /* time when passed with a positive time, else NAN */
} entry;

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

void gs_speedup_key(const cJSON *job, char *buf, size_t n)
{
    if (!n) return;
    size_t w = (size_t)snprintf(buf, n, "%s/%s/%s/", str_of(job, "kernel"), str_of(job, "variant"),
                                str_of(job, "dtype"));
    const cJSON *d;
    int first = 1;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(job, "shape"))
    {
        if (w >= n) break;
        w += (size_t)snprintf(buf + w, n - w, "%s%.0f", first ? "" : "x",
                              cJSON_IsNumber(d) ? d->valuedouble : 0.0);
        first = 0;
    }
}

const char *gs_kernel_class(const char *k)
{
    static const struct {
        const char *prefix, *cls;
    } tab[] = {{"matmul", "matmul"},
               {"bmm", "matmul"},
               {"mlp", "matmul"},
               {"attention", "attention"},
               {"softmax", "normalization"},
               {"layernorm", "normalization"},
               {"rmsnorm", "normalization"},
               {"reduce", "normalization"},
               {"elementwise", "memory"},
               {"fused_elementwise", "memory"},
               {"transpose", "memory"},
               {"embedding", "memory"},
               {"avgpool", "memory"},
               {"quantize", "memory"}};
    if (!k) return "other";
    for (size_t i = 0; i < GS_ARRAY_LEN(tab); i++)
        if (!strncmp(k, tab[i].prefix, strlen(tab[i].prefix))) return tab[i].cls;
    return "other";
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->key, ((const entry *)b)->key);
}

/* Entries of one generation, sorted, one per key (the fastest passing run of a key). */
static entry *collect(const cJSON *const *jobs, size_t n, const char *gen,
                      int (*keep)(const cJSON *, void *), void *ctx, size_t *count)
{
    *count = 0;
    entry *e = gs_calloc(n ? n : 1, sizeof *e);
    if (!e) return NULL;
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *j = jobs[i];
        if (!cJSON_IsObject(j) || strcmp(str_of(j, "generation"), gen) != 0) continue;
        if (keep && !keep(j, ctx)) continue;
        gs_speedup_key(j, e[c].key, sizeof e[c].key);
        e[c].job = j;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        e[c].t = !strcmp(str_of(j, "status"), "pass") && cJSON_IsNumber(t) &&
                         isfinite(t->valuedouble) && t->valuedouble > 0
                     ? t->valuedouble
                     : (double)NAN;
        c++;
    }
    qsort(e, c, sizeof *e, entry_cmp);
    size_t w = 0;
    for (size_t i = 0; i < c; i++) {
        if (w && !strcmp(e[w - 1].key, e[i].key)) {
            if (isfinite(e[i].t) && !(e[w - 1].t <= e[i].t)) e[w - 1] = e[i];
            continue;
        }
        e[w++] = e[i];
    }
    *count = w;
    return e;
}

int gs_speedup_compare(const cJSON *const *jobs, size_t n, const char *base, const char *other,
                       int (*keep)(const cJSON *, void *), void *ctx, gs_speedup_pair *out)
{
    memset(out, 0, sizeof *out);
    out->geomean = NAN;
    size_t nb = 0, no = 0;
    entry *b = collect(jobs, n, base, keep, ctx, &nb);
    entry *o = b ? collect(jobs, n, other, keep, ctx, &no) : NULL;
    out->m = o ? gs_calloc(GS_MIN(nb, no) + 1, sizeof *out->m) : NULL;
    if (!out->m) {
        gs_free(b);
        gs_free(o);
        return -1;
    }
    out->n_base = nb;
    out->n_other = no;
    double lsum = 0;
    double csum[GS_SPEEDUP_MAX_CLASSES] = {0};
    for (size_t i = 0, k = 0; i < nb && k < no;) {
        int c = strcmp(b[i].key, o[k].key);
        if (c < 0) {
            i++;
            continue;
        }
        if (c > 0) {
            k++;
            continue;
        }
        gs_speedup_match *m = &out->m[out->n_match++];
        m->base = b[i].job;
        m->other = o[k].job;
        m->speedup = isfinite(b[i].t) && isfinite(o[k].t) ? b[i].t / o[k].t : (double)NAN;
        if (isfinite(m->speedup)) {
            out->n_compared++;
            lsum += log(m->speedup);
            const char *cls = gs_kernel_class(str_of(b[i].job, "kernel"));
            int ci = 0;
            while (ci < out->n_cls && strcmp(out->cls[ci].name, cls) != 0)
                ci++;
            if (ci == out->n_cls && ci < GS_SPEEDUP_MAX_CLASSES) {
                out->cls[ci] = (gs_speedup_class){cls, 0, NAN, INFINITY, -INFINITY};
                out->n_cls++;
            }
            if (ci < out->n_cls) {
                gs_speedup_class *s = &out->cls[ci];
                s->n++;
                csum[ci] += log(m->speedup);
                if (m->speedup < s->min) s->min = m->speedup;
                if (m->speedup > s->max) s->max = m->speedup;
            }
        }
        i++;
        k++;
    }
    if (out->n_compared) out->geomean = exp(lsum / (double)out->n_compared);
    for (int c = 0; c < out->n_cls; c++)
        out->cls[c].geomean = exp(csum[c] / out->cls[c].n);
    gs_free(b);
    gs_free(o);
    return 0;
}

void gs_speedup_pair_free(gs_speedup_pair *p)
{
    if (!p) return;
    gs_free(p->m);
    p->m = NULL;
    p->n_match = 0;
}

int gs_param_direction(const char *unit)
{
    static const char *const more_is_faster[] = {"B", "B/ns", "B/s", "Hz", "count"};
    static const char *const more_is_slower[] = {"ns", "cycles"};
    if (!unit) return 0;
    for (size_t i = 0; i < GS_ARRAY_LEN(more_is_faster); i++)
        if (!strcmp(unit, more_is_faster[i])) return -1;
    for (size_t i = 0; i < GS_ARRAY_LEN(more_is_slower); i++)
        if (!strcmp(unit, more_is_slower[i])) return 1;
    return 0;
}

int gs_sensitivity_steps(const double *v, const double *t, int n, int expect, double *steps,
                         int *non_monotonic, int *inversions)
{
    *non_monotonic = 0;
    *inversions = 0;
    if (n > GS_SPEEDUP_MAX_STEPS + 1) return -1;
    double pv[GS_SPEEDUP_MAX_STEPS + 1], pt[GS_SPEEDUP_MAX_STEPS + 1];
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!(v[i] > 0) || !(t[i] > 0) || !isfinite(v[i]) || !isfinite(t[i])) continue;
        int k = m++; /* insertion sort by value: n is small */
        while (k > 0 && pv[k - 1] > v[i]) {
            pv[k] = pv[k - 1];
            pt[k] = pt[k - 1];
            k--;
        }
        pv[k] = v[i];
        pt[k] = t[i];
    }
    int up = 0, down = 0, ns = 0;
    for (int i = 0; i + 1 < m; i++) {
        if (pv[i + 1] == pv[i]) continue;
        double dl = log(pt[i + 1] / pt[i]);
        steps[ns++] = dl / log(pv[i + 1] / pv[i]);
        up |= dl > log(1.01);
        down |= dl < -log(1.01);
        *inversions += (expect < 0 && dl > log(1.01)) || (expect > 0 && dl < -log(1.01));
    }
    *non_monotonic = up && down;
    return ns;
}
