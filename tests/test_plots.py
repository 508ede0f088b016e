#!/usr/bin/env python3
"""Tests of scripts/plot.py and scripts/render_readme.py on the hand-made fixtures in tests/data.

Plain unittest, so CI needs only python3 and matplotlib:

    python3 -m unittest tests/test_plots.py -v      or      python3 tests/test_plots.py

Without matplotlib the module exits with code 77, which ctest is told means "skipped".
The fixtures hold fake numbers; they are test inputs, never results.
"""

import contextlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import matplotlib  # noqa: F401  (only its presence is checked here)
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"test_plots: skipped: matplotlib is not importable ({e})")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
DATA = os.path.join(ROOT, "tests", "data")
SWEEP = os.path.join(DATA, "sweep_fixture.json")
BENCH = os.path.join(DATA, "bench_fixture.json")
AXIS_SWEEP = os.path.join(DATA, "axis_sweep_fixture.json")
PYTHON_BENCH = os.path.join(DATA, "python_bench_fixture.json")
sys.path.insert(0, SCRIPTS)

import plot  # noqa: E402
import render_readme  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from the IHDR chunk, which the PNG format puts right after the signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def quiet(fn, *args):
    """Calls fn(*args) with stdout/stderr captured; returns (result, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        result = fn(*args)
    return result, out.getvalue(), err.getvalue()


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="reducelab-plots-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def read(self, name):
        with open(os.path.join(self.tmp, name), encoding="utf-8", newline="") as f:
            return f.read()


# --------------------------------------------------------------------------- plot.py helpers


class PlotHelperTest(unittest.TestCase):
    def setUp(self):
        self.sweep = plot.load_results(SWEEP)
        self.bench = plot.load_results(BENCH)

    def test_fixtures_follow_the_schema(self):
        for doc in (self.sweep, self.bench):
            self.assertEqual(doc["schema"], "reducelab.results/1")
            plot.validate(doc)

    def test_select_skips_rows_that_are_not_ok(self):
        rows = plot.select(self.sweep["results"], "sum", "f32")
        self.assertEqual(len(self.sweep["results"]), 24)
        self.assertEqual(len(rows), 23)
        self.assertTrue(all(r["status"] == "ok" for r in rows))
        self.assertNotIn(2**20, [n for n, _ in plot.series(rows, "V0")])
        self.assertEqual(plot.select(self.sweep["results"], "max", "f32"), [])

    def test_first_op_dtype_is_the_default(self):
        self.assertEqual(plot.first_op_dtype(self.sweep["results"]), ("sum", "f32"))

    def test_sizes_and_series(self):
        rows = plot.select(self.sweep["results"], "sum", "f32")
        self.assertEqual(plot.sizes(rows), [2**k for k in range(10, 21, 2)])
        self.assertEqual([n for n, _ in plot.series(rows, "V7")], [2**k for k in range(10, 21, 2)])

    def test_implementations_in_ladder_order(self):
        rows = plot.select(self.bench["results"], "sum", "f32")
        expected = [f"V{i}" for i in range(8)] + ["CUB", "reducelab"]
        self.assertEqual(plot.implementations(list(reversed(rows))), expected)
        self.assertEqual(plot.implementations(plot.select(self.sweep["results"], "sum", "f32")),
                         ["V0", "V7", "CUB", "reducelab"])

    def test_default_ladder_n_is_largest_n_with_v0_ok(self):
        rows = plot.select(self.sweep["results"], "sum", "f32")
        self.assertEqual(plot.default_ladder_n(rows), 2**18)  # V0 at 2^20 is a wrong result

    def test_default_ladder_n_falls_back_to_largest_n(self):
        rows = [r for r in plot.select(self.sweep["results"], "sum", "f32") if r["impl"] != "V0"]
        self.assertEqual(plot.default_ladder_n(rows), 2**20)

    def test_speedups_over_v0(self):
        rows = plot.select(self.bench["results"], "sum", "f32")
        up = plot.speedups(rows)
        self.assertAlmostEqual(up["V0"], 1.0)
        self.assertAlmostEqual(up["V1"], 2.0)
        self.assertAlmostEqual(up["V7"], 2000.0 / 320.0)
        self.assertAlmostEqual(up["CUB"], 2000.0 / 300.0)
        self.assertAlmostEqual(up["reducelab"], 2000.0 / 280.0)
        self.assertEqual(plot.speedups(plot.select(self.bench["results"], "max", "f32")), {})

    def test_ladder_bar_labels(self):
        rows = plot.select(self.bench["results"], "sum", "f32")
        bars = plot.ladder_bars(rows, 2**27)
        self.assertEqual([impl for impl, _, _ in bars], [f"V{i}" for i in range(8)] + ["CUB", "reducelab"])
        self.assertEqual([label for _, _, label in bars],
                         ["1.0x", "2.0x", "2.5x", "3.2x", "4.0x", "5.0x", "5.7x", "6.2x", "6.7x", "7.1x"])

    def test_ladder_bar_labels_without_v0_show_bandwidth(self):
        rows = plot.select(self.bench["results"], "max", "f32")
        self.assertEqual([label for _, _, label in plot.ladder_bars(rows, 2**27)], ["1,760 GB/s", "1,851 GB/s"])

    def test_ladder_bars_on_the_sweep_skip_the_wrong_v0(self):
        rows = plot.select(self.sweep["results"], "sum", "f32")
        self.assertEqual([impl for impl, _, _ in plot.ladder_bars(rows, 2**20)], ["V7", "CUB", "reducelab"])
        labels = [label for _, _, label in plot.ladder_bars(rows, 2**18)]
        self.assertEqual(labels, ["1.0x", "1.6x", "0.8x", "1.5x"])  # 7.5 us over 7.5, 4.7, 9.6, 5.1

    def test_ceilings_leave_out_what_was_not_measured(self):
        self.assertEqual([g for _, g in plot.ceilings(self.sweep["context"])], [2000.0, 1500.0])
        self.assertEqual([g for _, g in plot.ceilings(self.bench["context"])], [2000.0])  # copy_gbps 0

    def test_floor_is_bytes_over_peak_plus_launch(self):
        self.assertAlmostEqual(plot.floor_us(2_000_000, {"peak_gbps": 2000.0, "launch_us": 4.0}), 5.0)
        self.assertAlmostEqual(plot.floor_us(2_000_000, {"peak_gbps": 2000.0, "launch_us": 0}), 1.0)

    def test_format_count_and_ticks(self):
        self.assertEqual(plot.format_count(2**27), "2^27")
        self.assertEqual(plot.format_count(1000), "1000")
        self.assertEqual(plot.pow2_ticks([2**10, 2**20]), [2**k for k in range(10, 21)])
        self.assertEqual(plot.pow2_ticks([2**10, 2**30]), [2**k for k in range(10, 31, 2)])

    def test_figure_names_match_between_scripts(self):
        self.assertEqual(plot.figure_names("h200-"),
                         {"bandwidth": "h200-bandwidth.png", "ladder": "h200-ladder.png", "latency": "h200-latency.png"})


# --------------------------------------------------------------------------- plot.py figures


class PlotRenderTest(TempDirTest):
    def render(self, *extra):
        out = os.path.join(self.tmp, "img")
        rc, stdout, stderr = quiet(plot.main, [SWEEP, "--out", out, *extra])
        self.assertEqual(rc, 0, stderr)
        return out, stdout

    def check_png(self, path):
        self.assertTrue(os.path.isfile(path), path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), PNG_SIGNATURE, path)
        self.assertGreater(os.path.getsize(path), 10_000, path)
        width, height = png_size(path)
        self.assertTrue(1000 <= width <= 1600, (path, width))
        self.assertTrue(600 <= height <= 1000, (path, height))

    def test_renders_three_pngs(self):
        out, stdout = self.render()
        for name in ("bandwidth.png", "ladder.png", "latency.png"):
            self.check_png(os.path.join(out, name))
        self.assertEqual(len(stdout.splitlines()), 3)

    def test_prefix_and_options(self):
        out, _ = self.render("--prefix", "h200-", "--op", "sum", "--dtype", "f32", "--ladder-n", str(2**20),
                             "--ladder-metric", "time")
        self.assertEqual(sorted(os.listdir(out)), ["h200-bandwidth.png", "h200-ladder.png", "h200-latency.png"])
        for name in os.listdir(out):
            self.check_png(os.path.join(out, name))

    def test_ladder_at_an_n_without_rows_fails(self):
        rc, _, stderr = quiet(plot.main, [SWEEP, "--out", self.tmp, "--ladder-n", "3"])
        self.assertEqual(rc, 2)
        self.assertIn("N = 3", stderr)

    def test_unknown_op_fails(self):
        rc, _, stderr = quiet(plot.main, [SWEEP, "--out", self.tmp, "--op", "argmax"])
        self.assertEqual(rc, 2)
        self.assertIn("no ok rows for argmax f32", stderr)


class AxisSweepPlotTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.rows = plot.select(plot.load_results(AXIS_SWEEP)["results"], "sum", "f32")

    def test_rows_are_drawn_against_row_length(self):
        picked = plot.axis_sweep_rows(self.rows, "rows")
        self.assertEqual(len(picked), 10)
        self.assertEqual(plot.sizes(picked, "reduced"), [2**k for k in range(2, 11, 2)])
        self.assertEqual([r["shape"] for _, r in plot.series(picked, "CUB", "reduced")][:2],
                         ["262144x4", "65536x16"])

    def test_columns_are_drawn_against_kept_columns_skipping_wrong_results(self):
        picked = plot.axis_sweep_rows(self.rows, "columns")
        self.assertEqual(plot.sizes(picked, "kept"), [2**k for k in range(0, 9, 2)])
        self.assertEqual([k for k, _ in plot.series(picked, "reducelab", "kept")], [1, 4, 64, 256])
        self.assertEqual(plot.axis_sweep_rows(plot.select(plot.load_results(SWEEP)["results"], "sum", "f32"),
                                              "rows"), [])  # a size sweep has no axes

    def test_renders_both_figures_to_the_paths_given(self):
        rows_png = os.path.join(self.tmp, "results", "fx-axis-rows.png")
        columns_png = os.path.join(self.tmp, "fx-axis-columns.png")
        rc, stdout, stderr = quiet(plot.main, [AXIS_SWEEP, "--axis-rows", rows_png, "--axis-columns", columns_png])
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(stdout.splitlines(), [rows_png, columns_png])
        for path in (rows_png, columns_png):
            PlotRenderTest.check_png(self, path)

    def test_a_size_sweep_has_no_axis_rows(self):
        rc, _, stderr = quiet(plot.main, [SWEEP, "--axis-columns", os.path.join(self.tmp, "c.png")])
        self.assertEqual(rc, 2)
        self.assertIn("--axis-sweep columns", stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)

    def test_some_output_is_required(self):
        proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot.py"), AXIS_SWEEP],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("one of --out, --axis-rows, --axis-columns and --python-whole is required",
                      proc.stderr)


class PythonBenchPlotTest(TempDirTest):
    def test_whole_rows_become_one_series_per_library(self):
        with open(PYTHON_BENCH, encoding="utf-8") as f:
            context, rows = plot.python_bench_results(json.load(f))
        self.assertEqual(context["gpu"], "Fixture GPU")
        self.assertEqual(plot.implementations(rows), ["reducelab", "CuPy", "torch"])
        self.assertEqual(plot.sizes(rows), [1024, 1048576, 1073741824])
        self.assertEqual([r["gbps"] for _, r in plot.series(rows, "torch")], [0.5, 400.0, 4000.0])

    def test_renders_the_figure(self):
        png = os.path.join(self.tmp, "img", "python-whole.png")
        rc, stdout, stderr = quiet(plot.main, [PYTHON_BENCH, "--python-whole", png])
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(stdout.splitlines(), [png])
        PlotRenderTest.check_png(self, png)

    def test_a_results_file_is_not_a_python_bench(self):
        rc, _, stderr = quiet(plot.main, [SWEEP, "--python-whole", os.path.join(self.tmp, "p.png")])
        self.assertEqual(rc, 2)
        self.assertIn("not a python -m reducelab.bench file", stderr)


class PlotErrorTest(TempDirTest):
    def expect_one_line_error(self, path, fragment):
        rc, _, stderr = quiet(plot.main, [path, "--out", os.path.join(self.tmp, "img")])
        self.assertEqual(rc, 2)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertIn(fragment, stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "img", "bandwidth.png")))

    def test_missing_file(self):
        self.expect_one_line_error(os.path.join(self.tmp, "nope.json"), "no such file")

    def test_not_json(self):
        self.expect_one_line_error(self.write("bad.json", "{not json"), "not valid JSON")

    def test_wrong_schema(self):
        self.expect_one_line_error(self.write("bad.json", json.dumps({"schema": "other/2"})), "schema")

    def test_row_without_median(self):
        with open(SWEEP, encoding="utf-8") as f:
            doc = json.load(f)
        del doc["results"][3]["median_us"]
        self.expect_one_line_error(self.write("bad.json", json.dumps(doc)), "results[3] lacks median_us")

    def test_command_line_exit_status(self):
        bad = self.write("bad.json", "[]")
        proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot.py"), bad, "--out", self.tmp],
                              capture_output=True, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(proc.stderr.strip().count("\n"), 0, proc.stderr)
        self.assertIn("plot.py: error:", proc.stderr)


# --------------------------------------------------------------------------- render_readme.py

EXPECTED_SECTION = """<!-- results:begin -->

<!-- generated by scripts/render_readme.py from docs/results/bench.json; edits here are overwritten -->

**Fixture GPU (fake numbers)** · driver 000.00.00 · CUDA runtime 13.0 · commit `fixture0commit` · 2000-01-01T00:00:00Z · theoretical peak 2,000.0 GB/s

**sum f32, N = 2^27** (536.9 MB read)

| impl | change | median | noise | GB/s | % of peak | vs V0 | time / CUB |
|---|---|---:|---:|---:|---:|---:|---:|
| V0 | tid % (2\\*step) == 0 picks the working threads | 2.000 ms | 0.4% | 268 | 13.4% | 1.00x | 6.67x |
| V1 | index = 2\\*s\\*tid: whole warps work or skip | 1.000 ms | 0.5% | 537 | 26.8% | 2.00x | 3.33x |
| V2 | sequential addressing: stride halves from blockDim/2 | 800.0 us | 0.3% | 671 | 33.5% | 2.50x | 2.67x |
| V3 | two elements per thread, first add on load | 625.0 us | 0.6% | 859 | 43.0% | 3.20x | 2.08x |
| V4 | last warp unrolled, no \\_\\_syncthreads for s \\<= 32 | 500.0 us | 0.2% | 1074 | 53.7% | 4.00x | 1.67x |
| V5 | block size as a template parameter | 400.0 us | 0.8% | 1342 | 67.1% | 5.00x | 1.33x |
| V6 | \\_\\_shfl\\_down\\_sync inside warps | 350.0 us | 1.2% | 1534 | 76.7% | 5.71x | 1.17x |
| V7 | float4 loads and a grid-stride loop | 320.0 us | 0.7% | 1678 | 83.9% | 6.25x | 1.07x |
| CUB | cub::DeviceReduce::Sum | 300.0 us | 0.9% | 1790 | 89.5% | 6.67x | 1.00x |
| reducelab | reducelab::reduce (one kernel) | 280.0 us | 0.5% | 1917 | 95.9% | 7.14x | 0.93x |

**max f32, N = 2^27** (536.9 MB read)

| impl | change | median | noise | GB/s | % of peak | time / CUB |
|---|---|---:|---:|---:|---:|---:|
| CUB | cub::DeviceReduce::Max | 305.0 us | 0.4% | 1760 | 88.0% | 1.00x |
| reducelab | reducelab::reduce (one kernel) | 290.0 us | 0.3% | 1851 | 92.6% | 0.95x |

<!-- results:end -->
"""

README_BEFORE = "# reducelab\n\nIntro text.\n\n<!-- results:begin -->\nstale text\n<!-- results:end -->\n\n## After\n"


class RenderReadmeTest(TempDirTest):
    def setUp(self):
        super().setUp()
        # The README's links and provenance line are relative to it, so the fixtures are laid out
        # as in the repository: README.md, docs/results/*.json, docs/img/*.png.
        os.makedirs(os.path.join(self.tmp, "docs", "results"))
        shutil.copy(BENCH, os.path.join(self.tmp, "docs", "results", "bench.json"))
        shutil.copy(SWEEP, os.path.join(self.tmp, "docs", "results", "sweep.json"))
        self.readme = self.write("README.md", README_BEFORE)

    def run_render(self, *extra):
        args = ["--readme", self.readme, "--bench", os.path.join(self.tmp, "docs", "results", "bench.json"), *extra]
        return quiet(render_readme.main, args)

    def test_tables_exact(self):
        rc, _, stderr = self.run_render()
        self.assertEqual(rc, 0, stderr)
        text = self.read("README.md")
        self.assertEqual(text, "# reducelab\n\nIntro text.\n\n" + EXPECTED_SECTION + "\n## After\n")

    def test_idempotent(self):
        self.run_render()
        first = self.read("README.md")
        self.run_render()
        self.assertEqual(self.read("README.md"), first)

    def test_check_detects_drift(self):
        rc, _, stderr = self.run_render("--check")
        self.assertEqual(rc, 1)
        self.assertIn("out of date", stderr)
        self.assertEqual(self.read("README.md"), README_BEFORE)  # --check writes nothing
        self.run_render()
        rc, _, stderr = self.run_render("--check")
        self.assertEqual(rc, 0, stderr)
        self.write("README.md", self.read("README.md").replace("| 6.25x |", "| 6.30x |"))
        self.assertEqual(self.run_render("--check")[0], 1)

    def test_text_outside_markers_is_kept(self):
        self.write("README.md", README_BEFORE.replace("## After\n", "## After\n\nmore | text * here\n"))
        self.run_render()
        text = self.read("README.md")
        self.assertTrue(text.startswith("# reducelab\n\nIntro text.\n\n<!-- results:begin -->\n"))
        self.assertTrue(text.endswith("<!-- results:end -->\n\n## After\n\nmore | text * here\n"))
        self.assertNotIn("stale text", text)

    def test_crlf_readme_stays_crlf(self):
        self.write("README.md", README_BEFORE.replace("\n", "\r\n"))
        self.run_render()
        text = self.read("README.md")
        self.assertNotIn("\n", text.replace("\r\n", ""))
        self.assertEqual(self.run_render("--check")[0], 0)

    def test_missing_markers(self):
        for text in ("# no markers\n", "<!-- results:begin -->\nonly begin\n",
                     "<!-- results:end -->\n<!-- results:begin -->\n",
                     "<!-- results:begin -->\n<!-- results:begin -->\n<!-- results:end -->\n"):
            self.write("README.md", text)
            rc, _, stderr = self.run_render()
            self.assertEqual(rc, 2, text)
            self.assertIn("render_readme.py: error:", stderr)
            self.assertEqual(self.read("README.md"), text)

    def test_sweep_adds_figures(self):
        img = os.path.join(self.tmp, "docs", "img")
        rc, _, stderr = quiet(plot.main, [os.path.join(self.tmp, "docs", "results", "sweep.json"),
                                          "--out", img, "--prefix", "fx-"])
        self.assertEqual(rc, 0, stderr)
        rc, _, stderr = self.run_render("--sweep", os.path.join(self.tmp, "docs", "results", "sweep.json"),
                                        "--img-dir", img, "--prefix", "fx-")
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(stderr, "")  # the images exist, so no warning
        text = self.read("README.md")
        for name in ("bandwidth", "ladder", "latency"):
            self.assertIn(f"](docs/img/fx-{name}.png)", text)
        self.assertIn("Figures from `docs/results/sweep.json`", text)
        self.assertIn(EXPECTED_SECTION.split("<!-- results:end -->")[0].rstrip("\n"), text)

    def test_missing_images_only_warn(self):
        rc, _, stderr = self.run_render("--sweep", os.path.join(self.tmp, "docs", "results", "sweep.json"),
                                        "--img-dir", os.path.join(self.tmp, "docs", "img"))
        self.assertEqual(rc, 0)
        self.assertIn("warning", stderr)

    def test_same_output_from_any_working_directory(self):
        self.run_render()
        expected = self.read("README.md")
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)
        os.chdir(self.tmp)
        self.assertEqual(quiet(render_readme.main, ["--readme", "README.md", "--bench", "docs/results/bench.json",
                                                    "--check"])[0], 0)
        self.assertEqual(self.read("README.md"), expected)

    def test_bad_json_is_an_error(self):
        bad = self.write("docs/results/bad.json", "{\"schema\": \"reducelab.results/1\"}")
        for args in (["--bench", bad], ["--bench", os.path.join(self.tmp, "missing.json")],
                     ["--bench", os.path.join(self.tmp, "docs", "results", "bench.json"), "--sweep", bad]):
            rc, _, stderr = quiet(render_readme.main, ["--readme", self.readme, *args])
            self.assertEqual(rc, 2, args)
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertEqual(self.read("README.md"), README_BEFORE)

    def test_command_line_exit_status(self):
        proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, "render_readme.py"), "--readme", self.readme,
                               "--bench", os.path.join(self.tmp, "docs", "results", "bench.json"), "--check"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)


class RenderHelperTest(unittest.TestCase):
    def test_format_time(self):
        self.assertEqual(render_readme.format_time(127.6), "127.6 us")
        self.assertEqual(render_readme.format_time(999.9), "999.9 us")
        self.assertEqual(render_readme.format_time(999.96), "1.000 ms")
        self.assertEqual(render_readme.format_time(1234.0), "1.234 ms")
        self.assertEqual(render_readme.format_time(12345.0), "12.345 ms")

    def test_cells_are_literal(self):
        self.assertEqual(render_readme.cell("a|b 2*s*tid reduce<T> __x"), "a\\|b 2\\*s\\*tid reduce\\<T\\> \\_\\_x")

    def test_failed_row_keeps_its_status(self):
        row = {"impl": "V3", "kind": "ladder", "change": "x", "op": "sum", "dtype": "f32", "n": 1024,
               "bytes": 4096, "median_us": 0, "gbps": 0, "status": "wrong result: 3 != 4"}
        table = render_readme.render_group(("sum", "f32", 1024), [row])
        self.assertEqual(table.splitlines()[-1], "| V3 | x | wrong result: 3 != 4 |  |  |  |")
        self.assertNotIn("vs V0", table)


if __name__ == "__main__":
    unittest.main()
