"""gensweep's Python side: the NKI front end's tracer and `nki_run` (docs/NKI.md)."""


def nki_run(*args, **kwargs):
    """Run an NKI kernel on a generation's model (gensweep.api.nki_run)."""
    from .api import nki_run as run
    return run(*args, **kwargs)
