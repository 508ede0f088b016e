#!/usr/bin/env python3
"""Regenerates the README's results section from results JSON, so no figure is copied by hand.

    python3 scripts/render_readme.py --readme README.md --bench docs/results/h200-bench.json
                                     [--sweep docs/results/h200-sweep.json] [--img-dir docs/img]
                                     [--prefix h200-] [--check]

Everything between the lines ``<!-- results:begin -->`` and ``<!-- results:end -->`` is replaced
(the markers stay) by: one line naming the GPU, driver, CUDA runtime, commit, date and peak
bandwidth; one markdown table per (op, dtype, N) of the bench file; and, with --sweep, links to
the three figures that ``plot.py`` writes (same names, same --prefix).

The output depends only on the JSON files and on paths relative to the README, so it is the same
from any working directory. --check writes nothing and exits 1 when the README is out of date
(CI drift check), 0 when it is current; unusable input exits 2 with one line on stderr.
"""

import argparse
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (shared schema reading; matplotlib is not imported by it)

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"


class ReadmeError(Exception):
    """A README that cannot be updated: missing, or without one well-ordered pair of markers."""


# --------------------------------------------------------------------------- formatting


def format_time(us):
    """"127.6 us" below 1 ms, "1.234 ms" from 1 ms up."""
    return f"{us:.1f} us" if round(us, 1) < 1000 else f"{us / 1000:.3f} ms"


def format_bytes(nbytes):
    """Decimal units, as the C++ table prints the bytes read."""
    for unit, scale, fmt in (("GB", 1e9, "{:.2f}"), ("MB", 1e6, "{:.1f}"), ("KB", 1e3, "{:.1f}")):
        if nbytes >= scale:
            return f"{fmt.format(nbytes / scale)} {unit}"
    return f"{nbytes:.0f} B"


#: Characters that markdown would read as markup inside a table cell: "2*s*tid" would render
#: an italic s, "reduce<float>" would vanish as an HTML tag and "|" would split the cell.
MARKDOWN_SPECIAL = "\\`*_<>[]|"


def cell(text):
    """Table cell text shown literally: markdown specials escaped, newlines flattened."""
    out = str(text).replace("\n", " ")
    return "".join("\\" + c if c in MARKDOWN_SPECIAL else c for c in out)


def context_line(context):
    """Where the numbers come from, in one line."""
    return (f"**{context['gpu']}** · driver {context.get('driver', '?')} · "
            f"CUDA runtime {context.get('cuda_runtime', '?')} · commit `{context['commit']}` · "
            f"{context['date']} · theoretical peak {context['peak_gbps']:,.1f} GB/s")


def groups(rows):
    """[((op, dtype, n), rows)] in first-seen order, as the C++ table groups them."""
    out = {}
    for r in rows:
        out.setdefault((r["op"], r["dtype"], r["n"]), []).append(r)
    return list(out.items())


def render_group(key, rows):
    """One markdown table; 'vs V0' only when V0 is ok, 'time / CUB' only when CUB is ok.

    Rows that were not timed stay in the table with their status, so a failure is visible
    rather than silently missing.
    """
    op, dtype, n = key
    v0 = next((r for r in rows if r["impl"] == "V0" and plot.is_ok(r)), None)
    cub = next((r for r in rows if plot.is_cub(r) and plot.is_ok(r)), None)
    head = ["impl", "change", "median", "noise", "GB/s", "% of peak"]
    align = ["---", "---", "---:", "---:", "---:", "---:"]
    if v0:
        head.append("vs V0")
        align.append("---:")
    if cub:
        head.append("time / CUB")
        align.append("---:")
    lines = [f"**{op} {dtype}, N = {plot.format_count(n)}** ({format_bytes(rows[0]['bytes'])} read)", "",
             "| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        cells = [cell(r["impl"]), cell(r.get("change", ""))]
        if not plot.is_ok(r):
            cells += [cell(r["status"])] + [""] * (len(head) - 3)
        else:
            cells += [format_time(r["median_us"]), f"{r.get('noise_pct', 0):.1f}%", f"{r['gbps']:.0f}",
                      f"{r.get('peak_pct', 0):.1f}%"]
            if v0:
                cells.append(f"{v0['median_us'] / r['median_us']:.2f}x")
            if cub:
                cells.append(f"{r['median_us'] / cub['median_us']:.2f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def relpath(path, readme):
    """Path as a link from the README: relative to its folder, with forward slashes."""
    rel = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(readme)))
    return rel.replace(os.sep, "/")


def figure_links(sweep_path, sweep_doc, img_dir, prefix, readme):
    """Markdown image links to the figures plot.py writes from the sweep, with their provenance."""
    ctx = sweep_doc["context"]
    names = plot.figure_names(prefix)
    alt = {"bandwidth": "GB/s against N", "ladder": "the ladder as bars, labelled with speedup over V0",
           "latency": "median time against N"}
    lines = [f"Figures from `{relpath(sweep_path, readme)}` ({ctx['gpu']}, commit `{ctx['commit']}`, "
             f"{ctx['date']}), drawn by `scripts/plot.py`:", ""]
    for f in plot.FIGURES:
        target = os.path.join(img_dir, names[f])
        if not os.path.exists(target):
            print(f"render_readme.py: warning: {target} does not exist (run scripts/plot.py)", file=sys.stderr)
        lines.append(f"![{alt[f]}]({relpath(target, readme)})")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def render_results(bench_path, bench_doc, readme, sweep=None, img_dir="docs/img", prefix=""):
    """The text that goes between the markers (without the markers)."""
    parts = [f"<!-- generated by scripts/render_readme.py from {relpath(bench_path, readme)}; "
             f"edits here are overwritten -->", context_line(bench_doc["context"])]
    rows = bench_doc["results"]
    if not rows:
        raise plot.ResultsError(f"{bench_path}: no results")
    parts += [render_group(key, group) for key, group in groups(rows)]
    if sweep is not None:
        sweep_path, sweep_doc = sweep
        parts.append(figure_links(sweep_path, sweep_doc, img_dir, prefix, readme))
    return "\n\n".join(parts)


def replace_section(text, body):
    """text with the lines between the markers replaced by body; markers must each appear once,
    alone on a line, begin before end."""
    lines = text.splitlines(keepends=True)
    begins = [i for i, l in enumerate(lines) if l.strip() == BEGIN]
    ends = [i for i, l in enumerate(lines) if l.strip() == END]
    if len(begins) != 1 or len(ends) != 1:
        missing = [m for m, found in ((BEGIN, begins), (END, ends)) if len(found) != 1]
        raise ReadmeError(f"needs each marker exactly once on its own line: {', '.join(missing)}")
    b, e = begins[0], ends[0]
    if e < b:
        raise ReadmeError(f"{END} comes before {BEGIN}")
    newline = "\r\n" if lines[b].endswith("\r\n") else "\n"
    block = newline + body.replace("\n", newline) + newline + newline
    if not lines[b].endswith(("\n", "\r")):
        lines[b] += newline
    return "".join(lines[: b + 1]) + block + "".join(lines[e:])


# --------------------------------------------------------------------------- command line


def parse_args(argv):
    p = argparse.ArgumentParser(prog="render_readme.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--readme", required=True, help="README to update in place")
    p.add_argument("--bench", required=True, help="JSON written by `reducelab bench --json`")
    p.add_argument("--sweep", help="JSON written by `reducelab sweep --json`; adds the figures")
    p.add_argument("--img-dir", default="docs/img", help="where plot.py wrote the figures")
    p.add_argument("--prefix", default="", help="figure file name prefix given to plot.py")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if the README is out of date")
    return p.parse_args(argv)


def main(argv=None):
    """Returns 0 (updated or current), 1 (--check found drift) or 2 (unusable input)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        bench = plot.load_results(args.bench)
        sweep = (args.sweep, plot.load_results(args.sweep)) if args.sweep else None
        try:
            with open(args.readme, encoding="utf-8", newline="") as f:
                old = f.read()
        except OSError as e:
            raise ReadmeError(f"cannot read: {e.strerror or e}") from None
        body = render_results(args.bench, bench, args.readme, sweep, args.img_dir, args.prefix)
        new = replace_section(old, body)
    except plot.ResultsError as e:
        print(f"render_readme.py: error: {e}", file=sys.stderr)
        return 2
    except ReadmeError as e:
        print(f"render_readme.py: error: {args.readme}: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new == old:
            return 0
        diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), args.readme, "regenerated")
        sys.stderr.writelines(diff)
        print(f"render_readme.py: {args.readme} is out of date; rerun without --check", file=sys.stderr)
        return 1
    if new != old:
        with open(args.readme, "w", encoding="utf-8", newline="") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
