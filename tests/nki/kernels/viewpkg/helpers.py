P_MAX = 128


def ceil_div(a, b):
    return (a + b - 1) // b
