#!/usr/bin/env python3
"""Regenerate the report test fixtures (tests/report/*.json) from real `gensweep run` jobs.

Until `gensweep sweep` writes results.json itself, this runs each check job with the
built binary, parses its text output, show-config and Perfetto trace, and writes results
files in the schema of results/RESULTS.md (version 1):

  check.json     every kernel x check shape on gen1-gen3 (real model numbers)
  baseline.json  check.json with a few times moved (a synthetic baseline, so the
                 "against the baseline" section has regressions and improvements to show)
  hostile.json   check.json with markup in every string a config or kernel can supply
  whatif.json, tuning-gen2.json, hostile-whatif.json
                 what-if (gen2, DMA bandwidth x0.5..x4 via --set) and tuning (matmul tn)
                 results in the formats of results/RESULTS.md

usage: python3 tests/report/make_fixtures.py build/dev/cli/gensweep
"""
import copy
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENS = ["gen1", "gen2", "gen3"]
ENGINES = ["tensor", "vector", "scalar", "gpsimd", "dma"]

UNITS = [  # suffix, factor, SI unit
    ("GiB/s", 2**30, "B/s"), ("TB/s", 1e12, "B/s"), ("GB/s", 1e9, "B/s"), ("MB/s", 1e6, "B/s"),
    ("GiB", 2**30, "B"), ("MiB", 2**20, "B"), ("KiB", 2**10, "B"), ("GB", 1e9, "B"),
    ("GHz", 1e9, "Hz"), ("MHz", 1e6, "Hz"), ("us", 1e3, "ns"), ("ns", 1, "ns"), ("B", 1, "B"),
]


def sh(*args):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True)


def parse_value(text):
    for suf, f, unit in UNITS:
        if text.endswith(suf):
            return float(text[: -len(suf)]) * f, unit
    try:
        return float(text), ""
    except ValueError:
        return None, text


def show_config(gs, gen):
    """Numeric params with their sources, in file order, from show-config's output."""
    out = sh(gs, "show-config", "configs/%s.yaml" % gen).stdout
    params, stack, sources, meta, in_sources = {}, [], {}, {}, False
    for line in out.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        code = line.split(" #", 1)[0].rstrip()
        indent = (len(code) - len(code.lstrip())) // 2
        key, _, rest = code.strip().partition(":")
        rest = rest.strip()
        stack = stack[:indent]
        if indent == 0:
            in_sources = key == "sources"
            if rest and key in ("name", "family", "description"):
                meta[key] = json.loads(rest)
        if in_sources and indent == 1:
            sources[key] = json.loads(rest)
            continue
        if not rest:
            stack.append(key)
            continue
        if rest.startswith('"'):
            rest = json.loads(rest)
        m = re.match(r"^([0-9.e+-]+[A-Za-z/]*) \[([^\]:]+)(?::\s*(.*))?\]$", rest)
        if not m:
            continue
        value, unit = parse_value(m.group(1))
        if value is None:
            continue
        src, note = m.group(2), m.group(3)
        params[".".join(stack + [key])] = {"value": value, "unit": unit, "src": src,
                                           "note": note}
    return meta, sources, params


def peaks(gs):
    res = {}
    for line in sh(gs, "list", "gens", "configs").stdout.splitlines()[1:]:
        f = line.split()
        if len(f) == 8 and f[0] in GENS:
            num = lambda s: None if s == "-" else float(s)
            res[f[0]] = {"bf16_tflops": num(f[3]), "fp32_tflops": num(f[4]),
                         "fp8_tflops": num(f[5]), "hbm_gbps": num(f[6]),
                         "sbuf_mib": num(f[7]), "cores": int(f[2])}
    return res


def timeline(trace_path, total_ns, max_slices=200):
    """Aggregate the trace per track: consecutive slices merge until a track has at most
    max_slices (count says how many instructions a slice stands for)."""
    with open(trace_path) as f:
        ev = json.load(f)["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("name") == "thread_name"}
    tracks = {}
    for e in ev:
        if e.get("ph") != "X":
            continue
        key = (e["pid"], e["tid"])
        start = e["ts"] * 1e3
        tracks.setdefault(key, []).append(
            [round(start, 3), round(start + e["dur"] * 1e3, 3), e["name"],
             os.path.relpath(e["args"].get("src", "?"), ROOT), 1])
    out = []
    for key in sorted(tracks):
        sl = sorted(tracks[key])
        group = max(1, -(-len(sl) // max_slices))
        merged = []
        for i in range(0, len(sl), group):
            g = sl[i:i + group]
            merged.append([g[0][0], g[-1][1], g[0][2] if len(g) == 1 else "%s+%d" % (g[0][2], len(g) - 1),
                           g[0][3], len(g)])
        pname = procs.get(key[0], "p%d" % key[0]).replace("core ", "c")
        out.append({"name": "%s %s" % (pname, names.get(key, "t%d" % key[1])), "slices": merged})
    return {"total_ns": total_ns, "tracks": out}


def run_job(gs, gen, kernel, variant, dtype, shape, trace_dir):
    shape_s = "x".join(map(str, shape))
    trace = os.path.join(trace_dir, "%s-%s-%s.json" % (gen, kernel, shape_s))
    r = sh(gs, "run", "--config", "configs/%s.yaml" % gen, "--kernel", kernel, "--shape",
           shape_s, "--dtype", dtype, "--trace", trace)
    t = r.stdout
    num = lambda pat: float(re.search(pat, t, re.M).group(1)) if re.search(pat, t, re.M) else None
    status = re.search(r"^status\s+(\S+)", t, re.M)
    status = status.group(1) if status else "error"
    job = {"id": "%s/%s/%s/%s/%s" % (gen, kernel, variant, dtype, shape_s), "generation": gen,
           "kernel": kernel, "variant": variant, "dtype": dtype, "shape": shape,
           "dims": list({"matmul": "MKN"}.get(kernel, "RC")), "params": {}, "mode": "functional",
           "status": status,
           "reason": re.sub(r"^gensweep run: (%s/)?" % re.escape(ROOT), "",
                            r.stderr.strip().splitlines()[-1]) if r.stderr.strip() else "",
           "stderr_tail": ""}
    time_us = num(r"^time\s+([0-9.]+) us")
    if time_us is None:
        job.update({k: None for k in ["time_ns", "flops", "arith_intensity", "achieved_tflops"]})
        job["error"] = {"checked": False}
        return job
    flops, hbm = num(r"^flops\s+(\S+)"), num(r"^hbm\s+(\S+)")
    engines, crit = {}, {}
    for e in ENGINES:
        m = re.search(r"^\s+%s\s+([0-9.]+)\s+[0-9.]+%%\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)" % e, t, re.M)
        if m:
            b, d, dm, p = (float(x) * 1e3 for x in m.groups())
            engines[e] = {"busy_ns": b, "stall_dep_ns": d, "stall_dma_ns": dm, "stall_port_ns": p,
                          "instructions": None}
    rf = re.search(r"^roofline\s+([0-9.]+) us bound \(compute ([0-9.]+), memory ([0-9.]+)\): "
                   r"actual/bound = ([0-9.]+)", t, re.M)
    bott = re.search(r"^bottleneck\s+(\S+)", t, re.M).group(1)
    chk = re.search(r"max abs err (\S+), max rel err (\S+) \(tol (\S+) \+ (\S+)\*", t)
    sp = re.search(r"^sbuf/psum\s+(\d+) / (\d+)", t, re.M)
    time_ns = time_us * 1e3
    job.update({
        "time_ns": time_ns, "instructions": int(num(r"^instructions (\d+)")),
        "cores_used": int(num(r"on (\d+) core")), "flops": flops,
        "tensor_flops": flops if kernel.startswith("matmul") else 0, "hbm_bytes": hbm,
        "dma_bytes": hbm, "arith_intensity": flops / hbm if hbm else None,
        "achieved_tflops": num(r"\(([0-9.]+) TFLOP/s achieved"),
        "peak_tflops": num(r"achieved of ([0-9.]+) peak\)"),
        "achieved_hbm_gbps": num(r"\(([0-9.]+) GB/s achieved"),
        "peak_hbm_gbps": num(r"GB/s achieved of ([0-9.]+) peak"),
        "compute_bound_ns": float(rf.group(2)) * 1e3, "memory_bound_ns": float(rf.group(3)) * 1e3,
        "roofline_ns": float(rf.group(1)) * 1e3, "roofline_ratio": float(rf.group(4)),
        "bottleneck": bott,
        "critical_path_ns": {e: (time_ns if e == bott else 0) for e in ENGINES + ["hbm"]},
        "engines": engines,
        "sbuf_high_water": int(sp.group(1)), "psum_high_water": int(sp.group(2)),
        "error": {"checked": bool(chk), "max_abs": float(chk.group(1)) if chk else None,
                  "max_rel": float(chk.group(2)) if chk else None,
                  "tol_abs": float(chk.group(3)) if chk else None,
                  "tol_rel": float(chk.group(4)) if chk else None, "worst": "C[0]",
                  "mismatches": 0 if status == "pass" else None},
        "timeline": timeline(trace, time_ns),
        "trace": "traces/%s" % os.path.basename(trace),
    })
    return job


def main():
    gs = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build/dev/cli/gensweep"
    pk = peaks(gs)
    cfgs = []
    for g in GENS:
        meta, sources, params = show_config(gs, g)
        cfgs.append({"name": g, "family": meta.get("family", g), "path": "configs/%s.yaml" % g,
                     "description": meta.get("description", ""), "sources": sources,
                     "params": params, "dtypes": [], "ops": [], "peaks": pk[g]})
    kernels = sh(gs, "list", "kernels", "--names").stdout.split()
    jobs, walls = [], {}
    with tempfile.TemporaryDirectory() as td:
        for g in GENS:
            for k in kernels:
                for s in sh(gs, "list", "kernels", "--check-shapes", k).stdout.split():
                    shape = [int(x) for x in s.split("x")]
                    jobs.append(run_job(gs, g, k, "naive" if k == "matmul" else "default",
                                        "bf16", shape, td))
                    walls[jobs[-1]["id"]] = 0.1
            # fp8 matmul: unsupported where the generation lacks fp8
            jobs.append(run_job(gs, g, "matmul", "naive", "fp8_e4m3", [128, 128, 512], td))
    jobs.sort(key=lambda j: j["id"])
    res_extra = {"whatif": [], "tuning": []}
    # what-if: sensitivity of the largest check shapes to DMA bandwidth and SBUF size on gen2
    for param in ["core.dma.bandwidth_per_engine", "chip.hbm.bandwidth"]:
        factors = [0.5, 1, 2, 4]
        curves = []
        for k, shape in [("matmul", "200x300x700"), ("elementwise_add", "256x1024")]:
            ts = []
            for f in factors:
                out = sh(gs, "run", "--config", "configs/gen2.yaml", "--kernel", k, "--shape",
                         shape, "--timing-only", "--set", "%s=x%g" % (param, f)).stdout
                ts.append(float(re.search(r"^time\s+([0-9.]+) us", out, re.M).group(1)) * 1e3)
            curves.append({"kernel": k, "variant": "naive" if k == "matmul" else "default",
                           "shape": [int(x) for x in shape.split("x")], "time_ns": ts})
        res_extra["whatif"].append({"generation": "gen2", "param": param, "factors": factors,
                                    "curves": curves})
    # tuning: matmul's tn on every generation
    for g in GENS:
        best, default = None, None
        for tn in [0, 128, 256, 512]:
            out = sh(gs, "run", "--config", "configs/%s.yaml" % g, "--kernel", "matmul",
                     "--shape", "200x300x700", "--timing-only", "--param", "tn=%d" % tn).stdout
            m = re.search(r"^time\s+([0-9.]+) us", out, re.M)
            if not m:
                continue
            t = float(m.group(1)) * 1e3
            if tn == 0:
                default = t
            if best is None or t < best[0]:
                best = (t, tn)
        res_extra["tuning"].append({"generation": g, "kernel": "matmul", "variant": "naive",
                                    "shape": [200, 300, 700], "default_time_ns": default,
                                    "best_time_ns": best[0], "best_params": {"tn": best[1]}})
    commit = sh("git", "rev-parse", "--short=12", "HEAD").stdout.strip()
    res = {"schema": "gensweep-results", "schema_version": 1,
           "tool": {"version": "0.1.0", "commit": commit}, "suite": "check", "complete": True,
           "shard": {"index": 1, "count": 1}, "overrides": [], "configs": cfgs, "jobs": jobs,
           "wall": {"started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:00:09Z",
                    "total_s": 9.0, "jobs": walls}}

    def dump(name, obj):
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")

    dump("check.json", res)
    # what-if and tuning in their own documented files (results/RESULTS.md)
    w = res_extra["whatif"][0]
    base_v = cfgs[1]["params"][w["param"]]["value"]
    whatif = {"schema": "gensweep-whatif", "schema_version": 1, "config": "gen2",
              "path": "configs/gen2.yaml", "param": w["param"],
              "unit": cfgs[1]["params"][w["param"]]["unit"], "base_value": base_v,
              "values": [{"label": "%gx" % f, "value": base_v * f, "results": "%gx" % f}
                         for f in w["factors"]], "jobs": []}
    for c in w["curves"]:
        ts, fs = c["time_ns"], w["factors"]
        sens = (math.log(ts[-1]) - math.log(ts[0])) / (math.log(fs[-1]) - math.log(fs[0]))
        whatif["jobs"].append({
            "id": "gen2/%s/%s/bf16/%s" % (c["kernel"], c["variant"], "x".join(map(str, c["shape"]))),
            "kernel": c["kernel"], "variant": c["variant"], "dtype": "bf16", "shape": c["shape"],
            "status": ["pass"] * len(ts), "time_ns": ts, "sensitivity": round(sens, 4)})
    dump("whatif.json", whatif)
    tuning = {"schema": "gensweep-tuning", "schema_version": 1, "generation": "gen2", "kernels": {}}
    for t in res_extra["tuning"]:
        if t["generation"] == "gen2":
            tuning["kernels"][t["kernel"]] = {
                "params": t["best_params"], "variant": t["variant"], "dtype": "bf16",
                "shape": t["shape"], "default_ns": t["default_time_ns"], "best_ns": t["best_time_ns"],
                "gain": t["default_time_ns"] / t["best_time_ns"]}
    dump("tuning-gen2.json", tuning)
    hw = copy.deepcopy(whatif)
    hw["param"] = "<script>alert(1)</script>"
    hw["jobs"][0]["kernel"] = "<b>k</b>"
    dump("hostile-whatif.json", hw)
    base = copy.deepcopy(res)
    for i, j in enumerate(base["jobs"]):
        if j.get("time_ns"):
            # every third job 10 % faster in the baseline (a regression now), every fifth 10 % slower
            j["time_ns"] *= 0.9 if i % 3 == 0 else (1.1 if i % 5 == 0 else 1.0)
    dump("baseline.json", base)
    bad = copy.deepcopy(res)
    evil = "<script>alert(1)</script>"
    bad["configs"][0]["name"] = evil
    bad["configs"][0]["description"] = "desc " + evil + " & \"quotes\" 'single'"
    bad["configs"][0]["sources"] = {evil: "javascript:alert(1)"}
    for j in bad["jobs"]:
        if j["generation"] == "gen1":
            j["generation"] = evil
    bad["jobs"][0]["status"] = "fail"
    bad["jobs"][0]["reason"] = "kernels/x.c:1: " + evil + "</td></tr></table>"
    bad["jobs"][0]["kernel"] = "<img src=x onerror=alert(2)>"
    bad["jobs"][1]["stderr_tail"] = "]]></script><script>alert(3)</script>"
    # variants: the hostile fixture also carries a second matmul variant (synthetic times), so
    # the variants chart has something to draw until the matmul ladder lands
    for j in [j for j in bad["jobs"] if j["kernel"] == "matmul" and j.get("time_ns")]:
        v = copy.deepcopy(j)
        v["variant"] = "blocked<b>"
        v["id"] = v["id"].replace("/naive/", "/blocked<b>/")
        v["time_ns"] *= 0.7
        bad["jobs"].append(v)
    bad["jobs"].sort(key=lambda j: j["id"])
    dump("hostile.json", bad)
    print("wrote %d jobs" % len(jobs))


if __name__ == "__main__":
    main()
