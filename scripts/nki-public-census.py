#!/usr/bin/python3
"""Census of public NKI kernels on gensweep's front end: how many import, and (for the kernels
given run specs) how many trace, run and pass a numpy reference on each generation.

usage: /usr/bin/python3 scripts/nki-public-census.py [--gensweep BIN] [--gens gen2,gen3]
           [--specs FILE.py] [--library GITDIR[@REV]] [-v] SOURCE...
SOURCE is GITDIR[@REV][:SUBDIR] (a local git mirror, e.g. one made by the `fetch` tool: the
files of REV, default HEAD, under SUBDIR are extracted with `git archive`) or a plain
directory. Nothing is fetched: no network. Public code stays outside the repository (a
temporary directory, removed at the end).

Kernels: every function of a .py file decorated with nki.jit / baremetal / benchmark /
simulate_kernel / profile (by name, read with ast: nothing is run to find them).
Import: the file imported alone by Debian's python3 with PYTHONPATH = the front end, the
file's directory (and its source root); a file that imports torch, torch_xla,
torch_neuronx or jax at module level is counted apart ("framework"): those are not kernels
files the front end can import without the framework.
Run: SPECS (default scripts/nki-public-specs.py) maps (file name, kernel) to --arg lists and a
reference; each is `gensweep nki run` on each generation; pass = exit 0 and status pass.
--library counts the NKI Library's core modules (nkilib.core.*) importing, the package root
put on PYTHONPATH as a user would, and runs the entry points SPECS.LIBRARY_SPECS lists (module,
kernel, tag, spec) from the module's own file, unmodified (or, for a spec with "wrapper", from
that launcher of scripts/nki-library-wrappers.py, which imports the entry point unmodified).
"""
import argparse
import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
DECOS = {"jit", "baremetal", "benchmark", "simulate_kernel", "profile"}
FRAMEWORKS = {"torch", "torch_xla", "torch_neuronx", "jax", "jaxlib", "scipy", "neuron_dtypes",
              "neuronxcc.nki._private"}


def extract(src, tmp, n):
    """A SOURCE as a directory (extracted with git archive when it names a git dir)."""
    spec, sub = (src.split(":", 1) + [""])[:2] if ":" in src else (src, "")
    gitdir, rev = (spec.split("@", 1) + ["HEAD"])[:2] if "@" in spec else (spec, "HEAD")
    if os.path.isdir(gitdir) and not os.path.exists(os.path.join(gitdir, "objects")):
        return os.path.join(gitdir, sub) if sub else gitdir, src
    out = os.path.join(tmp, f"src{n}")
    os.mkdir(out)
    cmd = ["git", "--git-dir", gitdir, "archive", rev] + ([sub] if sub else [])
    tar = subprocess.run(cmd, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", out], input=tar, check=True)
    sha = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "--short", rev],
                         capture_output=True, text=True).stdout.strip()
    label = f"{os.path.basename(os.path.dirname(gitdir.rstrip('/')))}@{sha}:{sub}"
    return os.path.join(out, sub) if sub else out, label


def kernels_of(path):
    try:
        tree = ast.parse(open(path, encoding="utf-8", errors="replace").read())
    except SyntaxError:
        return [], False
    ks, fw = [], False
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""]
            if any(n.split(".")[0] in FRAMEWORKS or n in FRAMEWORKS for n in names):
                fw = True
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                d = d.func if isinstance(d, ast.Call) else d
                name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
                if name in DECOS:
                    ks.append(node.name)
                    break
    return ks, fw


def env_for(*dirs):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), *dirs] +
                                      ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    return e


def try_import(path, extra=()):
    # as `gensweep nki run` imports a kernel file (a module of a package as that module)
    code = "import sys\nfrom gensweep.trace import load_module\nload_module(sys.argv[1])\n"
    p = subprocess.run([PY, "-c", code, path], capture_output=True, text=True, timeout=120,
                       env=env_for(os.path.dirname(path), *extra))
    last = (p.stderr.strip().splitlines() or [""])[-1]
    return p.returncode == 0, last


def load_specs(path):
    spec = importlib.util.spec_from_file_location("census_specs", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def run_spec(exe, gen, path, kernel, s, refs, extra=()):
    cmd = [exe, "nki", "run", path, "--kernel", s.get("kernel", kernel), "--config",
           os.path.join(ROOT, "configs", gen + ".yaml"), "--json",
           "--reference", f"{refs}:{s['ref']}"]
    for a in s.get("args", []):
        cmd += ["--arg", a]
    if s.get("grid"):
        cmd += ["--grid", s["grid"]]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                       env=env_for(os.path.dirname(path), *extra))
    rec = {}
    for ln in reversed(p.stdout.splitlines()):  # the record: a kernel may print lines too
        if ln.startswith("{"):
            try:
                rec = json.loads(ln)
            except ValueError:
                pass
            break
    status = rec.get("status") or f"exit {p.returncode}"
    why = rec.get("error") or (p.stderr.strip().splitlines() or [""])[-1]
    return status, rec.get("time_ns"), why


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--gensweep", default=os.environ.get("GENSWEEP") or
                    os.path.join(ROOT, "build", "release", "cli", "gensweep"))
    ap.add_argument("--gens", default="gen2,gen3")
    ap.add_argument("--specs", default=os.path.join(ROOT, "scripts", "nki-public-specs.py"))
    ap.add_argument("--library", help="GITDIR[@REV] of aws-neuron/nki-library")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    specs = load_specs(a.specs) if os.path.exists(a.specs) and not a.no_run else None
    tmp = tempfile.mkdtemp(prefix="nki-census-")
    tot = {"files": 0, "framework": 0, "kernels": 0, "import": 0, "kernels_import": 0}
    runs = {g: [0, 0] for g in a.gens.split(",")}
    try:
        for n, src in enumerate(a.sources):
            d, label = extract(src, tmp, n)
            for dp, _dn, fns in sorted(os.walk(d)):
                for fn in sorted(fns):
                    if not fn.endswith(".py"):
                        continue
                    path = os.path.join(dp, fn)
                    ks, fw = kernels_of(path)
                    if not ks:
                        continue
                    rel = os.path.relpath(path, d)
                    if fw:
                        tot["framework"] += 1
                        print(f"framework  {label} {rel} ({len(ks)} kernels)")
                        continue
                    tot["files"] += 1
                    tot["kernels"] += len(ks)
                    ok, why = try_import(path, (d,))
                    tot["import"] += ok
                    tot["kernels_import"] += len(ks) if ok else 0
                    print(f"{'import' if ok else 'FAIL  '}     {label} {rel} ({len(ks)} kernels)"
                          + ("" if ok else f": {why}"))
                    if not (ok and specs):
                        continue
                    for k in ks:
                        s = specs.SPECS.get((fn, k))
                        if s is None:
                            continue
                        for g in runs:
                            st, t, why = run_spec(a.gensweep, g, path, k, s, specs.__file__)
                            runs[g][0] += 1
                            runs[g][1] += st == "pass"
                            tm = f"{t / 1000:.1f} us" if t else "-"
                            print(f"  run {g} {k}: {st} {tm}" +
                                  ("" if st == "pass" else f" ({why})"))
        print(f"\nkernel files: {tot['files']} ({tot['kernels']} kernels) without a framework "
              f"import, {tot['framework']} with one (not counted)")
        print(f"import: {tot['import']}/{tot['files']} files, "
              f"{tot['kernels_import']}/{tot['kernels']} kernels")
        for g, (n_run, n_pass) in runs.items():
            if n_run:
                print(f"run+pass {g}: {n_pass}/{n_run} (kernels with a run spec)")
        if a.library:
            d, label = extract(a.library + ":src", tmp, "lib")
            root = os.path.join(d, "src", "nkilib_src") if os.path.isdir(
                os.path.join(d, "src", "nkilib_src")) else os.path.join(d, "nkilib_src")
            core = os.path.join(root, "nkilib", "core")
            mods, ok_n = [], 0
            for dp, _dn, fns in sorted(os.walk(core)):
                for fn in sorted(fns):
                    if fn.endswith(".py") and fn != "__init__.py":
                        rel = os.path.relpath(os.path.join(dp, fn), root)[:-3]
                        mods.append(rel.replace(os.sep, "."))
            fw_n = 0
            for m in list(mods):
                if kernels_of(os.path.join(root, *m.split(".")) + ".py")[1]:
                    mods.remove(m)
                    fw_n += 1
            # imported as `gensweep nki run` imports a kernel file: the generation's caps known
            # (module-level P_MAX = nl.tile_size.pmax), here the first of --gens
            caps = subprocess.run([a.gensweep, "nki", "caps", "--config", os.path.join(
                ROOT, "configs", a.gens.split(",")[0] + ".yaml")], capture_output=True,
                text=True, check=True).stdout
            code = ("import importlib,json,sys\nfrom gensweep import tracer\n"
                    "tracer._CAPS=json.loads(sys.argv[1])\nimportlib.import_module(sys.argv[2])\n")
            for m in mods:
                p = subprocess.run([PY, "-c", code, caps, m], capture_output=True, text=True,
                                   timeout=120, env=env_for(root))
                ok_n += p.returncode == 0
                if a.v or p.returncode:
                    last = (p.stderr.strip().splitlines() or [""])[-1]
                    print(f"{'import' if not p.returncode else 'FAIL  '}     {m}" +
                          ("" if not p.returncode else f": {last}"))
            print(f"NKI Library {label}: {ok_n}/{len(mods)} nkilib.core modules import "
                  f"({fw_n} with a framework import at module level not counted)")
            lib_specs = getattr(specs, "LIBRARY_SPECS", []) if specs else []
            lib_runs = {g: [0, 0] for g in runs}
            wrappers = os.path.join(ROOT, "scripts", "nki-library-wrappers.py")
            for mod, k, tag, s in lib_specs:
                path = os.path.join(root, *mod.split(".")) + ".py"
                if s.get("wrapper"):  # the entry point called by a launcher of ours
                    path, s = wrappers, dict(s, kernel=s["wrapper"])
                for g in lib_runs:
                    st, t, why = run_spec(a.gensweep, g, path, k, s, specs.__file__, (root,))
                    lib_runs[g][0] += 1
                    lib_runs[g][1] += st == "pass"
                    tm = f"{t / 1000:.1f} us" if t else "-"
                    print(f"  run {g} {mod}.{k} ({tag}): {st} {tm}" +
                          ("" if st == "pass" else f" ({why})"))
            for g, (n_run, n_pass) in lib_runs.items():
                if n_run:
                    print(f"NKI Library run+pass {g}: {n_pass}/{n_run} (entries with a run spec)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
