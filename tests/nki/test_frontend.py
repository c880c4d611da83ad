"""The NKI front end end to end: the project's own kernels (tests/nki/kernels) through
`gensweep nki run` on gen2-gen4, checked against float64 numpy references; a wrong reference must
fail; hostile kernels give clean errors at their own lines; the Python API returns outputs.

Run by ctest (label nki) with Debian's /usr/bin/python3 (it sees python3-numpy), GENSWEEP set to
the binary under test. No network, no accelerator.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
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
        # no reference values: the job fails with the reference's own error, at its line, in
        # one line (no traceback of the front end), said once; no comparison against values
        # it did not give; the times stand
        rec, p = run_json("add_old", ["a=bf16:128x512", "b=bf16:128x512"], "gen3", "raising",
                          rc=1)
        self.assertEqual(rec["status"], "fail")
        self.assertIsNone(rec["error"])
        self.assertGreater(rec["time_ns"], 0)
        self.assertIn("reference raising failed", rec["reason"])
        self.assertRegex(rec["reason"], r"refs\.py:\d+: \w+: this reference cannot compute")
        self.assertEqual(p.stderr.count("reference raising failed"), 1, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertNotIn("outside tolerance", p.stderr)

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


def wait_for(pred, what, bound_s=120):
    """Wait for an event (pred() true), polling; the bound is never reached in a normal run."""
    for _ in range(int(bound_s / 0.02)):
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


def gone(pid):
    """The process has ended (a zombie counts: it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


class Limits(unittest.TestCase):
    """--wall-limit and --mem-limit hold for the tracer and the reference too; a stopped
    command leaves no child running and no temporary directory."""

    def run_bounded(self, args, rc, bound_s=180):
        try:
            return nki(*args, check_rc=rc)
        except subprocess.TimeoutExpired:
            self.fail(f"still running: {args}")

    def keep(self, d):
        prog = os.path.join(d, "copy.gsk")
        nki("run", HOSTILE, "--kernel", "copy", "--config", cfg("gen3"), "--arg",
            "x=fp32:128x64", "--keep-program", prog, check_rc=0)
        return prog

    def test_a_kernel_that_never_returns_stops_at_the_wall_limit(self):
        p = self.run_bounded(["run", HOSTILE, "--kernel", "spin", "--config", cfg("gen3"),
                              "--arg", "x=fp32:128x64", "--wall-limit", "1"], 1)
        self.assertRegex(p.stderr, r"the front end was stopped at (--wall-limit|its CPU limit)")

    def test_a_reference_that_never_returns_stops_at_the_wall_limit(self):
        with tempfile.TemporaryDirectory() as d:
            prog = self.keep(d)
            p = self.run_bounded(["replay", prog, "--config", cfg("gen3"), "--reference",
                                  f"{REFS}:spin", "--wall-limit", "3"], 1)
            self.assertRegex(p.stderr, r"reference spin stopped at (the wall|its CPU) limit")

    def test_the_tracer_has_the_memory_limit(self):
        p = self.run_bounded(["run", HOSTILE, "--kernel", "hog", "--config", cfg("gen3"),
                              "--arg", "x=fp32:128x64", "--mem-limit", "1GiB"], 1)
        self.assertIn(f"hostile.py:{marked_line('hog')}: the front end ran out of memory",
                      p.stderr)

    def stop(self, args, role, sig):
        """Start `gensweep nki ARGS`, wait until the process of role (tracer, reference) runs,
        send sig to gensweep: it ends by sig, the child is gone, its directory removed."""
        with tempfile.TemporaryDirectory() as d:
            mark = os.path.join(d, "mark")
            env = dict(os.environ, GS_TEST_MARK=mark)
            proc = subprocess.Popen([GENSWEEP, "nki", *args], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                wait_for(lambda: os.path.exists(mark), f"the {role} to start")
                with open(mark) as f:
                    got_role, pid, work = f.read().split()
                self.assertEqual(got_role, role)
                proc.send_signal(sig)
                proc.wait(timeout=120)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                proc.stderr.close()
            self.assertEqual(proc.returncode, -sig)
            wait_for(lambda: gone(int(pid)), f"the {role} (pid {pid}) to end")
            self.assertFalse(os.path.exists(work), f"{work} left behind")
            top = work[:-len("/ref")] if work.endswith("/ref") else work
            self.assertFalse(os.path.exists(top), f"{top} left behind")

    def test_a_signal_ends_the_tracer_and_removes_the_temporary_directory(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig):
                self.stop(["run", HOSTILE, "--kernel", "spin", "--config", cfg("gen3"),
                           "--arg", "x=fp32:128x64"], "tracer", sig)

    def test_a_signal_ends_the_reference_and_removes_the_temporary_directory(self):
        with tempfile.TemporaryDirectory() as d:
            prog = self.keep(d)
            for sig in (signal.SIGTERM, signal.SIGHUP):
                with self.subTest(sig=sig):
                    self.stop(["replay", prog, "--config", cfg("gen3"), "--reference",
                               f"{REFS}:spin"], "reference", sig)


def full_disk(*args):
    """gensweep nki ARGS with every file write past 1 KiB failing (EFBIG, as ENOSPC fails a write
    on a full disk): room for the capabilities file (~730 bytes) and a small program, not for a
    matmul's program (~1.7 KiB) or a 128 x 64 output (64 KiB). sh's ulimit counts 512 bytes."""
    return subprocess.run(["sh", "-c", "trap '' XFSZ; ulimit -f 2; exec \"$0\" nki \"$@\"",
                           GENSWEEP, *args], capture_output=True, text=True, timeout=300)


class ExitCodes(unittest.TestCase):
    """The README's exit codes for nki: 2 a kernel that cannot be traced (its line named), 1 a
    failure (an output not written, interrupted), each with its own message only."""

    def run_hostile(self, kernel, rc, *extra):
        p = nki("run", HOSTILE, "--kernel", kernel, "--config", cfg("gen3"), "--arg",
                "x=fp32:128x64", *extra, check_rc=rc)
        self.assertNotIn("refused the arguments", p.stderr)
        self.assertNotIn("cannot open", p.stderr)
        return p

    def test_a_kernel_calling_sys_exit_is_an_error_at_its_line(self):
        for kernel, code in (("exits0", 0), ("exits3", 3)):
            with self.subTest(kernel=kernel):
                p = self.run_hostile(kernel, 2)
                self.assertIn(f"hostile.py:{marked_line(kernel)}", p.stderr)
                self.assertIn(f"the kernel called sys.exit({code}) instead of returning",
                              p.stderr)

    def test_an_interrupted_front_end_names_the_signal(self):
        p = self.run_hostile("interrupted", 1)
        self.assertIn("the front end was killed by SIGINT", p.stderr)

    def test_kernel_and_program_errors_blame_no_command_line_arguments(self):
        p = self.run_hostile("raises", 2)
        self.assertIn("this kernel wants 7 rows", p.stderr)
        p = nki("replay", os.path.join(ROOT, "tests", "corpus", "gsk",
                                       "hbm_offset_overflow_src.gsk"),
                "--config", cfg("gen2"), check_rc=2)
        self.assertIn("overflows", p.stderr)
        self.assertNotIn("refused the arguments", p.stderr)

    def test_keep_program_on_a_full_disk_fails_and_leaves_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            keep = os.path.join(d, "mm.gsk")
            p = full_disk("run", OPS, "--kernel", "matmul_new", "--config", cfg("gen3"),
                          "--arg", "lhsT=bf16:256x256", "--arg", "rhs=bf16:256x512",
                          "--keep-program", keep)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("cannot write", p.stderr)
            self.assertIn(os.strerror(27), p.stderr)  # EFBIG
            self.assertEqual(os.listdir(d), [])

    def test_outputs_on_a_full_disk_fail_and_leave_no_short_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = full_disk("run", HOSTILE, "--kernel", "copy", "--config", cfg("gen3"),
                          "--arg", "x=fp32:128x64", "--outputs", d)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("cannot write", p.stderr)
            self.assertEqual(os.listdir(d), [])
            # with room, the file is whole
            nki("run", HOSTILE, "--kernel", "copy", "--config", cfg("gen3"), "--arg",
                "x=fp32:128x64", "--outputs", d, check_rc=0)
            files = os.listdir(d)
            self.assertEqual(len(files), 1, files)
            self.assertEqual(os.path.getsize(os.path.join(d, files[0])), 128 * 64 * 8)


RAW = ("\x1b", "\x07", "\u202e", "\u2066")


class TerminalText(unittest.TestCase):
    """Text from a kernel, a kernel file, a program file or a reference reaches the terminal
    with control characters and bidi controls escaped (\\xNN), as compare and history print."""

    def clean(self, p):
        text = p.stdout + p.stderr
        for raw in RAW:
            self.assertNotIn(raw, text)
        return text

    def test_kernel_exceptions_are_escaped(self):
        p = nki("run", HOSTILE, "--kernel", "noisy", "--config", cfg("gen3"), "--arg",
                "x=fp32:128x64", check_rc=2)
        text = self.clean(p)
        self.assertIn("ValueError: \\x1b[2J\\x1b]0;owned\\x07\\xe2\\x80\\xaeevil", text)

    def test_import_errors_and_paths_are_escaped(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k\x1b[31m\u202e.py")
            with open(path, "w") as f:
                f.write("raise RuntimeError('\\x1b[2J\\u202e at import')\n")
            p = nki("run", path, "--kernel", "k", "--config", cfg("gen3"), check_rc=2)
            text = self.clean(p)
            self.assertIn("RuntimeError: \\x1b[2J\\xe2\\x80\\xae at import", text)
            self.assertIn("k\\x1b[31m\\xe2\\x80\\xae.py", text)

    def test_reference_tracebacks_are_escaped(self):
        p = nki("run", HOSTILE, "--kernel", "copy", "--config", cfg("gen3"), "--arg",
                "x=fp32:128x64", "--reference", f"{REFS}:noisy", check_rc=1)
        text = self.clean(p)
        self.assertIn("ValueError: \\x1b[2J", text)

    def test_program_text_fields_are_escaped(self):
        with tempfile.TemporaryDirectory() as d:
            prog = os.path.join(d, "p.gsk")
            nki("run", HOSTILE, "--kernel", "noisy_nki", "--config", cfg("gen3"), "--arg",
                "x=fp32:128x64", "--keep-program", prog, "--max-instructions", "100",
                check_rc=2)
            noise = urllib.parse.quote("\x1b[2J\u202e", safe="")
            out = []
            with open(prog) as f:
                for ln in f.read().splitlines():
                    w = ln.split(" ")
                    if w[0] == "kernel":
                        w[1] += noise
                    elif w[0] == "file":
                        w[2] += noise
                    elif w[0] == "pool":
                        w[7] += noise
                    elif w[0] == "fail":
                        w[4] += noise
                    out.append(" ".join(w))
            with open(prog, "w") as f:
                f.write("\n".join(out) + "\n")
            for sub in ("replay",):
                p = nki(sub, prog, "--config", cfg("gen3"), check_rc=2)
                text = self.clean(p)
                self.assertIn("\\x1b[2J\\xe2\\x80\\xae", text)
            p = nki("replay", prog, "--config", cfg("gen3"), "--json", check_rc=2)
            self.clean(p)


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
