"""Trace an NKI kernel file into a gensweep program (.gsk): what `gensweep nki run` calls.

usage: python -m gensweep.trace --caps CAPS.json --out PROG.gsk [--arg NAME=VALUE]... FILE.py KERNEL
The program names no reference: the C side runs the one its command line gives (`nki run
--reference`, `nki replay --reference`), never code a program file names.
Exit status: 0 traced (a kernel that stopped on an error or an unsupported operation is traced
up to there, with a `fail` line naming its file:line), 2 usage or input error.
"""
import argparse
import ast
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
import urllib.parse

from . import tracer
from .tracer import NKIError, HbmTensor

_ARRAY = re.compile(r"^([A-Za-z0-9_]+):([0-9]+(?:x[0-9]+)*)(?::([-+0-9.eE]+):([-+0-9.eE]+))?$")


class UsageError(Exception):
    pass


class OutputError(Exception):
    """The program could not be written (a full disk): a failure, exit 1."""


_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def term(s):
    """Text for a terminal, as the C side's gs_sb_term: control characters (C0, DEL, C1) and
    bidirectional controls as \\xNN of their UTF-8 bytes, so a kernel's messages and paths can
    never move the cursor, retitle the window or reorder what follows them."""
    out = []
    for ch in str(s):
        c = ord(ch)
        if c < 0x20 or 0x7F <= c <= 0x9F or c in _BIDI or 0xD800 <= c <= 0xDFFF:
            try:  # a lone surrogate: a byte of a path that was not UTF-8
                raw = ch.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raw = ch.encode("utf-8", "surrogatepass")
            out.append("".join(f"\\x{b:02x}" for b in raw))
        else:
            out.append(ch)
    return "".join(out)


def say(msg):
    print("gensweep nki: " + term(msg), file=sys.stderr)


def _package_of(path):
    """(root, dotted name) when the file uses relative imports and sits in a package (its
    directory and those above holding __init__.py); else None."""
    try:
        tree = ast.parse(open(path, encoding="utf-8", errors="replace").read())
    except (SyntaxError, ValueError):
        return None
    if not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree)):
        return None
    parts = [os.path.splitext(os.path.basename(path))[0]]
    d = os.path.dirname(path)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parts.insert(0, os.path.basename(d))
        d = os.path.dirname(d)
    if len(parts) == 1 or not all(p.isidentifier() for p in parts):
        return None
    return d, ".".join(parts)


def load_module(path):
    """Import a kernel file as a module, its directory first on sys.path (for its imports)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    d = os.path.dirname(path)
    pkg = _package_of(path)
    if pkg:  # a module of a package (relative imports): imported as one, as `python -m` does
        root, dotted = pkg
        if root not in sys.path:
            sys.path.insert(0, root)
        return importlib.import_module(dotted)
    if d not in sys.path:
        sys.path.insert(0, d)
    name = "nki_kernel_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def parse_arg(ctx, name, text):
    """NAME=DTYPE:SHAPE[:LO:HI] (an HBM input) or NAME=PYTHON_LITERAL."""
    m = _ARRAY.match(text)
    if m and (m.group(1) in tracer.DTYPES or m.group(1) in tracer._ALIASES):
        dt = tracer.dtype_of(m.group(1))
        shape = tuple(int(x) for x in m.group(2).split("x"))
        if any(s <= 0 for s in shape) or len(shape) > 4:
            raise UsageError(f"--arg {name}: shape {m.group(2)} (1 to 4 dims, each > 0)")
        lo, hi = (float(m.group(3)), float(m.group(4))) if m.group(3) else (
            (-1.0, 1.0) if dt.is_float else (0.0, 100.0))
        if not lo < hi:
            raise UsageError(f"--arg {name}: empty value range [{lo}, {hi})")
        t = HbmTensor(ctx, name, shape, dt, "in")
        t.range = (lo, hi, 0 if dt.is_float else 1)
        return t
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise UsageError(f"--arg {name}={text}: neither DTYPE:SHAPE (dtypes: "
                         f"{', '.join(sorted(tracer.DTYPES))}) nor a Python literal")


def bind(fn, ctx, arg_texts):
    """The kernel's positional arguments from --arg NAME=VALUE, by parameter name."""
    target = getattr(fn, "fn", fn)
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        raise UsageError("the kernel's parameters cannot be read")
    given = {}
    for a in arg_texts:
        if "=" not in a:
            raise UsageError(f"--arg {a}: expected NAME=VALUE")
        k, v = a.split("=", 1)
        if k in given:
            raise UsageError(f"--arg {k} given twice")
        given[k] = v
    names = [p.name for p in params]
    for k in given:
        if k not in names:
            raise UsageError(f"--arg {k}: the kernel has no parameter {k} (it has: "
                             f"{', '.join(names) or 'none'})")
    args, refargs, n_in = [], [], 0
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in given:
            v = parse_arg(ctx, p.name, given[p.name])
        elif p.default is not p.empty:
            v = p.default
        else:
            raise UsageError(f"the kernel's parameter {p.name} needs --arg {p.name}=...")
        args.append(v)
        if isinstance(v, HbmTensor):
            refargs.append({"t": n_in})
            n_in += 1
        else:
            refargs.append(_refarg(v))
    return args, refargs


def _refarg(v):
    """How a non-tensor argument reaches the reference: a Python literal as itself; anything
    else (an enum default such as `act=ActFn.GELU`, a dtype such as `nl.bfloat16`) as its
    str(), so the arguments after it keep their positions."""
    text = repr(v)
    try:
        ast.literal_eval(text)
        return {"v": text}
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return {"s": str(v)}


_LIB_DIRS = tuple(sorted({os.path.join(p, "lib") + os.sep for p in (
    sys.prefix, sys.base_prefix, sys.exec_prefix)} | {"/usr/lib/python3/"}))


def _kernel_frame(tb, files):
    """The innermost traceback frame of the user's code: the kernel's files or a helper
    module they import (a kernel library on PYTHONPATH), not the front end, Python's standard
    library or installed packages (numpy); else the innermost in the kernel's own files."""
    best = None
    for fs in traceback.extract_tb(tb):
        fn = fs.filename
        if fn in files or not (fn.startswith(tracer._PKG_DIRS) or fn.startswith(_LIB_DIRS)
                               or fn.startswith("<")):
            best = (fn, fs.lineno)
    if best is None:
        for fs in traceback.extract_tb(tb):
            if fs.filename in files:
                best = (fs.filename, fs.lineno)
    return best or ("<kernel>", 0)


def parse_grid(text):
    """--grid AxB.. (or A,B..): the SPMD launch grid, each dimension a positive integer."""
    parts = text.replace(",", "x").split("x")
    try:
        grid = tuple(int(p) for p in parts)
    except ValueError:
        grid = ()
    if not grid or any(g <= 0 for g in grid) or len(grid) > 4:
        raise UsageError(f"--grid {text}: expected AxB.. (1 to 4 positive integers, e.g. 4x2)")
    return grid


def trace(caps, path, kernel_name, arg_texts, out, cap=None, schedule=True, grid=None):
    """Trace kernel_name of path into out. Returns the list of HBM tensors in program order."""
    ctx = tracer.Ctx(caps, cap or tracer.DEFAULT_INSTRUCTION_CAP)
    ctx.schedule = schedule
    tracer._CAPS = caps
    mod = load_module(path)
    fn = getattr(mod, kernel_name, None)
    if fn is None or not callable(fn):
        raise UsageError(f"{path}: no kernel or function named {kernel_name}")
    args, refargs = bind(fn, ctx, arg_texts)
    if grid:
        from .kernel import Kernel
        if not isinstance(fn, Kernel):
            raise UsageError(f"--grid: {kernel_name} is not an @nki.jit kernel (a launcher "
                             "function gives its own grid: kernel[grid](...))")
        fn = fn[parse_grid(grid)]
    result = trace_call(ctx, fn, args, {os.path.abspath(path)})
    return finish(ctx, out, kernel_name, result, args, refargs)


def trace_call(ctx, fn, args, files, kwargs=None):
    """Run the kernel under ctx; an error in the kernel becomes a `fail` at its line."""
    tracer._CTX = ctx
    try:
        return fn(*args, **(kwargs or {}))
    except NKIError as e:
        ctx.ops.append(("fail", ctx.core, e.status, e.where, str(e)))
    except (RecursionError, MemoryError):
        raise  # not the kernel's error at a line: the front end's limits (main)
    except SystemExit as e:  # sys.exit() in the kernel: it never returned its outputs
        where = _kernel_frame(e.__traceback__, files)
        ctx.ops.append(("fail", ctx.core, "invalid", where,
                        f"the kernel called sys.exit({e.code!r}) instead of returning"))
    except Exception as e:  # an error of the kernel's own Python: at its line
        where = _kernel_frame(e.__traceback__, files)
        ctx.ops.append(("fail", ctx.core, "invalid", where, f"{type(e).__name__}: {e}"))
    finally:
        tracer._CTX = None
    return None


def finish(ctx, out, name, result, args, refargs):
    returned = []
    if isinstance(result, HbmTensor):
        returned = [result]
    elif isinstance(result, (tuple, list)):
        returned = [r for r in result if isinstance(r, HbmTensor)]
    for t in returned:
        t.written = True
    for t in args:
        if isinstance(t, HbmTensor) and not (t.read or t.written):
            t.read = True  # an unused input is still an input
    try:
        order = tracer.write_program(ctx, out, name, returned, args)
        if refargs is not None:  # how a reference given at run or replay is called
            for j, t in enumerate(args):  # an argument the kernel writes is an output
                if isinstance(t, HbmTensor) and j < len(refargs):
                    refargs[j] = ({"t": ctx.prog_ins.index(t)} if t in ctx.prog_ins else
                                  {"o": ctx.prog_outs.index(t)} if t in ctx.prog_outs else
                                  refargs[j])
            with open(out, "a") as fh:
                fh.write("refargs " + urllib.parse.quote(json.dumps(refargs), safe="") + "\n")
    except NKIError as e:
        raise UsageError(f"{e.where[0]}:{e.where[1]}: {e}")
    except OSError as e:  # a full disk: the program not written (the caller removes it)
        raise OutputError(f"{out}: cannot write the traced program: {e.strerror or e}")
    return order


def main(argv=None):
    ap = argparse.ArgumentParser(prog="gensweep.trace")
    ap.add_argument("--caps", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--max-instructions", type=int, default=tracer.DEFAULT_INSTRUCTION_CAP)
    a0 = argv if argv is not None else sys.argv[1:]
    ap.add_argument("--no-schedule", action="store_true")
    ap.add_argument("--grid")
    ap.add_argument("file")
    ap.add_argument("kernel")
    a = ap.parse_args(a0)
    if a.max_instructions < 1:
        say("--max-instructions must be positive")
        return 2
    try:
        with open(a.caps) as f:
            caps = json.load(f)
        if a.grid:
            parse_grid(a.grid)  # a usage error before the kernel file is imported
        trace(caps, a.file, a.kernel, a.arg, a.out, a.max_instructions, not a.no_schedule,
              a.grid)
    except MemoryError as e:
        # the address-space limit (--mem-limit) reached: out of memory, as a job's (exit 1)
        where = _kernel_frame(e.__traceback__, {os.path.abspath(a.file)})
        say(f"{where[0]}:{where[1]}: the front end ran out of memory (--mem-limit)")
        return 1
    except OutputError as e:
        say(str(e))
        return 1
    except UsageError as e:
        say(str(e))
        return 2
    except SyntaxError as e:
        say(f"{e.filename}:{e.lineno}: {e.msg}")
        return 2
    except ImportError as e:
        say(f"{a.file}: cannot import: {e}")
        return 2
    except SystemExit as e:  # sys.exit() while the kernel file was imported
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{tb[-1].filename}:{tb[-1].lineno}: " if tb else ""
        say(f"{where}the kernel file called sys.exit({e.code!r}) while it was imported")
        return 2
    except NKIError as e:  # an NKI call at import time (module level): at its line
        say(f"{e.where[0]}:{e.where[1]}: {e}")
        return 2
    except Exception as e:  # the file (or a helper module it imports) failed at import time
        w = _kernel_frame(e.__traceback__, {os.path.abspath(a.file)})
        say(f"{w[0]}:{w[1]}: {type(e).__name__}: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
