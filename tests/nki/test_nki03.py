"""NKI as its users write it today: NKI 0.3's language surface, the older forms still
in the public samples, and the front end's defects found on public kernels, each on the
project's own kernels (tests/nki/kernels/nki03_ops.py) against numpy references.

Run by ctest (label nki) with Debian's /usr/bin/python3, GENSWEEP set to the binary under test.
No network, no accelerator.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENSWEEP = os.environ.get("GENSWEEP", os.path.join(ROOT, "build", "asan", "cli", "gensweep"))
OPS = os.path.join(HERE, "kernels", "nki03_ops.py")
REFS = os.path.join(HERE, "kernels", "nki03_refs.py")
HELPERS = os.path.join(HERE, "kernels", "pythonpath")
# nl.shared_constant's data goes to $XDG_CACHE_HOME/gensweep/nki-constants: not the user's home
_CACHE = tempfile.TemporaryDirectory(prefix="gs-nki03-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE.name
GENS = [g for g in os.environ.get("GS_NKI_GENS", "gen2,gen3").split(",") if g != "gen1"]


def cfg(gen):
    return os.path.join(ROOT, "configs", gen + ".yaml")


def nki(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([GENSWEEP, "nki", *args], capture_output=True, text=True, timeout=300,
                          env=e)


def run(kernel, args, gen, ref=None, extra=(), env=None, path=OPS):
    a = ["run", path, "--kernel", kernel, "--config", cfg(gen), "--json", *extra]
    for x in args:
        a += ["--arg", x]
    if ref:
        a += ["--reference", f"{REFS}:{ref}"]
    p = nki(*a, env=env)
    try:
        rec = json.loads(p.stdout)
    except ValueError:
        rec = {}
    return rec, p


class Nki03Surface(unittest.TestCase):
    def test_nki03_surface_traces_runs_and_passes(self):
        """nl.NKIObject configs (dataclass and plain), nki.isa.constants, engine selectors,
        nc_version compared as an ordered enum, nki.dtype annotations, nki.compiler at module
        level and as loop directives and decorators."""
        for gen in GENS:
            with self.subTest(gen=gen):
                ref = "scale3" if gen >= "gen3" else "scale2"
                rec, p = run("surface_v03", ["x=fp32:128x64"], gen, ref)
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_nc_version_orders_and_names(self):
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import nki.isa as nisa
        from nki.isa.constants import nc_version, oob_mode, dge_mode  # noqa: F401
        self.assertIs(nc_version, nisa.nc_version)
        self.assertTrue(nisa.nc_version.gen4 > nisa.nc_version.gen3 >= 3)
        self.assertEqual(str(nisa.nc_version.gen2), "nc_version.gen2")
        self.assertEqual(nisa.vector_engine, nisa.engine.vector)
        import neuronxcc.nki.isa.constants as c2
        self.assertIs(c2.oob_mode, nisa.oob_mode)

    def test_nkiobject_fields(self):
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import nki.language as nl

        class C(nl.NKIObject):
            a: int
            b: int = 5
        self.assertEqual((C(1).a, C(1).b, C(a=2, b=3).b), (1, 5, 3))
        with self.assertRaises(TypeError):
            C(1, 2, 3)
        with self.assertRaises(TypeError):
            C(zz=1)

    def test_numpy_dtypes_fp32_and_finfo(self):
        rec, p = run("np_dtype_kernel", ["x=bf16:128x32"], "gen3", "same")
        self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
        rec, p = run("finfo_clamp", ["x=fp32:128x32"], "gen3", "same")
        self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_an_mx_dtype_imports_and_is_unsupported_by_name_at_its_line(self):
        rec, p = run("mx_dtype_tile", ["x=fp32:128x32"], "gen3")
        self.assertEqual(rec.get("status"), "unsupported", p.stdout + p.stderr)
        self.assertIn("float8_e4m3fn_x4", p.stdout + p.stderr)
        self.assertIn("nki03_ops.py:", p.stdout + p.stderr)


class Nki03OlderForms(unittest.TestCase):
    def test_older_forms_match_numpy(self):
        """Value-returning nisa calls with positional operands (tensor_copy(src),
        tensor_scalar(data, op, operand), nc_matmul(a, b), nc_matmul(stationary=, moving=)
        without dst, perf_mode="none"), mgrid .p / .x, broadcast_to on tiles (partition and
        free axes) and nl.broadcast_to, nl.load_transpose2d, nl.shared_constant."""
        cases = [("positional_forms", ["a=bf16:128x64", "b=bf16:128x256"], "mm4"),
                 ("bias_gelu", ["x=fp32:128x640", "bias=fp32:1x640"], "bias_gelu"),
                 ("transpose_const", ["a=fp32:64x128"], "transpose_const")]
        for gen in GENS:
            for kernel, args, ref in cases:
                with self.subTest(gen=gen, kernel=kernel):
                    rec, p = run(kernel, args, gen, ref)
                    self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)


    def test_masks_predicate_and_a_two_variable_one_is_unsupported_at_its_line(self):
        """A mask true everywhere (256 rows); a tail tile whose indices beyond the tensor the
        mask excludes (200 rows); a box of two variables' intervals over a tile written before
        (only the box changes); a mask true nowhere (no instruction)."""
        for gen in GENS:
            for kernel, args, ref in [("masked_rows", ["x=fp32:256x64"], "exp"),
                                      ("masked_rows", ["x=fp32:200x64"], "exp"),
                                      ("masked_box", ["x=fp32:128x64"], "masked_box"),
                                      ("masked_never", ["x=fp32:128x64"], "same_x")]:
                with self.subTest(gen=gen, kernel=kernel, args=args):
                    rec, p = run(kernel, args, gen, ref)
                    self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
        rec, p = run("masked_never", ["x=fp32:128x64"], "gen3", "same_x")
        self.assertEqual(rec.get("instructions"), 2, p.stdout)
        rec, p = run("masked_box", ["x=fp32:128x64"], "gen3", "same_x")
        self.assertEqual(rec.get("status"), "fail", p.stdout + p.stderr)
        rec, p = run("masked_partial", ["x=fp32:128x64"], "gen3", "exp")
        self.assertEqual(rec.get("status"), "unsupported", p.stdout + p.stderr)
        self.assertIn("mask=", p.stdout + p.stderr)
        self.assertIn("nki03_ops.py:", p.stdout + p.stderr)


class Nki03Defects(unittest.TestCase):
    def test_outputs_taken_as_arguments_keep_the_reference_arguments_in_place(self):
        """def k(a, out, b): the reference gets (a, zeros like out, b), not a shifted list."""
        rec, p = run("out_as_argument", ["a=fp32:128x64", "out=fp32:128x64", "b=fp32:128x64"],
                     "gen3", "sub")
        self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_an_error_in_an_imported_helper_is_reported_at_the_helpers_line(self):
        rec, p = run("uses_broken_helper", ["x=fp32:128x32"], "gen3",
                     env={"PYTHONPATH": HELPERS})
        helper = os.path.join(HELPERS, "nki03_helper_pkg", "__init__.py")
        with open(helper) as fh:
            line = [i for i, t in enumerate(fh, 1) if "x.shape[rows]" in t][0]
        self.assertIn(f"nki03_helper_pkg/__init__.py:{line}:", p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stdout + p.stderr)

    def test_nki_run_grid_launches_a_2d_spmd_grid(self):
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("grid_matmul", ["a=bf16:256x128", "b=bf16:128x512"], gen, "matmul",
                             extra=("--grid", "2x2"))
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
        for bad in ("2xq", "0x2", "2x"):
            rec, p = run("grid_matmul", ["a=bf16:256x128", "b=bf16:128x512"], "gen3",
                         extra=("--grid", bad))
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--grid", p.stderr)
            self.assertNotIn("Traceback", p.stderr)

    def test_find_gensweep_finds_the_built_binary(self):
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from gensweep import api
        saved = os.environ.pop("GENSWEEP", None)
        try:
            exe = api.find_gensweep()
        except RuntimeError:
            exe = None  # no build in this tree and none on PATH: nothing to find
        finally:
            if saved is not None:
                os.environ["GENSWEEP"] = saved
        if exe is not None:
            self.assertTrue(os.access(exe, os.X_OK), exe)
            self.assertNotIn(os.sep + "harness" + os.sep, exe)
        built = [b for b in ("release", "dev", "asan")
                 if os.access(os.path.join(ROOT, "build", b, "cli", "gensweep"), os.X_OK)]
        if built:
            self.assertEqual(exe, os.path.join(ROOT, "build", built[0], "cli", "gensweep"))

    def test_the_users_pythonpath_is_kept(self):
        """`gensweep nki run` prepends the front end to PYTHONPATH: a kernel importing a helper
        package from the user's path traces (it replaced the path before)."""
        rec, p = run("uses_helper", ["x=fp32:128x32"], "gen3", "double",
                     env={"PYTHONPATH": HELPERS})
        self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_enum_and_dtype_defaults_reach_the_reference_in_place(self):
        """A default that is no literal (an Enum member, a dtype) reaches the reference as its
        str(), and the arguments after it keep their positions."""
        rec, p = run("enum_default", ["x=fp32:128x32", "k=3.0"], "gen3", "enum_scaled")
        self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)


class LibraryFormsPerGeneration(unittest.TestCase):
    """Forms the NKI Library's kernels use (nkilib.core.router_topk): tensor_reduce(negate=),
    .buffer, nc_matmul tile_position / tile_size of the whole PE array, core_barrier on one
    core; and the tiling and the grid barrier that are not modelled, unsupported at their line."""

    def test_library_forms_pass(self):
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("library_forms", ["x=fp32:128x64", "negmax=fp32:128x1",
                                               "gram=fp32:64x64"], gen, "library_forms")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_negate_is_in_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            prog = os.path.join(d, "p.gsk")
            rec, p = run("library_forms", ["x=fp32:128x64", "negmax=fp32:128x1",
                                           "gram=fp32:64x64"], GENS[0],
                         extra=("--keep-program", prog))
            self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
            with open(prog) as fh:
                lines = [ln for ln in fh if ln.startswith("tensor_reduce ")]
            self.assertEqual(len(lines), 1)
            self.assertTrue(lines[0].split()[-1] == "1", lines[0])
            d2 = nki("disasm", OPS, "--kernel", "library_forms", "--config", cfg(GENS[0]),
                     "--arg", "x=fp32:128x64", "--arg", "negmax=fp32:128x1",
                     "--arg", "gram=fp32:64x64")
            self.assertIn("negate", d2.stdout, d2.stdout + d2.stderr)

    def test_pe_array_tiles_match_numpy(self):
        """nc_matmul on PE array tiles (the QKV token-generation form): the plain product,
        the tile kept in the program and shown by disasm."""
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("pe_tile_quarter", ["x=fp32:128x64"], gen, "pe_tile_quarter")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
                rec, p = run("pe_column_tiles", ["h=bf16:1024x4", "w=bf16:1024x256"], gen,
                             "pe_column_tiles")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
        d = nki("disasm", OPS, "--kernel", "pe_column_tiles", "--config", cfg("gen3"),
                "--arg", "h=bf16:1024x4", "--arg", "w=bf16:1024x256")
        self.assertIn("tile=0,96:128x32", d.stdout, d.stdout + d.stderr)

    def test_a_misplaced_or_too_small_pe_tile_is_an_error_at_its_line(self):
        src = open(OPS).read().splitlines()
        line = next(i + 1 for i, s in enumerate(src) if "# misplaced tile" in s)
        rec, p = run("pe_tile_misplaced", ["x=fp32:128x64"], GENS[0])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("PE tile position (0, 48)", p.stdout + p.stderr)
        self.assertTrue(f"nki03_ops.py:{line - 1}" in p.stdout + p.stderr or
                        f"nki03_ops.py:{line}" in p.stdout + p.stderr, p.stdout + p.stderr)
        rec, p = run("pe_column_tiles", ["h=bf16:1024x4", "w=bf16:1024x256"], "gen1")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("NeuronCore-v2", p.stdout + p.stderr)

    def test_grid_barrier_is_unsupported_at_its_line(self):
        src = open(OPS).read().splitlines()
        for kernel, grid, needle in (("barrier_in_grid", "2", "nisa.core_barrier(out"),):
            with self.subTest(kernel=kernel):
                line = next(i + 1 for i, s in enumerate(src) if needle in s)
                rec, p = run(kernel, ["x=fp32:128x64"], GENS[0],
                             extra=("--grid", grid) if grid else ())
                self.assertEqual(rec.get("status"), "unsupported", p.stdout + p.stderr)
                self.assertIn(f"nki03_ops.py:{line}", p.stdout + p.stderr)


class ScalarTensorTensor(unittest.TestCase):
    """nisa.scalar_tensor_tensor (the NKI Library's RMS-norm gamma step): both styles, a [P, 1]
    and a scalar operand0, reversed operands of non-commutative ops, operand1 in PSUM."""

    def test_matches_numpy(self):
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("stt_forms", ["x=fp32:128x96:0.5:2", "g=fp32:128x96",
                                           "y=fp32:128x96", "z=fp32:128x96"], gen, "stt_forms")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)

    def test_kept_in_the_program_and_disasm(self):
        args = ["x=fp32:128x96:0.5:2", "g=fp32:128x96", "y=fp32:128x96", "z=fp32:128x96"]
        with tempfile.TemporaryDirectory() as d:
            prog = os.path.join(d, "p.gsk")
            rec, p = run("stt_forms", args, GENS[0], extra=("--keep-program", prog))
            self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
            with open(prog) as fh:
                lines = [ln.split() for ln in fh if ln.startswith("scalar_tensor_tensor ")]
            self.assertEqual(len(lines), 2)
            self.assertEqual([ln[7] for ln in lines], ["0", "1"])  # reverse0
            self.assertEqual([ln[-1] for ln in lines], ["0", "1"])  # reverse1
            r = nki("replay", prog, "--config", cfg(GENS[0]), "--json")
            self.assertEqual(json.loads(r.stdout).get("status"), "pass", r.stdout + r.stderr)
            # a malformed reverse flag is a malformed program, named by its line
            with open(prog) as fh:
                text = fh.read()
            bad = os.path.join(d, "bad.gsk")
            with open(bad, "w") as fh:
                i = text.index("scalar_tensor_tensor ")
                j = text.index("\n", i)
                ln = text[i:j].split(" ")
                ln[7] = "2"
                fh.write(text[:i] + " ".join(ln) + text[j:])
            r = nki("replay", bad, "--config", cfg(GENS[0]))
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("bad.gsk:", r.stderr)
        d2 = nki("disasm", OPS, "--kernel", "stt_forms", "--config", cfg(GENS[0]),
                 *sum((["--arg", a] for a in args), []))
        self.assertIn("reverse0 reverse1", d2.stdout, d2.stdout + d2.stderr)
        self.assertIn("op0=mul", d2.stdout, d2.stdout + d2.stderr)

    def test_both_operands_in_psum_is_an_error_at_its_line(self):
        src = open(OPS).read().splitlines()
        line = next(i + 1 for i, s in enumerate(src) if "# both in PSUM" in s)
        rec, p = run("stt_both_psum", ["x=fp32:128x64"], GENS[0])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"nki03_ops.py:{line}", p.stdout + p.stderr)
        self.assertIn("cannot both be in PSUM", p.stdout + p.stderr)


class StreamShuffle(unittest.TestCase):
    """nisa.nc_stream_shuffle (the NKI Library's bias broadcast): a one-partition source onto
    quadrants, an in-place permutation with partitions left unchanged (255), bf16 moved
    bit-exact; a source partition beyond the source an error at its line; gen1 unsupported."""

    def test_matches_numpy(self):
        for gen in GENS:
            with self.subTest(gen=gen):
                rec, p = run("shuffle_forms", ["x=bf16:128x48", "y=bf16:96x48", "z=bf16:128x48"],
                             gen, "shuffle_forms")
                self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
                self.assertEqual(rec["error"]["max_abs"], 0.0, p.stdout)

    def test_kept_in_the_program_and_disasm(self):
        args = ["x=bf16:128x48", "y=bf16:96x48", "z=bf16:128x48"]
        with tempfile.TemporaryDirectory() as d:
            prog = os.path.join(d, "p.gsk")
            rec, p = run("shuffle_forms", args, GENS[0], extra=("--keep-program", prog))
            self.assertEqual(rec.get("status"), "pass", p.stdout + p.stderr)
            with open(prog) as fh:
                text = fh.read()
            lines = [ln.split() for ln in text.splitlines() if ln.startswith("stream_shuffle ")]
            self.assertEqual(len(lines), 4)
            self.assertEqual(lines[-1][5:7], ["31", "255"])
            bad = os.path.join(d, "bad.gsk")
            with open(bad, "w") as fh:
                fh.write(text.replace(" ".join(lines[-1]), " ".join(lines[-1][:-1] + ["256"])))
            r = nki("replay", bad, "--config", cfg(GENS[0]))
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("bad.gsk:", r.stderr)
        d2 = nki("disasm", OPS, "--kernel", "shuffle_forms", "--config", cfg(GENS[0]),
                 *sum((["--arg", a] for a in args), []))
        self.assertIn("mask=31,-,29,-", d2.stdout, d2.stdout + d2.stderr)

    def test_a_source_partition_beyond_the_source_is_an_error_at_its_line(self):
        src = open(OPS).read().splitlines()
        line = next(i + 1 for i, s in enumerate(src) if "# beyond the source" in s)
        rec, p = run("shuffle_beyond_source", ["x=fp32:128x64"], GENS[0])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"nki03_ops.py:{line}", p.stdout + p.stderr)
        self.assertIn("reads src partition 2", p.stdout + p.stderr)

    def test_unsupported_on_gen1(self):
        rec, p = run("shuffle_forms", ["x=bf16:128x48", "y=bf16:96x48", "z=bf16:128x48"], "gen1")
        self.assertEqual(rec.get("status"), "unsupported", p.stdout + p.stderr)
        self.assertIn("nc_stream_shuffle", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
