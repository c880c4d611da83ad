"""neuronxcc.nki: the older name of `nki` (same modules)."""
import sys

import nki as _nki
from nki import *  # noqa: F401,F403
from nki import jit, baremetal, benchmark, profile, simulate_kernel, language, isa, typing, \
    compiler  # noqa: F401

for _m in ("language", "isa", "typing", "compiler", "isa.constants", "language.constants"):
    sys.modules[__name__ + "." + _m] = sys.modules["nki." + _m]
