"""Run a numpy reference for `gensweep nki run --reference` (called by the C side).

usage: python -m gensweep.refrun FILE.py FUNC DIR
DIR/manifest lists `args JSON` (the kernel's arguments: {"t": i} input i, {"v": literal}),
`in I D0 D1..` and `out J D0 D1..` ({"s": text}: an argument that is no literal, an
enum or a dtype, passed as its str(); {"o": j}: an argument the kernel writes, output j,
passed as zeros of its shape); inputs are DIR/inI.f64 (float64). The function's result
(an array or a tuple of arrays, one per output) is written as DIR/outJ.f64.
"""
import ast
import json
import os
import sys
import urllib.parse

import numpy as np

from .trace import load_module


def where(exc, path):
    """FILE:LINE of the innermost frame of exc in the reference file (else its last frame)."""
    tb, last, mine = exc.__traceback__, None, None
    while tb is not None:
        last = tb
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
            mine = tb
        tb = tb.tb_next
    at = mine or last
    if at is None:
        return path
    return f"{at.tb_frame.f_code.co_filename if at is not mine else path}:{at.tb_lineno}"


def main(argv):
    path, func, d = argv
    ins, outs, args = [], [], None
    with open(f"{d}/manifest") as f:
        for line in f:
            parts = line.split()
            if parts[0] == "args":
                args = json.loads(urllib.parse.unquote(parts[1]))
            elif parts[0] == "in":
                shape = tuple(int(x) for x in parts[2:])
                ins.append(np.fromfile(f"{d}/in{parts[1]}.f64", dtype="<f8").reshape(shape))
            else:
                outs.append(tuple(int(x) for x in parts[2:]))
    try:
        mod = load_module(path)
    except SystemExit as e:  # not the reference's result: a failure with a message (exit 1)
        sys.exit(f"{path}: the reference file called sys.exit({e.code!r}) while it was imported")
    fn = getattr(mod, func, None)
    if fn is None:
        sys.exit(f"{path}: no function {func}")
    call = [ins[a["t"]] if "t" in a else np.zeros(outs[a["o"]]) if "o" in a else
            a["s"] if "s" in a else ast.literal_eval(a["v"]) for a in args] if args else ins
    try:
        res = fn(*call)
    except SystemExit as e:
        sys.exit(f"{path}:{func} called sys.exit({e.code!r}) instead of returning")
    except Exception as e:  # one line, at the reference's own line: not a traceback of ours
        sys.exit(f"{where(e, path)}: {type(e).__name__}: {e}")
    if not isinstance(res, (tuple, list)):
        res = (res,)
    if len(res) != len(outs):
        sys.exit(f"{path}:{func} returned {len(res)} arrays for {len(outs)} outputs")
    for j, (r, shape) in enumerate(zip(res, outs)):
        r = np.asarray(r, dtype=np.float64)
        if r.size != int(np.prod(shape)):
            sys.exit(f"{path}:{func}: output {j} has shape {r.shape}, the kernel's is {shape}")
        np.ascontiguousarray(r.reshape(shape)).astype("<f8").tofile(f"{d}/out{j}.f64")


if __name__ == "__main__":
    main(sys.argv[1:])
