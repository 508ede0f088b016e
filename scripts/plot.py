#!/usr/bin/env python3
"""Plots of a `reducelab sweep --json` results file.

    python3 scripts/plot.py RESULTS.json --out docs/img [--op sum] [--dtype f32]
                            [--ladder-n N] [--ladder-metric gbps|time] [--prefix h200-]
    python3 scripts/plot.py AXIS-SWEEP.json [--axis-rows ROWS.png] [--axis-columns COLUMNS.png]
    python3 scripts/plot.py PYTHON-BENCH.json --python-whole WHOLE.png [--op sum] [--dtype f32]

With --out, writes three PNG files into it:

* ``bandwidth.png``: GB/s against N, one line per implementation, with the theoretical peak and
  the measured device-to-device copy bandwidth as ceilings;
* ``ladder.png``: the ladder V0..V7, CUB and reducelab as bars at one N, each labelled with its
  speedup over V0;
* ``latency.png``: median time against N on log-log axes, with the launch-latency floor and the
  bandwidth floor (bytes / peak + one launch).

With --axis-rows / --axis-columns, from the rows of a `reducelab sweep --axis-sweep rows|columns`
file: GB/s of reducelab and CUB against the row length (2-D shapes reduced along axis 1) or
against the kept columns (reduced along axis 0), under the same ceilings, to the file given.

With --python-whole, from the ``whole`` suite of a ``python -m reducelab.bench --json`` file:
GB/s of reducelab, torch and CuPy against N (device time from Python, the same tensors), under
the theoretical peak when the file records it.

Every number drawn comes from the JSON file; nothing is typed in here. Rows whose status is not
"ok" are skipped. The module is importable (``main(argv)`` and pure helpers such as
``load_results``, ``select``, ``speedups``) so that tests and ``render_readme.py`` share one
reading of the schema; matplotlib is imported only when a figure is drawn, so the helpers work
without it.
"""

import argparse
import json
import math
import os
import sys

SCHEMA = "reducelab.results/1"

#: Fields every result row must carry; the scripts read nothing else from a row.
ROW_FIELDS = ("impl", "kind", "op", "dtype", "n", "bytes", "median_us", "gbps", "status")
#: Context fields the figures and the README line are built from.
CONTEXT_FIELDS = ("gpu", "commit", "date", "peak_gbps")

#: File names written by plot.py (before --prefix); render_readme.py links the same names.
FIGURES = ("bandwidth", "ladder", "latency")

#: The axis sweeps: (reduced axes of the 2-D shapes, x field of a row, x axis label, title).
AXIS_SWEEPS = {
    "rows": ("1", "reduced", "row length (elements reduced per result, axis 1)", "against row length"),
    "columns": ("0", "kept", "kept columns (results, axis 0 reduced)", "against kept columns"),
}

#: Fixed figure geometry, so that every run gives the same pixel size (tests check it).
FIG_SIZE_IN = (10.0, 6.0)
FIG_DPI = 120


class ResultsError(Exception):
    """A results file that cannot be used: missing, not JSON, or not the expected schema."""


# --------------------------------------------------------------------------- reading the JSON


def load_results(path):
    """Reads and validates one results file; returns the parsed document.

    Validation happens here, once, so that every later step can index fields without checks and
    a bad file gives one clear message instead of a traceback from deep inside matplotlib.
    """
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON: {e.msg} (line {e.lineno})") from None
    validate(doc, path)
    return doc


def validate(doc, where="results"):
    """Raises ResultsError unless ``doc`` follows the reducelab.results/1 schema."""
    if not isinstance(doc, dict):
        raise ResultsError(f"{where}: top level is not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ResultsError(f"{where}: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    context = doc.get("context")
    if not isinstance(context, dict):
        raise ResultsError(f"{where}: 'context' is missing or not an object")
    missing = [k for k in CONTEXT_FIELDS if k not in context]
    if missing:
        raise ResultsError(f"{where}: context lacks {', '.join(missing)}")
    results = doc.get("results")
    if not isinstance(results, list):
        raise ResultsError(f"{where}: 'results' is missing or not a list")
    for i, row in enumerate(results):
        if not isinstance(row, dict):
            raise ResultsError(f"{where}: results[{i}] is not an object")
        missing = [k for k in ROW_FIELDS if k not in row]
        if missing:
            raise ResultsError(f"{where}: results[{i}] lacks {', '.join(missing)}")
        if not isinstance(row["n"], int) or isinstance(row["n"], bool) or row["n"] <= 0:
            raise ResultsError(f"{where}: results[{i}].n is not a positive integer")
        for k in ("bytes", "median_us", "gbps"):
            if not isinstance(row[k], (int, float)) or isinstance(row[k], bool):
                raise ResultsError(f"{where}: results[{i}].{k} is not a number")


def is_ok(row):
    """True for rows that were timed and verified; the others ("wrong result: ...") are skipped."""
    return row.get("status") == "ok"


def select(rows, op, dtype):
    """The "ok" rows of one op and dtype, in file order."""
    return [r for r in rows if is_ok(r) and r["op"] == op and r["dtype"] == dtype]


def first_op_dtype(rows):
    """(op, dtype) of the first ok row: the default when --op/--dtype are not given."""
    for r in rows:
        if is_ok(r):
            return r["op"], r["dtype"]
    raise ResultsError("no row has status \"ok\"")


def is_cub(row):
    """CUB rows are recognised by kind, with the impl name as a fallback for older files."""
    return row.get("kind") == "cub" or row["impl"].upper() == "CUB"


def impl_rank(row):
    """Sort key that puts the ladder V0..V7 first, then CUB, then reducelab, then anything else.

    The order is the article's story (each rung fixes one bottleneck), so it is fixed rather than
    taken from the file.
    """
    impl = row["impl"]
    if row.get("kind") == "ladder" or (impl[:1] == "V" and impl[1:].isdigit()):
        digits = impl[1:]
        return (0, int(digits) if digits.isdigit() else 99, impl)
    if is_cub(row):
        return (1, 0, impl)
    if row.get("kind") == "production" or impl == "reducelab":
        return (2, 0, impl)
    return (3, 0, impl)


def implementations(rows):
    """Distinct impl names in ladder order."""
    first = {}
    for r in rows:
        first.setdefault(r["impl"], r)
    return [r["impl"] for r in sorted(first.values(), key=impl_rank)]


def series(rows, impl, x="n"):
    """[(x, row)] of one implementation sorted by the field x (N unless told); the first row wins
    if an x repeats."""
    by_x = {}
    for r in rows:
        if r["impl"] == impl:
            by_x.setdefault(r[x], r)
    return sorted(by_x.items())


def sizes(rows, x="n"):
    """Sorted distinct N (or values of the field x)."""
    return sorted({r[x] for r in rows})


def axis_sweep_rows(rows, sweep):
    """The rows of one axis sweep ("rows" or "columns"): 2-D shapes reduced along its axis, with
    the x field it is drawn against. Files without axes (older ones, size sweeps) have none."""
    axes, x = AXIS_SWEEPS[sweep][:2]
    return [r for r in rows if r.get("axes") == axes and str(r.get("shape", "")).count("x") == 1
            and isinstance(r.get(x), int) and r[x] > 0]


def at_n(rows, n):
    """The rows at one N, one per impl, in ladder order."""
    chosen = {}
    for r in rows:
        if r["n"] == n:
            chosen.setdefault(r["impl"], r)
    return sorted(chosen.values(), key=impl_rank)


def default_ladder_n(rows):
    """Largest N at which V0 has an ok result, else the largest N.

    V0 is the baseline of every speedup label, and a sweep may stop running V0 at large N
    because it is slow; the ladder is only meaningful where V0 was measured.
    """
    v0 = [r["n"] for r in rows if r["impl"] == "V0" and is_ok(r)]
    if v0:
        return max(v0)
    if not rows:
        raise ResultsError("no rows to plot")
    return max(r["n"] for r in rows)


def speedups(rows):
    """{impl: V0 median / impl median} for rows of one problem; {} when V0 is absent."""
    v0 = next((r for r in rows if r["impl"] == "V0" and is_ok(r)), None)
    if v0 is None:
        return {}
    return {r["impl"]: v0["median_us"] / r["median_us"] for r in rows if is_ok(r) and r["median_us"] > 0}


def speedup_label(s):
    """"5.7x": one decimal, as the article writes its speed column."""
    return f"{s:.1f}x"


def ladder_bars(rows, n):
    """[(impl, row, label)] for the ladder figure at N = n, in ladder order.

    The label is the speedup over V0; without V0 at that N, it is the bandwidth instead so the
    bar still says something.
    """
    here = at_n(rows, n)
    up = speedups(here)
    bars = []
    for r in here:
        label = speedup_label(up[r["impl"]]) if r["impl"] in up else f"{r['gbps']:,.0f} GB/s"
        bars.append((r["impl"], r, label))
    return bars


def ceilings(context):
    """[(label, GB/s)] of the horizontal ceilings: theoretical peak, and the measured
    device-to-device copy when it was measured (0 means not measured, so it is left out)."""
    peak = float(context.get("peak_gbps") or 0)
    out = [(f"theoretical peak {peak:,.0f} GB/s", peak)] if peak > 0 else []
    copy = float(context.get("copy_gbps") or 0)
    if copy > 0:
        out.append((f"measured D2D copy {copy:,.0f} GB/s (read+write)", copy))
    return out


def floor_us(nbytes, context):
    """The physical floor of one reduce: read every byte at peak bandwidth, plus one launch."""
    peak = float(context["peak_gbps"])
    launch = float(context.get("launch_us") or 0)
    return (nbytes / (peak * 1e3) if peak > 0 else 0.0) + launch


def format_count(n):
    """"2^27" for powers of two, digits otherwise (as the C++ table prints N)."""
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def _tex_count(n):
    """format_count for figure text: 2^27 as a superscript."""
    text = format_count(n)
    return f"$2^{{{text[2:]}}}$" if text.startswith("2^") else text


def pow2_ticks(ns, max_ticks=12):
    """Powers of two spanning ns, every one or every second so that labels do not collide."""
    lo = math.floor(math.log2(min(ns)))
    hi = math.ceil(math.log2(max(ns)))
    step = 1 if hi - lo + 1 <= max_ticks else 2
    return [2**k for k in range(lo, hi + 1, step)]


def footnote(context, source):
    """Provenance printed under every figure: which build and run produced it."""
    parts = [f"commit {context.get('commit', '?')}", str(context.get("date", "?"))]
    if context.get("reducelab_version"):
        parts.append(f"reducelab {context['reducelab_version']}")
    parts.append(f"source {os.path.basename(source)}")
    return " · ".join(parts)


#: The libraries a Python bench row times, as drawn (reducelab styled as the production rows).
PYTHON_LIBS = (("reducelab", "production"), ("torch", "torch"), ("cupy", "CuPy"))


def python_bench_results(doc, where="python bench"):
    """(context, rows) in this module's schema from the ``whole`` suite of a
    ``python -m reducelab.bench --json`` document: one row per library and size, status "ok"
    (the bench checks every result against torch before timing it)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("meta"), dict) or \
            not isinstance(doc.get("whole"), list):
        raise ResultsError(f"{where}: not a python -m reducelab.bench file with a 'whole' suite")
    meta = doc["meta"]
    context = {"gpu": meta.get("gpu", "?"), "commit": meta.get("commit", "?"),
               "date": meta.get("date", "?"), "peak_gbps": meta.get("peak_gbps", 0),
               "reducelab_version": meta.get("reducelab")}
    rows = []
    for i, row in enumerate(doc["whole"]):
        for lib, kind in PYTHON_LIBS:
            if lib not in row:
                continue
            timed = row[lib]
            if not all(isinstance(timed.get(k), (int, float)) for k in ("median_us", "gbps")):
                raise ResultsError(f"{where}: whole[{i}].{lib} lacks median_us or gbps")
            rows.append({"impl": "CuPy" if lib == "cupy" else lib, "kind": kind,
                         "op": row["op"], "dtype": row["dtype"], "n": int(row["n"]),
                         "bytes": timed["gbps"] * timed["median_us"] * 1e3,
                         "median_us": timed["median_us"], "gbps": timed["gbps"], "status": "ok"})
    return context, rows


def figure_names(prefix=""):
    """{figure: file name} as written by plot.py and linked by render_readme.py."""
    return {f: f"{prefix}{f}.png" for f in FIGURES}


# --------------------------------------------------------------------------- drawing


def _pyplot():
    """Imports pyplot on the Agg backend, only when something is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _style(row, index, count):
    """Line/bar style: the ladder fades along a colour map, CUB and reducelab stand out. A second
    CUB row (a newer CCCL's, e.g. "CUB 3.6 fixed") is grey and dotted beside the toolkit's."""
    plt = _pyplot()
    library = {"torch": {"color": "tab:orange", "linestyle": "--", "marker": "s"},
               "CuPy": {"color": "tab:green", "linestyle": "-.", "marker": "^"}}.get(row.get("kind"))
    if library is not None:  # the other libraries of a Python bench
        return library
    if is_cub(row):
        if row["impl"].upper() != "CUB":
            return {"color": "0.45", "linestyle": ":", "marker": "^"}
        return {"color": "black", "linestyle": "--", "marker": "s"}
    if impl_rank(row)[0] == 2:
        return {"color": "tab:red", "linestyle": "-", "marker": "D", "linewidth": 2.4}
    cmap = plt.get_cmap("viridis")
    return {"color": cmap(index / max(count - 1, 1) * 0.85), "linestyle": "-", "marker": "o"}


def _styles(rows):
    """{impl: style} with ladder colours spread over the rungs actually present."""
    firsts = {}
    for r in rows:
        firsts.setdefault(r["impl"], r)
    ordered = sorted(firsts.values(), key=impl_rank)
    ladder = [r for r in ordered if impl_rank(r)[0] == 0]
    styles = {}
    for r in ordered:
        i = ladder.index(r) if r in ladder else 0
        styles[r["impl"]] = _style(r, i, len(ladder))
    return styles


def _new_figure(context, source):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIG_SIZE_IN, dpi=FIG_DPI)
    fig.text(0.99, 0.01, footnote(context, source), ha="right", va="bottom", fontsize=8, color="0.35")
    return plt, fig, ax


def _pow2_axis(ax, ns, label="N (elements)"):
    """log2 x axis with ticks labelled 2^k."""
    ax.set_xscale("log", base=2)
    ticks = pow2_ticks(ns)
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"$2^{{{t.bit_length() - 1}}}$" for t in ticks])
    ax.set_xlim(min(ns) / 1.3, max(ns) * 1.3)
    ax.set_xlabel(label)


def _line_label(ax, text, y, color):
    """Label just above a horizontal reference line, on a white box so bars do not hide it."""
    ax.annotate(text, xy=(0.01, y), xycoords=("axes fraction", "data"), xytext=(0, 2), textcoords="offset points",
                va="bottom", fontsize=8, color=color,
                bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "none", "pad": 1.0}, zorder=4)


def _plain_log_ticks(axis, lo, hi):
    """Log axis labelled 1, 2, 5, 10, 20, ... rather than 6x10^0: times are read, not exponents.
    Over less than two decades every integer step is labelled, or there would be one or two."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    subs = (1.0, 2.0, 5.0) if hi / lo >= 100 else (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
    axis.set_minor_formatter(NullFormatter())


def _save(plt, fig, path):
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=FIG_DPI)
    plt.close(fig)


def plot_bandwidth(rows, context, op, dtype, path, source="", x="n", x_label="N (elements)",
                   against="against N", y_label="GB/s (bytes read / median time)"):
    """GB/s against N (or the field x) per implementation, under the peak and copy ceilings."""
    plt, fig, ax = _new_figure(context, source)
    styles = _styles(rows)
    for impl in implementations(rows):
        pts = series(rows, impl, x)
        ax.plot([v for v, _ in pts], [r["gbps"] for _, r in pts], label=impl, markersize=4, **styles[impl])
    for (label, gbps), style in zip(ceilings(context), ({"color": "tab:gray", "linestyle": ":"},
                                                         {"color": "tab:blue", "linestyle": "-."})):
        ax.axhline(gbps, linewidth=1.2, **style)
        _line_label(ax, label, gbps, style["color"])
    _pow2_axis(ax, sizes(rows, x), x_label)
    ax.set_ylim(0, max([c for _, c in ceilings(context)] + [r["gbps"] for r in rows]) * 1.1)
    ax.set_ylabel(y_label)
    ax.set_title(f"{context['gpu']}: {op} {dtype}, bandwidth {against}")
    ax.grid(True, which="major", alpha=0.3)
    # Curves climb to the right and the ceiling labels sit top left: the middle left is free.
    ax.legend(loc="center left", fontsize=8, ncol=2)
    _save(plt, fig, path)


def plot_axis_sweep(rows, context, op, dtype, sweep, path, source=""):
    """GB/s of reducelab and CUB against the row length or the kept columns of an axis sweep."""
    picked = axis_sweep_rows(rows, sweep)
    if not picked:
        raise ResultsError(f"no ok {op} {dtype} rows of an axis sweep of {sweep} "
                           f"(reducelab sweep --axis-sweep {sweep})")
    total = max(r["n"] for r in picked)
    _, x, x_label, against = AXIS_SWEEPS[sweep]
    plot_bandwidth(picked, context, op, dtype, path, source, x=x, x_label=x_label,
                   against=f"{against}, N = {_tex_count(total)}",
                   y_label="GB/s (bytes read and written / median time)")


def plot_ladder(rows, context, op, dtype, n, path, source="", metric="gbps"):
    """The ladder as bars at one N, each labelled with its speedup over V0."""
    bars = ladder_bars(rows, n)
    if not bars:
        raise ResultsError(f"no ok {op} {dtype} rows at N = {format_count(n)}")
    plt, fig, ax = _new_figure(context, source)
    styles = _styles(rows)
    key = "gbps" if metric == "gbps" else "median_us"
    xs = range(len(bars))
    heights = [r[key] for _, r, _ in bars]
    rects = ax.bar(xs, heights, color=[styles[i]["color"] for i, _, _ in bars], edgecolor="black", linewidth=0.5)
    for rect, (_, r, label) in zip(rects, bars):
        ax.annotate(label, xy=(rect.get_x() + rect.get_width() / 2, rect.get_height()), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=9, fontweight="bold")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([i for i, _, _ in bars])
    nbytes = bars[0][1]["bytes"]
    if metric == "gbps":
        ref, ref_label = float(context["peak_gbps"]), f"theoretical peak {context['peak_gbps']:,.0f} GB/s"
        ax.set_ylabel("GB/s (bytes read / median time)")
    else:
        ref = floor_us(nbytes, context)
        ref_label = f"floor: bytes / peak + launch = {ref:,.1f} us"
        ax.set_ylabel("median time (us)")
    ax.axhline(ref, color="0.3", linestyle=":", linewidth=1.4, zorder=3)  # over the bars it cuts
    _line_label(ax, ref_label, ref, "0.3")
    ax.set_ylim(0, max(heights + [ref]) * 1.15)
    ax.set_title(f"{context['gpu']}: {op} {dtype}, the ladder at N = {_tex_count(n)} "
                 f"({nbytes / 1e6:,.1f} MB), labels = speedup over V0")
    ax.grid(True, axis="y", alpha=0.3)
    _save(plt, fig, path)


def plot_latency(rows, context, op, dtype, path, source=""):
    """Median time against N on log-log axes, above the launch and bandwidth floors."""
    plt, fig, ax = _new_figure(context, source)
    styles = _styles(rows)
    for impl in implementations(rows):
        pts = series(rows, impl)
        ax.plot([n for n, _ in pts], [r["median_us"] for _, r in pts], label=impl, markersize=4, **styles[impl])
    ns = sizes(rows)
    nbytes = {n: max(r["bytes"] for r in rows if r["n"] == n) for n in ns}
    launch = float(context.get("launch_us") or 0)
    if launch > 0:
        ax.axhline(launch, color="tab:blue", linestyle="-.", linewidth=1.2,
                   label=f"launch latency {launch:.1f} us")
    ax.plot(ns, [floor_us(nbytes[n], context) for n in ns], color="tab:gray", linestyle=":", linewidth=1.5,
            label=f"floor: bytes / {context['peak_gbps']:,.0f} GB/s" + (" + launch" if launch > 0 else ""))
    _pow2_axis(ax, ns)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis, *ax.get_ylim())
    ax.set_ylabel("median time (us)")
    ax.set_title(f"{context['gpu']}: {op} {dtype}, time against N")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    _save(plt, fig, path)


# --------------------------------------------------------------------------- command line


def parse_args(argv):
    p = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="JSON file written by `reducelab sweep --json`")
    p.add_argument("--out", help="directory for the three PNG files of a size sweep (created if missing)")
    p.add_argument("--op", help="op to plot (default: the first in the file)")
    p.add_argument("--dtype", help="dtype to plot (default: the first in the file)")
    p.add_argument("--ladder-n", type=int, help="N of the ladder figure (default: largest N with V0 ok)")
    p.add_argument("--ladder-metric", choices=("gbps", "time"), default="gbps", help="bar height")
    p.add_argument("--prefix", default="", help="file name prefix, e.g. h200-")
    p.add_argument("--axis-rows", metavar="PNG",
                   help="GB/s against row length from a `sweep --axis-sweep rows` file, to this file")
    p.add_argument("--axis-columns", metavar="PNG",
                   help="GB/s against kept columns from a `sweep --axis-sweep columns` file, to this file")
    p.add_argument("--python-whole", metavar="PNG",
                   help="GB/s against N of reducelab, torch and CuPy from a `python -m "
                        "reducelab.bench --json` file, to this file")
    args = p.parse_args(argv)
    if not (args.out or args.axis_rows or args.axis_columns or args.python_whole):
        p.error("one of --out, --axis-rows, --axis-columns and --python-whole is required")
    return args


def main(argv=None):
    """Writes the figures asked for; returns 0, or 2 after one line on stderr for unusable input."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.python_whole:
        return _main_python(args)
    try:
        doc = load_results(args.results)
        context, results = doc["context"], doc["results"]
        first_op, first_dtype = first_op_dtype(results)
        op, dtype = args.op or first_op, args.dtype or first_dtype
        rows = select(results, op, dtype)
        if not rows:
            raise ResultsError(f"{args.results}: no ok rows for {op} {dtype}")
        written = []
        for sweep, path in (("rows", args.axis_rows), ("columns", args.axis_columns)):
            if path:
                if os.path.dirname(path):
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                plot_axis_sweep(rows, context, op, dtype, sweep, path, args.results)
                written.append(path)
        if args.out:
            n = args.ladder_n if args.ladder_n is not None else default_ladder_n(rows)
            os.makedirs(args.out, exist_ok=True)
            names = figure_names(args.prefix)
            paths = {f: os.path.join(args.out, name) for f, name in names.items()}
            plot_bandwidth(rows, context, op, dtype, paths["bandwidth"], args.results)
            plot_ladder(rows, context, op, dtype, n, paths["ladder"], args.results, args.ladder_metric)
            plot_latency(rows, context, op, dtype, paths["latency"], args.results)
            written += [paths[f] for f in FIGURES]
    except (ResultsError, ImportError, OSError) as e:
        return _report(e, args.out or args.axis_rows or args.axis_columns)
    for path in written:
        print(path)
    return 0


def _report(error, where):
    """One line on stderr for an unusable input, a missing matplotlib or an unwritable output;
    returns 2, the exit code of every such failure."""
    if isinstance(error, ImportError):
        print(f"plot.py: error: matplotlib is needed to draw ({error})", file=sys.stderr)
    elif isinstance(error, OSError):
        print(f"plot.py: error: cannot write {error.filename or where}: {error.strerror or error}",
              file=sys.stderr)
    else:
        print(f"plot.py: error: {error}", file=sys.stderr)
    return 2


def _main_python(args):
    """--python-whole: the whole-array figure of a Python bench file."""
    try:
        try:
            with open(args.results, encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            raise ResultsError(f"{args.results}: no such file") from None
        except json.JSONDecodeError as e:
            raise ResultsError(f"{args.results}: not valid JSON: {e.msg} (line {e.lineno})") from None
        context, results = python_bench_results(doc, args.results)
        first_op, first_dtype = first_op_dtype(results)
        op, dtype = args.op or first_op, args.dtype or first_dtype
        rows = select(results, op, dtype)
        if not rows:
            raise ResultsError(f"{args.results}: no whole-array rows for {op} {dtype}")
        if os.path.dirname(args.python_whole):
            os.makedirs(os.path.dirname(args.python_whole), exist_ok=True)
        plot_bandwidth(rows, context, op, dtype, args.python_whole, args.results,
                       against="against N, from Python (torch and CuPy on the same tensors)",
                       y_label="GB/s (bytes read / median device time)")
    except (ResultsError, ImportError, OSError) as e:
        return _report(e, args.python_whole)
    print(args.python_whole)
    return 0


if __name__ == "__main__":
    sys.exit(main())
