"""The NKI top-k selection instructions (nisa.max8, nc_find_index8, nc_match_replace8) through
`gensweep nki run` on gen2-gen4, in both API styles, checked against float64 numpy references
(tests/nki/kernels/topk_refs.py) on inputs with ties; a wrong tie order fails; gen1 (no top-k
instructions) is unsupported by name; fewer than 8 elements is an error at the kernel's line.

Run by ctest (label nki) with Debian's /usr/bin/python3, GENSWEEP set to the binary under test.
"""
import json
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENSWEEP = os.environ.get("GENSWEEP", os.path.join(ROOT, "build", "dev", "cli", "gensweep"))
OPS = os.path.join(HERE, "kernels", "topk_ops.py")
REFS = os.path.join(HERE, "kernels", "topk_refs.py")
GENS = os.environ.get("GS_NKI_GENS", "gen2,gen3,gen4").split(",")


def cfg(gen):
    return os.path.join(ROOT, "configs", gen + ".yaml")


def run(kernel, args, gen, ref=None, rc=0):
    a = [GENSWEEP, "nki", "run", OPS, "--kernel", kernel, "--config", cfg(gen), "--json"]
    for x in args:
        a += ["--arg", x]
    if ref:
        a += ["--reference", f"{REFS}:{ref}"]
    p = subprocess.run(a, capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        raise AssertionError(f"exit {p.returncode} (wanted {rc}) for {a}:\n{p.stdout}\n{p.stderr}")
    return (json.loads(p.stdout) if p.stdout.strip().startswith("{") else None), p


# bf16 rows (256 values per octave): the largest values of a row repeat, so ties are exercised
CASES = [
    ("top16_new", ["x=bf16:128x300"], "top16"),
    ("top16_new", ["x=bf16:64x40:0:0.25"], "top16"),
    ("top16_new", ["x=fp32:3x17"], "top16"),
    ("top8_old", ["x=bf16:128x200:-1:-0.5"], "top8_replace"),
    ("find_old", ["x=bf16:32x64:0:0.1"], "find8"),
]


# run once per generation by CTest (GS_NKI_GENS=genN), as test_frontend.py's PerGeneration class
class TopKPerGeneration(unittest.TestCase):
    def test_matches_numpy_in_both_styles_on_every_generation(self):
        for gen in GENS:
            for kernel, args, ref in CASES:
                with self.subTest(gen=gen, kernel=kernel, args=args):
                    rec, _ = run(kernel, args, gen, ref)
                    self.assertEqual(rec["status"], "pass", rec.get("reason"))
                    self.assertIsNotNone(rec["error"], "the outputs were not checked")
                    self.assertGreater(rec["time_ns"], 0)


class TopK(unittest.TestCase):
    def test_the_wrong_tie_order_fails(self):
        rec, _ = run("top16_new", ["x=bf16:128x300"], "gen3", "top16_wrong", rc=1)
        self.assertEqual(rec["status"], "fail")
        self.assertGreater(rec["error"]["mismatches"], 0)

    def test_unsupported_on_gen1_by_name(self):
        rec, _ = run("top16_new", ["x=bf16:128x300"], "gen1", "top16")
        self.assertEqual(rec["status"], "unsupported")
        self.assertIn("nisa.max8", rec["reason"])

    def test_fewer_than_8_elements_is_an_error_at_the_line(self):
        with open(OPS) as f:
            line = next(i for i, ln in enumerate(f, 1) if "# MARK: short" in ln)
        rec, p = run("max8_short", ["x=fp32:16x5"], "gen3", rc=2)
        text = p.stdout + p.stderr
        self.assertIn(f"topk_ops.py:{line}", text)
        self.assertIn("max8: src has 5 elements per partition", text)
        self.assertNotIn("Traceback", text)


if __name__ == "__main__":
    unittest.main()
