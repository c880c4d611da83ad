"""A kernel package with relative imports, as the NKI Library is laid out (tests/nki/test_views.py)."""
