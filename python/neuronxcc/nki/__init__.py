"""neuronxcc.nki: the older name of `nki` (same modules)."""
import sys

import nki as _nki
from nki import *  # noqa: F401,F403
from nki import jit, baremetal, benchmark, profile, simulate_kernel, language, isa, typing  # noqa: F401

for _m in ("language", "isa", "typing"):
    sys.modules[__name__ + "." + _m] = getattr(_nki, _m)
