#!/usr/bin/env python3
"""Tests (ctest docs.*) of what a reader of the project meets.

  check_docs.py SOURCE_DIR words   no file of the project refers to documents or history a
                                   user cannot see: an outside specification, design notes,
                                   issue numbers, numbered rounds of work (docs describe the
                                   present; git log keeps the history)
  check_docs.py SOURCE_DIR links   every relative link in the Markdown files points at a file
                                   that exists and, with #anchor, at a heading it has
"""
import os
import re
import subprocess
import sys

ORDINAL = (r"(?:[a-z]+-)?(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
           r"eleventh|twelfth|[a-z]+teenth|[a-z]+tieth)")
# Built from pieces, so that this file does not match itself.
FORBIDDEN = [
    ("a specification outside the project", r"\bS" + r"PEC\b"),
    ("a design note outside the project", r"\bseed" + r" notes?\b|\bnotes? 00[0-9]\b"),
    ("an issue number", r"\bissues? #?[0-9]+|\bissue-[0-9]+"),
    ("a numbered round of work", r"\b" + ORDINAL + r" rounds?\b|\brounds? [0-9]{2,}\b|"
     r"\brounds [0-9]+-[0-9]+\b"),
    ("the deleted benchmark history", r"bench-" + r"history"),
]
TEXT = re.compile(r"\.(md|cpp|hpp|h|txt|sh|cmake|in|json|pml|py)$|(^|/)CMakeLists\.txt$|"
                  r"^scripts/|^\.ci/")


def tracked_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return [f for f in out if f and TEXT.search(f) and not f.startswith("tests/docs/")]


def check_words(root):
    bad = 0
    for f in tracked_files(root):
        path = os.path.join(root, f)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                for what, pattern in FORBIDDEN:
                    m = re.search(pattern, line, re.IGNORECASE if "issue" in what else 0)
                    if m:
                        print(f"{f}:{n}: {what}: '{m.group(0)}'")
                        bad += 1
    return bad


def anchors_of(path):
    """GitHub's anchors for a Markdown file's headings."""
    found = set()
    seen = {}
    in_code = False
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("```"):
                in_code = not in_code
            if in_code or not line.startswith("#"):
                continue
            text = line.lstrip("#").strip().lower()
            text = re.sub(r"[`*]", "", text)
            slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
            k = seen.get(slug, 0)
            seen[slug] = k + 1
            found.add(slug if k == 0 else f"{slug}-{k}")
    return found


def check_links(root):
    bad = 0
    for f in tracked_files(root):
        if not f.endswith(".md"):
            continue
        path = os.path.join(root, f)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = path if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(dest):
                print(f"{f}: link to a missing file: {target}")
                bad += 1
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                print(f"{f}: link to a missing heading: {target}")
                bad += 1
    return bad


def main():
    root, what = sys.argv[1], sys.argv[2]
    bad = check_words(root) if what == "words" else check_links(root)
    if bad:
        print(f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
