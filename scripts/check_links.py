#!/usr/bin/env python3
"""Check that every relative link in the project's Markdown resolves.

    python3 scripts/check_links.py [--root .] [FILE.md ...]

Without files it checks README.md and every docs/**/*.md. For each inline link or image
`[text](target)` outside code blocks and code spans it checks that the target file exists
(relative to the page) and, for `page.md#anchor`, that the page has a heading with that
GitHub-style anchor. It also checks repository paths written in code spans
(`docs/...`, `src/...`, `scripts/...`, `include/...`, `tests/...`, `cmake/...`, no wildcards),
resolved from the repository root, so prose that names a moved file fails too.
Web links (http, https, mailto) are not fetched. Exit 0 when all resolve, 1 otherwise.
"""
import argparse
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
REPO_PATH = re.compile(r"^(?:docs|src|scripts|include|tests|cmake)/[\w./-]+$")
FENCE = re.compile(r"^\s*(```|~~~)")


def strip_code(lines):
    """The page's lines with fenced blocks blanked; code spans are handled per line."""
    out, in_fence = [], False
    for line in lines:
        if FENCE.match(line):
            in_fence = not in_fence
            out.append("")
            continue
        out.append("" if in_fence else line)
    return out


def slug(heading, seen):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    text = text.replace(" ", "-")
    n = seen.get(text, 0)
    seen[text] = n + 1
    return text if n == 0 else f"{text}-{n}"


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            for line in strip_code(f.read().splitlines()):
                m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
                if m:
                    found.add(slug(m.group(2), seen))
        cache[path] = found
    return cache[path]


def check_page(page, root):
    errors = []
    with open(page, encoding="utf-8") as f:
        lines = strip_code(f.read().splitlines())
    base = os.path.dirname(page)
    for lineno, line in enumerate(lines, 1):
        for m in CODE_SPAN.finditer(line):
            token = m.group(2).strip()
            if REPO_PATH.match(token) and not os.path.exists(os.path.join(root, token)):
                errors.append(f"{page}:{lineno}: `{token}` names no file in the repository")
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = page if not file_part else os.path.normpath(os.path.join(base, file_part))
            if not os.path.exists(dest):
                errors.append(f"{page}:{lineno}: {target} -> {dest} does not exist")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                errors.append(f"{page}:{lineno}: {target}: no heading #{anchor} in {dest}")
    return errors


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=".", help="repository root (default: .)")
    p.add_argument("files", nargs="*", help="pages to check (default: README.md, docs/**/*.md)")
    args = p.parse_args(argv)
    root = args.root
    pages = args.files
    if not pages:
        pages = [os.path.join(root, "README.md")]
        for d, _, names in os.walk(os.path.join(root, "docs")):
            pages += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    errors = []
    for page in sorted(pages):
        errors += check_page(os.path.normpath(page), root)
    for e in errors:
        print(e)
    print(f"check_links: {len(pages)} pages, {len(errors)} broken", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
