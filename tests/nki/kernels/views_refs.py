"""numpy references for tests/nki/kernels/views_ops.py."""


def ap_window(x):
    return x[:, 16:48], x[:, 1::2]


def ap_rows(x):
    return x[64:128, :]


def reshape_permute(x):
    return x.reshape(x.shape[0], 4, -1).transpose(0, 2, 1)


def view_methods(x):
    return x[1][:, 8:40] + x[1][:, 0:1]


def cumsum_rows(x):
    return x.cumsum(axis=-1)


def wrong_ap_window(x):
    return x[:, 15:47], x[:, 1::2]


def mm_hoisted(lhsT, rhs):
    return lhsT.T @ rhs


def ap_unused_out_of_range(x):
    return x
