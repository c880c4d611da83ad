#!/usr/bin/env python3
"""Make a large results file out of real ones, to measure `gensweep report` (and anything else
that reads results) at a job count no sweep here runs: every job of the RESULTS files (e.g. a
check and a perf sweep's; the first file gives everything but the jobs) is repeated
with its last shape dimension scaled by 2, 3, ... (the same on every generation, so each copy
still has its reference jobs on the other generations; a copy whose id another job has is left
out), until the file holds JOBS jobs. Sorted
by id, as a sweep writes them; the figures of a copy are its original's.

usage: scripts/synth-results.py JOBS OUT.json RESULTS.json...
"""
import json
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    want, out, srcs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    doc = None
    base = []
    for src in srcs:
        with open(src, encoding="utf-8") as f:
            d = json.load(f)
        doc = doc or d
        base += d["jobs"]
    if not base:
        sys.exit("synth-results: no jobs in " + " ".join(srcs))
    jobs = []
    seen = set()
    doc["suite"] = "all" if len(srcs) > 1 else doc["suite"]
    k = 1
    while len(jobs) < want:
        for j in base:
            if len(jobs) == want:
                break
            c = dict(j)
            if k > 1:
                shape = list(j["shape"])
                shape[-1] = shape[-1] * k
                c["shape"] = shape
                old = "x".join(str(d) for d in j["shape"])
                new = "x".join(str(d) for d in shape)
                parts = j["id"].split("/")
                parts[4] = parts[4].replace(old, new, 1) if parts[4] == old else new
                c["id"] = "/".join(parts)
            if c["id"] in seen:
                continue
            seen.add(c["id"])
            jobs.append(c)
        k += 1
    jobs.sort(key=lambda j: j["id"])
    doc["jobs"] = jobs
    doc["planned_jobs"] = len(jobs)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
