#!/usr/bin/python3
"""clang-tidy over a list of sources, with results cached per file.

Usage: tidy_cached.py BUILD_DIR CACHE_DIR FILE...

Each file is checked with the compile command that BUILD_DIR/compile_commands.json gives it. The
cache key of a file is the SHA-256 of its preprocessed text (the compiler run with -E and the
file's own flags: every header it includes is in that text), its flags (both with the
repository root's path taken out, so that a clone elsewhere hits the same cache), the .clang-tidy file and
the clang-tidy version. Only a clean result is cached (an empty file named by the key in
CACHE_DIR); a file with findings is checked again next time. So a hit means: this exact text,
with these flags and these checks, was clean before. A miss only costs time.

Prints each file's findings; exit 0 when every file is clean, 1 otherwise, 2 on bad input.
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys


def tidy_version():
    out = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True, check=True)
    return out.stdout


def preprocess_command(entry):
    """The file's compile command with -E to stdout instead of -c -o OBJ."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-MF") or a.startswith("-MT") \
                or a.startswith("-MQ"):
            if a in ("-MF", "-MT", "-MQ"):
                skip = True
            continue
        out.append(a)
    return out + ["-E", "-o", "-"], args


def check(entry, build_dir, cache_dir, config_text, version):
    src = entry["file"]
    cmd, flags = preprocess_command(entry)
    pre = subprocess.run(cmd, cwd=entry["directory"], capture_output=True)
    # paths relative to the repository root: a fresh clone in another folder hits the same cache
    # (the root also appears without its slash, as in -DGS_SOURCE_DIR="/path/to/clone")
    root = os.getcwd().rstrip("/").encode()
    h = hashlib.sha256()
    for part in (version.encode(), config_text, "\0".join(flags).encode(), pre.stdout):
        h.update(part.replace(root + b"/", b"").replace(root, b"<root>"))
        h.update(b"\0")
    key = os.path.join(cache_dir, h.hexdigest())
    if pre.returncode == 0 and os.path.exists(key):
        return src, True, "", True
    r = subprocess.run(["clang-tidy", "-p", build_dir, "--quiet", "--warnings-as-errors=*", src],
                       capture_output=True, text=True)
    ok = r.returncode == 0
    if ok and pre.returncode == 0:
        with open(key, "w", encoding="ascii"):
            pass
    return src, ok, r.stdout + r.stderr, False


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build_dir, cache_dir, files = argv[0], argv[1], argv[2:]
    try:
        with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
            entries = {os.path.realpath(e["file"]): e for e in json.load(f)}
        with open(".clang-tidy", "rb") as f:
            config_text = f.read()
    except (OSError, ValueError) as e:
        print(f"tidy_cached: {e}", file=sys.stderr)
        return 2
    os.makedirs(cache_dir, exist_ok=True)
    version = tidy_version()
    to_check = []
    for f in files:
        e = entries.get(os.path.realpath(f))
        if e is None:
            print(f"tidy_cached: {f}: not in {build_dir}/compile_commands.json", file=sys.stderr)
            return 2
        to_check.append(e)
    bad, hits = 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = [pool.submit(check, e, build_dir, cache_dir, config_text, version) for e in to_check]
        for fut in futures:
            src, ok, text, hit = fut.result()
            hits += hit
            if not ok:
                bad += 1
                sys.stdout.write(text)
    print(f"clang-tidy: {len(to_check)} sources, {hits} cached clean, {len(to_check) - hits} checked, "
          f"{bad} with findings", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
