"""The NKI front end end to end: the project's own kernels (tests/nki/kernels) through
`gensweep nki run` on gen2-gen4, checked against float64 numpy references; a wrong reference must
fail; hostile kernels give clean errors at their own lines; the Python API returns outputs.

Run by ctest (label nki) with Debian's /usr/bin/python3 (it sees python3-numpy), GENSWEEP set to
the binary under test. No network, no accelerator.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENSWEEP = os.environ.get("GENSWEEP", os.path.join(ROOT, "build", "dev", "harness", "gensweep"))
OPS = os.path.join(HERE, "kernels", "ops.py")
REFS = os.path.join(HERE, "kernels", "refs.py")
HOSTILE = os.path.join(HERE, "kernels", "hostile.py")
GENS = os.environ.get("GS_NKI_GENS", "gen2,gen3,gen4").split(",")


def cfg(gen):
    return os.path.join(ROOT, "configs", gen + ".yaml")


def nki(*args, check_rc=None):
    p = subprocess.run([GENSWEEP, "nki", *args], capture_output=True, text=True, timeout=300)
    if check_rc is not None and p.returncode != check_rc:
        raise AssertionError(f"exit {p.returncode} (wanted {check_rc}) for {args}:\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


def run_json(kernel, args, gen, ref=None, rc=0, extra=()):
    a = ["run", OPS, "--kernel", kernel, "--config", cfg(gen), "--json", *extra]
    for x in args:
        a += ["--arg", x]
    if ref:
        a += ["--reference", f"{REFS}:{ref}"]
    p = nki(*a, check_rc=rc)
    return json.loads(p.stdout), p


# kernel, --args, reference: every operation the front end supports, in both API styles
CASES = [
    ("add_old", ["a=bf16:128x512", "b=bf16:128x512"], "add"),
    ("rowops_old", ["x=fp32:128x300"], "rowops"),
    ("unary_old", ["x=fp32:64x100"], "unary"),
    ("matmul_old", ["lhsT=bf16:256x128", "rhs=bf16:256x512"], "matmul"),
    ("matmul_nl", ["x=bf16:128x128", "y=bf16:128x256"], "matmul_plain"),
    ("transpose_old", ["x=fp32:64x128"], "transpose"),
    ("pool_old", ["x=fp32:32x16x16", "k=2"], "pool_max"),
    ("strided_old", ["x=fp32:128x64"], "strided"),
    ("rmsnorm_old", ["x=bf16:256x512"], "rmsnorm"),
    ("layernorm_old", ["x=fp32:128x384"], "layernorm"),
    ("add_new", ["a=bf16:128x1024", "b=bf16:128x1024"], "add"),
    ("scalar_new", ["x=fp32:128x64", "bias=fp32:128x1"], "scalar_new"),
    ("matmul_new", ["lhsT=bf16:256x256", "rhs=bf16:256x512"], "matmul"),
    ("transpose_new", ["x=fp32:64x128"], "transpose"),
    ("memset_iota_new", ["x=fp32:128x64"], "memset_iota"),
    ("spmd_launch", ["a=fp32:256x512", "b=fp32:256x512"], "add"),
    ("cast_new", ["x=fp32:128x96"], "through_bf16"),
    ("scan_old", ["a=fp32:128x97", "b=fp32:128x97"], "scan_mul_add"),
    ("scan_new", ["a=fp32:77x64", "b=fp32:77x64", "h0=fp32:77x1"], "scan_mul_max"),
]


# A class whose name ends in PerGeneration loops over GENS: CTest runs it once per generation
# (GS_NKI_GENS=genN, tests/nki/tests.cmake), every other class once.
class EveryOperationPerGeneration(unittest.TestCase):
    def test_every_operation_matches_numpy_on_every_generation(self):
        for gen in GENS:
            for kernel, args, ref in CASES:
                with self.subTest(gen=gen, kernel=kernel):
                    rec, _ = run_json(kernel, args, gen, ref)
                    self.assertEqual(rec["status"], "pass", rec.get("reason"))
                    self.assertEqual(rec["kernel"], "nki." + kernel)
                    self.assertIsNotNone(rec["error"], "the outputs were not checked")
                    self.assertGreater(rec["time_ns"], 0)


class Operations(unittest.TestCase):
    def test_a_wrong_reference_fails(self):
        rec, p = run_json("add_old", ["a=bf16:128x512", "b=bf16:128x512"], "gen3", "wrong_add",
                          rc=1)
        self.assertEqual(rec["status"], "fail")
        self.assertGreater(rec["error"]["mismatches"], 0)

    def test_a_reference_that_fails_never_passes(self):
        # no reference values: the outputs are compared with NaN, which nothing meets
        rec, p = run_json("add_old", ["a=bf16:128x512", "b=bf16:128x512"], "gen3", "raising",
                          rc=1)
        self.assertEqual(rec["status"], "fail")
        self.assertEqual(rec["error"]["mismatches"], 128 * 512)
        self.assertIn("reference raising failed", p.stderr)
        self.assertIn("this reference cannot compute", p.stderr)

    def test_without_a_reference_nothing_is_checked(self):
        rec, _ = run_json("add_old", ["a=bf16:128x512", "b=bf16:128x512"], "gen3")
        self.assertEqual(rec["status"], "pass")
        self.assertIsNone(rec["error"])

    def test_spmd_instances_spread_over_the_cores(self):
        rec, _ = run_json("spmd_launch", ["a=fp32:256x512", "b=fp32:256x512"], "gen3", "add")
        self.assertEqual(rec["cores_used"], 4)  # a 2 x 2 grid on an 8-core generation

    def test_timing_only_gives_the_same_time(self):
        a, _ = run_json("matmul_new", ["lhsT=bf16:256x256", "rhs=bf16:256x512"], "gen3")
        b, _ = run_json("matmul_new", ["lhsT=bf16:256x256", "rhs=bf16:256x512"], "gen3",
                        extra=("--timing-only",))
        self.assertEqual(a["time_ns"], b["time_ns"])

    def test_the_scheduler_reorders_within_the_dependencies(self):
        args = ["lhsT=bf16:512x256", "rhs=bf16:512x1024"]
        listings = {}
        for flag in ((), ("--no-schedule",)):
            rec, _ = run_json("matmul_new", args, "gen3", "matmul", extra=flag)
            self.assertEqual(rec["status"], "pass", rec.get("reason"))
            a = ["disasm", OPS, "--kernel", "matmul_new", "--config", cfg("gen3"), *flag]
            for x in args:
                a += ["--arg", x]
            lines = nki(*a, check_rc=0).stdout.splitlines()
            # opcode, operands and source line of each instruction, without its index, queue
            # (queues are dealt round robin in program order) and dependencies
            listings[flag] = [re.sub(r" deps=\S+", "", re.sub(r"^\s*\d+\s+c\d+\s+\S+\s+", "", ln))
                              for ln in lines if re.match(r"^\s*\d+\s", ln)]
        sched, plain = listings[()], listings[("--no-schedule",)]
        self.assertEqual(len(sched), len(plain))
        self.assertNotEqual(sched, plain, "the scheduler changed nothing")
        self.assertEqual(sorted(sched), sorted(plain), "not a reordering of the same program")

    def test_the_nki_naive_matmul_is_the_c_naive_rung_exactly(self):
        """matmul_new (tests/nki/kernels/ops.py) written as kernels/matmul.c's naive variant:
        the same instructions (buffers numbered apart) and the same simulated time."""
        def norm(text):
            out = []
            for ln in text.splitlines():
                if re.match(r"^\s*\d+\s", ln):
                    ln = re.sub(r"\s+@\S+$", "", ln)
                    out.append(re.sub(r" b\d+ ", " bX ", re.sub(r"\+\d+B", "+?B", ln)))
            return out
        for gen in GENS:
            for M, K, N in ((256, 256, 1024), (128, 512, 512)):
                with self.subTest(gen=gen, shape=(M, K, N)):
                    args = [f"lhsT=bf16:{K}x{M}", f"rhs=bf16:{K}x{N}"]
                    a = ["disasm", OPS, "--kernel", "matmul_new", "--config", cfg(gen),
                         "--no-schedule"]
                    for x in args:
                        a += ["--arg", x]
                    mine = norm(nki(*a, check_rc=0).stdout)
                    c = subprocess.run([GENSWEEP, "disasm", "--config", cfg(gen), "--kernel",
                                        "matmul", "--variant", "naive", "--dtype", "bf16",
                                        "--shape", f"{M}x{K}x{N}"], capture_output=True,
                                       text=True, check=True).stdout
                    self.assertEqual(mine, norm(c))
                    self.assertGreater(len(mine), 3)
                    rec, _ = run_json("matmul_new", args, gen, extra=("--no-schedule",))
                    crec = json.loads(subprocess.run(
                        [GENSWEEP, "run", "--config", cfg(gen), "--kernel", "matmul", "--variant",
                         "naive", "--dtype", "bf16", "--shape", f"{M}x{K}x{N}", "--json"],
                        capture_output=True, text=True, check=True).stdout)
                    self.assertEqual(rec["time_ns"], crec["time_ns"])

    def test_an_operation_the_model_lacks_is_unsupported_by_name_and_line(self):
        rec, p = run_json("unsupported_op", ["x=fp32:128x64"], "gen3", rc=0)
        self.assertEqual(rec["status"], "unsupported")
        self.assertIn("nisa.dropout", rec["reason"])
        self.assertRegex(rec["reason"], r"ops\.py:\d+")

    def test_the_scan_is_unsupported_on_gen1(self):
        rec, _ = run_json("scan_old", ["a=fp32:128x97", "b=fp32:128x97"], "gen1", rc=0)
        self.assertEqual(rec["status"], "unsupported")
        self.assertIn("tensor_tensor_scan", rec["reason"])

    def test_gpsimd_operations_are_unsupported_on_gen1(self):
        rec, _ = run_json("memset_iota_new", ["x=fp32:128x64"], "gen1", "memset_iota", rc=0)
        self.assertEqual(rec["status"], "unsupported")
        self.assertIn("GpSimd", rec["reason"])


def marked_line(tag):
    with open(HOSTILE) as f:
        for i, line in enumerate(f, 1):
            if f"# line: {tag}" in line:
                return i
    raise AssertionError(tag)


class Hostile(unittest.TestCase):
    def expect(self, kernel, args, rc, pattern, extra=(), gen="gen3"):
        a = ["run", HOSTILE, "--kernel", kernel, "--config", cfg(gen), *extra]
        for x in args:
            a += ["--arg", x]
        p = nki(*a, check_rc=rc)
        text = p.stdout + p.stderr
        self.assertIn(f"hostile.py:{marked_line(kernel)}", text)
        self.assertRegex(text, pattern)
        self.assertNotIn("Traceback", text)

    def test_out_of_range_slice(self):
        self.expect("out_of_range", ["x=fp32:128x512"], 2, r"out of range for dimension 1")

    def test_partition_dim_over_128(self):
        self.expect("too_many_partitions", ["x=fp32:256x64"], 2, r"partition dimension 256 > 128")

    def test_psum_overflow_does_not_fit(self):
        self.expect("psum_overflow", ["x=bf16:128x512"], 0, r"does not fit|does-not-fit")

    def test_dtype_cast_in_dma_where_the_dma_does_not_convert(self):
        # gen1's DMA does not convert (core.dma.cast: false): unsupported, at the kernel's line
        self.expect("dtype_mismatch", ["x=fp32:128x64"], 0,
                    r"dtype cast \(nl\.float32 -> nl\.bfloat16\): gen1's DMA does not convert",
                    gen="gen1")

    def test_exception_inside_the_kernel(self):
        self.expect("raises", ["x=fp32:128x64"], 2, r"AssertionError: this kernel wants 7 rows")

    def test_runaway_loop_stopped_by_the_instruction_cap(self):
        self.expect("runaway", ["x=fp32:128x64"], 2, r"more than 5000 instructions",
                    extra=("--max-instructions", "5000"))

    def test_shape_mismatch(self):
        self.expect("shape_mismatch", ["a=fp32:128x64", "b=fp32:128x32"], 2, r"shapes .* differ")

    def test_bad_arguments_are_usage_errors(self):
        for args, msg in ((["--arg", "x=fp99:4x4"], "neither DTYPE:SHAPE"),
                          (["--arg", "nope=fp32:4x4"], "no parameter nope"),
                          ([], "needs --arg x")):
            p = nki("run", HOSTILE, "--kernel", "out_of_range", "--config", cfg("gen3"), *args,
                    check_rc=2)
            self.assertIn(msg, p.stderr)
        p = nki("run", HOSTILE, "--kernel", "missing", "--config", cfg("gen3"), check_rc=2)
        self.assertIn("no kernel or function named missing", p.stderr)


class Replay(unittest.TestCase):
    def test_replay_runs_no_code_the_program_names(self):
        """A program file may come from anywhere: replay never imports a reference it names;
        the outputs are checked against the --reference given on replay's command line."""
        with tempfile.TemporaryDirectory() as d:
            prog = os.path.join(d, "add.gsk")
            args = ["--arg", "a=bf16:128x512", "--arg", "b=bf16:128x512"]
            nki("run", OPS, "--kernel", "add_old", "--config", cfg("gen3"), *args,
                "--reference", f"{REFS}:add", "--keep-program", prog, check_rc=0)
            marker = os.path.join(d, "imported")
            evil = os.path.join(d, "evil.py")
            with open(evil, "w") as f:
                f.write(f"open({marker!r}, 'w').write('x')\n\ndef add(a, b):\n    return a + b\n")
            with open(prog) as f:
                lines = [ln for ln in f.read().splitlines() if not ln.startswith("reference ")]
            lines.insert(2, f"reference {urllib.parse.quote(evil, safe='/')} add")
            with open(prog, "w") as f:
                f.write("\n".join(lines) + "\n")
            p = nki("replay", prog, "--config", cfg("gen3"), "--json", check_rc=0)
            self.assertFalse(os.path.exists(marker), "replay imported the program's reference")
            rec = json.loads(p.stdout)
            self.assertEqual(rec["status"], "pass")
            self.assertIsNone(rec["error"], "outputs checked without a --reference")
            self.assertIn("no --reference: the outputs are not checked", p.stderr)
            self.assertIn("is not run", p.stderr)
            # the reference on the command line is the one that runs
            p = nki("replay", prog, "--config", cfg("gen3"), "--json", "--reference",
                    f"{REFS}:add", check_rc=0)
            rec = json.loads(p.stdout)
            self.assertEqual(rec["status"], "pass")
            self.assertIsNotNone(rec["error"], "the outputs were not checked")
            self.assertFalse(os.path.exists(marker))
            rec = json.loads(nki("replay", prog, "--config", cfg("gen3"), "--json", "--reference",
                                 f"{REFS}:wrong_add", check_rc=1).stdout)
            self.assertGreater(rec["error"]["mismatches"], 0)
            for bad, msg in ((f"{REFS}", "expected FILE.py:FUNC"),
                             (f"{d}/none.py:add", "No such file"), (f"{d}:add", "not a regular")):
                p = nki("replay", prog, "--config", cfg("gen3"), "--reference", bad, check_rc=2)
                self.assertIn(msg, p.stderr)


class PythonApi(unittest.TestCase):
    def test_nki_run_returns_outputs_and_the_record(self):
        import numpy as np
        sys.path.insert(0, os.path.join(ROOT, "python"))
        sys.path.insert(0, os.path.dirname(OPS))
        os.environ["GENSWEEP"] = GENSWEEP
        import gensweep
        import ops
        rng = np.random.default_rng(3)
        a = rng.uniform(-1, 1, (128, 512)).astype(np.float32)
        b = rng.uniform(-1, 1, (128, 512)).astype(np.float32)
        r = gensweep.nki_run(ops.add_old, [a, b], config=cfg("gen2"))
        self.assertEqual(r.status, "pass")
        self.assertEqual(len(r.outputs), 1)
        np.testing.assert_allclose(r.outputs[0], a.astype(np.float64) + b, rtol=1e-6,
                                   atol=1e-6)
        # a second launch in the same process (each runs in its own model process)
        r2 = gensweep.nki_run(ops.transpose_old, [a[:64, :128]], config=cfg("gen4"))
        np.testing.assert_allclose(r2.outputs[0], a[:64, :128].T, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    unittest.main(verbosity=2)
