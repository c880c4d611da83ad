"""A helper package the tests put on PYTHONPATH (gensweep nki run must keep the user's path)."""
import nki.language as nl


def double(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nl.add(t, t))
    return out


def broken(x):
    rows = x.shape[0]
    return x.shape[rows]  # an IndexError of the helper's own Python: reported at this line
