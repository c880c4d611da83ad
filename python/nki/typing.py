"""nki.typing: annotations kernels may use (no effect on tracing)."""


class _Any:
    def __getitem__(self, _):
        return self

    def __call__(self, *a, **k):
        return self


tensor = _Any()
mutable_tensor = _Any()
scalar = _Any()
