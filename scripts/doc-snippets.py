#!/usr/bin/env python3
"""Extracts the C++ of the docs so a test can build and run it (tests/CMakeLists.txt).

    doc-snippets.py OUT_DIR FILE.md...

Every ```cpp block of the given Markdown files is a whole program: it is written to
OUT_DIR/<file>_<n>.cc (n counts the file's blocks from 1) and its path printed, one a line.
A ```cpp block without a main() is an error, and so is C++ in an indented code block (it
would not be compiled): the docs' C++ is fenced, complete, and runs as written.
"""
import os
import re
import sys


def blocks(text):
    """The ```cpp blocks of `text`, and the indented blocks that look like dmindex C++."""
    fenced, indented = [], []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            lang = line.strip()[3:].strip()
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            if lang in ("cpp", "c++"):
                fenced.append("\n".join(body) + "\n")
        elif line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            start = i
            body = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i])
                i += 1
            code = "\n".join(body)
            if re.search(r"dmindex::\w+", code) and re.search(r";\s*(//.*)?$", code, re.M):
                indented.append(start + 1)
            continue
        i += 1
    return fenced, indented


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    errors = []
    stems = {}
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            fenced, indented = blocks(f.read())
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        if fenced and stems.setdefault(stem, path) != path:  # a page and its namesake in results/
            errors.append(f"{path}: its snippets would be named like those of {stems[stem]}: rename one")
        for line in indented:
            errors.append(f"{path}:{line}: C++ in an indented block is not compiled: fence it as ```cpp")
        for n, code in enumerate(fenced, 1):
            if not re.search(r"\bint\s+main\s*\(", code):
                errors.append(f"{path}: ```cpp block {n} has no main(): the docs' C++ is whole programs")
                continue
            target = os.path.join(out_dir, f"{stem}_{n}.cc")
            old = open(target, encoding="utf-8").read() if os.path.exists(target) else None
            if old != code:  # unchanged files keep their time stamp: no rebuild
                with open(target, "w", encoding="utf-8") as f:
                    f.write(code)
            print(target)
    if errors:
        sys.exit("\n".join(errors))


if __name__ == "__main__":
    main()
