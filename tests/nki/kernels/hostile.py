"""Kernels that must fail cleanly, each at a known line (the test reads the line numbers from
the `# line:` markers)."""
import os
import sys

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def out_of_range(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:600])  # line: out_of_range
    nl.store(out, value=t)
    return out


@nki.jit
def too_many_partitions(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((256, 64), dtype=x.dtype, buffer=nl.sbuf)  # line: too_many_partitions
    nisa.dma_copy(dst=t, src=x)
    nl.store(out, value=t)
    return out


@nki.jit
def psum_overflow(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    p = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.psum)
    q = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)  # line: psum_overflow
    nisa.nc_matmul(dst=p[:, 0:512], stationary=t[:, 0:128], moving=t)
    nisa.nc_matmul(dst=q, stationary=t[:, 0:128], moving=t)
    return out


@nki.jit
def dtype_mismatch(x):
    out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)  # line: dtype_mismatch
    return out


@nki.jit
def raises(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    assert x.shape[0] == 7, "this kernel wants 7 rows"  # line: raises
    return out


@nki.jit
def runaway(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    while True:
        nisa.memset(dst=t, value=0.0)  # line: runaway
    return out


@nki.jit
def shape_mismatch(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nl.add(x, y))  # line: shape_mismatch
    return out


def _mark(role):
    """For the tests that stop a run from outside: GS_TEST_MARK names a file that gets this
    process's pid and the directory named on its command line (the tracer's --caps, the
    reference's work directory), written once it runs (an event to wait for, not a time)."""
    mark = os.environ.get("GS_TEST_MARK")
    if not mark:
        return
    argv = sys.argv
    d = os.path.dirname(argv[argv.index("--caps") + 1]) if "--caps" in argv else argv[-1]
    with open(mark + ".part", "w") as f:
        f.write(f"{role} {os.getpid()} {d}\n")
    os.rename(mark + ".part", mark)


@nki.jit
def spin(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    _mark("tracer")
    while True:  # line: spin
        pass
    return out


@nki.jit
def hog(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    held = bytearray(3 << 30)  # line: hog
    nl.store(out, value=nl.load(x))
    return out if held else None


@nki.jit
def copy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


@nki.jit
def exits0(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    sys.exit(0)  # line: exits0
    return out


@nki.jit
def exits3(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    sys.exit(3)  # line: exits3
    return out


@nki.jit
def interrupted(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    raise KeyboardInterrupt  # line: interrupted
    return out


# Text that would drive a terminal: clear the screen, retitle the window, reverse what follows.
TERMINAL_NOISE = "\x1b[2J\x1b]0;owned\x07\u202eevil\u2066"


@nki.jit
def noisy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    raise ValueError(TERMINAL_NOISE)  # line: noisy
    return out


@nki.jit
def noisy_nki(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:999])  # line: noisy_nki
    nl.store(out, value=t)
    return out
