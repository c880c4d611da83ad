#!/usr/bin/python3
"""Regenerate the "Measured" table of workloads/README.md: every shipped workload on each
generation with `gensweep workload run --json -`, as Markdown on stdout (layer time, tokens/s
for decode, the chip bound and actual/chip bound, the cores of the heaviest step).

usage: scripts/workloads-table.py [--gensweep BIN] [--gens gen2,gen3,gen4] [-j N]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile


def fmt_time(ns):
    if ns >= 1e6:
        return "%.3g ms" % (ns / 1e6)
    return "%.0f us" % (ns / 1e3)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gensweep", default=os.path.join(root, "build/release/cli/gensweep"))
    ap.add_argument("--gens", default="gen2,gen3,gen4")
    ap.add_argument("-j", type=int, default=2)
    o = ap.parse_args()
    if not os.access(o.gensweep, os.X_OK):
        sys.exit("workloads-table: %s is not an executable (--gensweep)" % o.gensweep)
    gens = [g for g in o.gens.split(",") if g]
    files = sorted(glob.glob(os.path.join(root, "workloads", "*.yaml")))
    print("| workload | " + " | ".join(gens) + " |")
    print("|---|" + "---|" * len(gens))
    with tempfile.TemporaryDirectory(prefix="gs-wl-table.") as out:
        for f in files:
            cells = []
            name = os.path.basename(f)[:-5]
            for g in gens:
                cfg = os.path.join(root, "configs", g + ".yaml")
                p = subprocess.run([o.gensweep, "workload", "run", f, "--config", cfg,
                                    "-j%d" % o.j, "--out", os.path.join(out, name + "-" + g),
                                    "--json", "-"], capture_output=True, text=True)
                try:
                    doc = json.loads(p.stdout)
                except ValueError:
                    sys.exit("workloads-table: %s on %s: no JSON (exit %d): %s"
                             % (name, g, p.returncode, p.stderr.strip()[:300]))
                res = doc["results"][0] if "results" in doc else doc
                t = res.get("time_ns")
                if not res.get("complete") or t is None:
                    cells.append("incomplete")
                    continue
                cell = fmt_time(t)
                if res.get("tokens_per_s_per_layer"):
                    cell += " (%.0f tok/s)" % res["tokens_per_s_per_layer"]
                cb = res.get("chip_bound_ns")
                if cb:
                    cell += "; chip bound %s, %.2fx" % (fmt_time(cb), t / cb)
                heavy = max(res["rows"], key=lambda r: r.get("time_ns") or 0)
                cell += "; %s %s on %d core%s" % (heavy["step"], heavy["variant"], heavy["cores"],
                                                  "s" if heavy["cores"] > 1 else "")
                cells.append(cell)
            print("| `%s` | %s |" % (name, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
