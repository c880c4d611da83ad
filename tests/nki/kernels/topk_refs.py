"""float64 numpy references for tests/nki/kernels/topk_ops.py. Ties: equal values in the order
of their positions (a stable sort by descending value), as the instructions pair them."""
import numpy as np


def _top(x, k):
    order = np.argsort(-x, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(x, order, axis=1), order.astype(np.float64)


def top16(x):
    return _top(x, 16)


def top8_replace(x):
    v, i = _top(x, 8)
    # nc_match_replace8 pairs equal values with descending positions (it matches vals 7..0)
    for p in range(x.shape[0]):
        for val in np.unique(v[p]):
            cols = np.nonzero(v[p] == val)[0]
            i[p, cols] = np.sort(i[p, cols])[::-1]
    rest = x.copy()
    np.put_along_axis(rest, i.astype(np.int64), -5.0, axis=1)
    return v, i, rest


def find8(x):
    return _top(x, 8)[1]


def top16_wrong(x):
    v, i = _top(x, 16)
    return v, i[:, ::-1].copy()
