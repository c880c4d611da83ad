"""NKI 0.3's tensor views: `.ap(pattern=, offset=)` on SBUF tiles and HBM tensors,
`.reshape()` on SBUF/PSUM tiles, the NkiTensor view methods, and kernel files that are modules
of a package (relative imports, as the NKI Library's), on the project's own kernels
(tests/nki/kernels/views_ops.py, viewpkg/) against numpy references (views_refs.py).

Run by ctest (label nki) with Debian's /usr/bin/python3, GENSWEEP set to the binary under test.
No network, no accelerator.
"""
import json
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENSWEEP = os.environ.get("GENSWEEP", os.path.join(ROOT, "build", "asan", "cli", "gensweep"))
OPS = os.path.join(HERE, "kernels", "views_ops.py")
REFS = os.path.join(HERE, "kernels", "views_refs.py")
SCAN = os.path.join(HERE, "kernels", "viewpkg", "scan.py")
GENS = [g for g in os.environ.get("GS_NKI_GENS", "gen2,gen3").split(",") if g != "gen1"]


def run(kernel, args, gen, ref=None, path=OPS):
    a = [GENSWEEP, "nki", "run", path, "--kernel", kernel, "--config",
         os.path.join(ROOT, "configs", gen + ".yaml"), "--json"]
    for x in args:
        a += ["--arg", x]
    if ref:
        a += ["--reference", f"{REFS}:{ref}"]
    p = subprocess.run(a, capture_output=True, text=True, timeout=300)
    try:
        rec = json.loads(p.stdout)
    except ValueError:
        rec = {}
    return rec, p


def line_of(tag):
    with open(OPS) as f:
        for i, line in enumerate(f, 1):
            if "# " + tag in line:
                return f"views_ops.py:{i}"
    raise AssertionError(tag)


class ViewsPerGeneration(unittest.TestCase):
    def test_views_match_numpy(self):
        """A tile pattern with an offset inside the partition and one starting at a partition,
        an HBM pattern with a step, a tile reshape + permute, a PSUM tile reshape, select /
        slice / expand_dim / squeeze_dim / flatten_dims / reshape_dim / broadcast."""
        cases = [("ap_window", ["x=fp32:128x64"]), ("ap_rows", ["x=bf16:128x64"]),
                 ("ap_unused_out_of_range", ["x=fp32:128x64"]),
                 ("reshape_permute", ["x=fp32:128x128"]), ("view_methods", ["x=fp32:2x128x64"])]
        for gen in GENS:
            for kernel, args in cases:
                with self.subTest(gen=gen, kernel=kernel):
                    rec, p = run(kernel, args, gen, kernel)
                    self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_the_scheduler_keeps_a_buffer_handover_after_its_last_use(self):
        """mm_hoisted (the hoist-load loop shape): with the default scheduler a tile's
        allocation was moved before the last use of the buffer it takes over ("stale tile");
        it runs and matches numpy, as with --no-schedule."""
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("mm_hoisted", ["lhsT=bf16:1024x512", "rhs=bf16:1024x1024"], gen,
                             "mm_hoisted")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_a_kernel_module_of_a_package_runs(self):
        """viewpkg/scan.py imports `.helpers`: imported as viewpkg.scan; its scan chain (carried
        through `initial` across free tiles, ragged rows and columns) passes."""
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("cumsum_rows", ["x=fp32:200x1100"], gen, "cumsum_rows", path=SCAN)
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)


class ViewErrors(unittest.TestCase):
    def test_a_wrong_reference_fails(self):
        rec, p = run("ap_window", ["x=fp32:128x64"], "gen3", "wrong_ap_window")
        self.assertEqual(rec.get("status"), "fail", p.stdout + p.stderr)

    def test_bad_views_are_errors_at_their_lines(self):
        cases = [("ap_out_of_range", "AP_OOR", "elements [48, 79]"),
                 ("ap_out_of_range_used_later", "AP_LATE", "elements [48, 79]"),
                 ("ap_strided_partitions", "AP_PSTEP", "partition step 128"),
                 ("reshape_across_partitions", "RESHAPE_P", "changes its partition dimension"),
                 ("reshape_strided", "RESHAPE_NC", "not contiguous")]
        for kernel, tag, text in cases:
            with self.subTest(kernel=kernel):
                rec, p = run(kernel, ["x=fp32:128x64"], "gen3")
                self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(line_of(tag), p.stderr)
                self.assertIn(text, p.stderr)

    def test_reshape_keeps_the_same_elements(self):
        """The pattern arithmetic itself, without a run: split, merge, size-1 dims, a strided
        dim split, and a merge refused where dims are not contiguous."""
        import sys
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from gensweep.tracer import _nocopy_reshape as r
        self.assertEqual(r([(4, 32), (32, 1)], [128]), [(128, 1)])
        self.assertEqual(r([(128, 1)], [4, 1, 32]), [(4, 32), (1, 32), (32, 1)])
        self.assertEqual(r([(32, 2)], [2, 16]), [(2, 32), (16, 2)])
        self.assertIsNone(r([(2, 64), (4, 1)], [8]))
        self.assertEqual(r([(3, 0), (5, 1)], [3, 5]), [(3, 0), (5, 1)])


if __name__ == "__main__":
    unittest.main()
