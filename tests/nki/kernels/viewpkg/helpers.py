import nki.language as nl

P_MAX = nl.tile_size.pmax  # at module level: the generation's, known before the import


def ceil_div(a, b):
    return (a + b - 1) // b
