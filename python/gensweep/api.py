"""gensweep.nki_run: run an NKI kernel on a generation's model from Python (docs/NKI.md).

The kernel is traced in this process; the program then runs in a `gensweep nki replay` child
(SystemC elaborates once per process, so every launch gets its own), and the outputs and the
job record (results/RESULTS.md) come back.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import tracer
from .trace import trace_call, finish, UsageError


class NkiRunResult:
    """outputs: the output tensors (float64 numpy arrays, in the kernel's return order);
    record: the job record (dict); status: its status string."""

    def __init__(self, outputs, record):
        self.outputs, self.record = outputs, record
        self.status = record.get("status")

    def __repr__(self):
        return f"<NkiRunResult {self.status} {len(self.outputs)} output(s)>"


def find_gensweep():
    """GENSWEEP, else the repository's release or dev build, else gensweep on PATH."""
    env = os.environ.get("GENSWEEP")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for b in ("release", "dev", "asan"):
        p = os.path.join(root, "build", b, "cli", "gensweep")  # cli/: where the binary is built
        if os.access(p, os.X_OK):
            return p
    p = shutil.which("gensweep")
    if p:
        return p
    raise RuntimeError("gensweep binary not found: set GENSWEEP or build the release preset")


def _config_path(config):
    if os.path.exists(config):
        return config
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = os.path.join(root, "configs", config + ".yaml")
    return p if os.path.exists(p) else config


def nki_run(kernel, args, config=None, kwargs=None, seed=1, timing_only=False, sets=(),
            name=None, gensweep=None, schedule=True):
    """Trace kernel(*args, **kwargs) (numpy arrays become HBM inputs with their values) and run
    it on config (a path or a generation name such as "gen3"; default GENSWEEP_CONFIG or gen3).
    Returns an NkiRunResult; raises UsageError for arguments the tracer cannot take."""
    exe = gensweep or find_gensweep()
    config = _config_path(config or os.environ.get("GENSWEEP_CONFIG", "gen3"))
    cmd = [exe, "nki", "caps", "--config", config]
    for s in sets:
        cmd += ["--set", s]
    caps = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    ctx = tracer.Ctx(caps)
    ctx.schedule = schedule
    tmp = tempfile.mkdtemp(prefix="gensweep-nki-")
    try:
        targs = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                dt = tracer.dtype_of(a.dtype.name if a.dtype.name != "float64" else "float32")
                t = tracer.HbmTensor(ctx, f"arg{i}", a.shape, dt, "in")
                t.data_path = os.path.join(tmp, f"arg{i}.f64")
                np.ascontiguousarray(a, dtype="<f8").tofile(t.data_path)
                targs.append(t)
            else:
                targs.append(a)
        fn = getattr(kernel, "fn", kernel)
        files = {os.path.abspath(fn.__code__.co_filename)} if hasattr(fn, "__code__") else set()
        result = trace_call(ctx, kernel, targs, files, kwargs)
        prog = os.path.join(tmp, "kernel.gsk")
        order = finish(ctx, prog, name or getattr(kernel, "__name__", "kernel"), result, targs,
                       None)
        outdir = os.path.join(tmp, "out")
        os.mkdir(outdir)
        cmd = [exe, "nki", "replay", prog, "--config", config, "--json", "--seed", str(seed)]
        for s in sets:
            cmd += ["--set", s]
        cmd += ["--timing-only"] if timing_only else ["--outputs", outdir]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if not p.stdout.strip():
            raise RuntimeError(f"gensweep nki replay failed ({p.returncode}): {p.stderr.strip()}")
        record = json.loads(p.stdout)
        outputs = []
        outs = [t for t in order if t.kind != "in" and os.path.exists(
            os.path.join(outdir, f"{t.name}.f64"))]
        for t in outs:
            outputs.append(np.fromfile(os.path.join(outdir, f"{t.name}.f64"),
                                       dtype="<f8").reshape(t.shape))
        return NkiRunResult(outputs, record)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["nki_run", "NkiRunResult", "UsageError"]
