"""gensweep's NKI front end: `nki`, `nki.language`, `nki.isa`, `nki.typing` for kernels run on
gensweep's model of every generation (docs/NKI.md). Not the vendor's package: a kernel file runs
here unchanged, traced into a gensweep program instead of compiled for a device."""

from gensweep.kernel import jit, baremetal, benchmark, profile, simulate_kernel  # noqa: F401
from . import language, isa, typing, compiler  # noqa: F401
from gensweep.tracer import NKIError, DType as dtype  # noqa: F401

tensor = language.NkiTensor if hasattr(language, "NkiTensor") else None
