"""float64 numpy references for tests/nki/kernels/nki03_ops.py."""


def scale3(x, *_):
    return 3.0 * x


def scale2(x, *_):
    return 2.0 * x


def same(x, *_):
    return x


def double(x):
    return 2.0 * x


def enum_scaled(x, act, dt, k):
    assert act == "Act.SCALE" and dt == "nl.float32", (act, dt)
    return k * x
