#!/usr/bin/env python3
"""Checks that the docs' references resolve (ctest Docs.LinksResolve).

    check-doc-links.py REPO_ROOT

Reads README.md and every docs/**/*.md and reports, one a line, every reference that does not
resolve, exiting 1 if there is one (the sources' comments are read for the last two kinds, as
far as they name docs/ pages):
  - Markdown links and images [text](target): target relative to the page (http(s) and mailto
    links are not fetched); a #fragment must name a heading of the target page (GitHub's slugs).
  - Repository paths named in the text (docs/..., src/..., tests/..., scripts/..., ...) that name
    a file (they end in an extension): relative to the repository root, as the docs write them.
    Paths with wildcards or braces (`offload*.{h,cc}`) and build outputs (build/...) are not paths.
  - Sections named after a page, as the docs write them (docs/UCX.md, "Persistent pools"): the
    page must have a heading, or a paragraph's bold lead (**Fan-out.**), that begins with that
    text (case and backquotes aside).
"""
import glob
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SECTION = re.compile(r"(docs/[\w/-]+\.md)`?,?\s+\"([^\"]+)\"")
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:docs|src|tests|scripts|include|examples|bindings|python|benchmarks|platforms|cmake|\.ci)"
    r"/[\w./+-]*\.[A-Za-z]\w*)(?![\w*{/-])")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path, cache={}):
    """The page's headings and bold paragraph leads, lower case, without backquotes."""
    if path not in cache:
        names, fenced = [], False
        for line in open(path, encoding="utf-8"):
            if line.strip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"#{1,6}\s+(.*)$|\*\*([^*]+)\*\*", line)
            if m:
                names.append(m.group(1) or m.group(2))
        cache[path] = [h.replace("`", "").strip().lower() for h in names]
    return cache[path]


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        fenced = False
        for line in open(path, encoding="utf-8"):
            if line.strip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
        cache[path] = out
    return cache[path]


def check_page(root, page):
    errors = []
    text = open(page, encoding="utf-8").read()
    where = os.path.relpath(page, root)
    for n, line in enumerate(text.split("\n"), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(resolved):
                errors.append(f"{where}:{n}: link to {target}: no such file")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                errors.append(f"{where}:{n}: link to {target}: no heading #{fragment} in {path or where}")
        for path in REPO_PATH.findall(line):
            path = path.rstrip(".")
            if not os.path.exists(os.path.join(root, path)):
                errors.append(f"{where}:{n}: {path}: no such file in the repository")
    for m in SECTION.finditer(text):  # over the whole text: a reference may wrap
        path, section = m.groups()
        full = os.path.join(root, path)
        wanted = " ".join(section.replace("`", "").split()).lower()
        if os.path.exists(full) and not any(h.startswith(wanted) for h in headings(full)):
            n = text.count("\n", 0, m.start()) + 1
            errors.append(f"{where}:{n}: {path} has no section \"{section}\"")
    return errors


SOURCE_DIRS = ("src", "tests", "scripts", "python", "bindings", "examples", "include", "benchmarks", "cmake", ".ci")
SOURCE_EXTENSIONS = (".h", ".cc", ".c", ".py", ".sh", ".java", ".cmake", ".txt", ".toml")


def check_source(root, path):
    """A source file's references to the docs: pages that exist, sections they have."""
    try:
        text = open(path, encoding="utf-8").read()
    except UnicodeDecodeError:
        return []
    where = os.path.relpath(path, root)
    errors = []
    for m in re.finditer(r"(?<![\w./-])(docs/[\w./-]*\.(?:md|png))", text):
        if not os.path.exists(os.path.join(root, m.group(1))):
            n = text.count("\n", 0, m.start()) + 1
            errors.append(f"{where}:{n}: {m.group(1)}: no such page")
    for m in SECTION.finditer(text):
        path_, section = m.groups()
        full = os.path.join(root, path_)
        wanted = " ".join(re.sub(r"\n\s*(//|#|\*)?", " ", section).replace("`", "").split()).lower()
        if os.path.exists(full) and not any(h.startswith(wanted) for h in headings(full)):
            n = text.count("\n", 0, m.start()) + 1
            errors.append(f"{where}:{n}: {path_} has no section \"{wanted}\"")
    return errors


def sources(root):
    yield os.path.join(root, "CMakeLists.txt")
    for top in SOURCE_DIRS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if not d.startswith(("build", "__pycache__", "target"))]
            for name in files:
                if name.endswith(SOURCE_EXTENSIONS) or name == "CMakeLists.txt":
                    yield os.path.join(folder, name)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    pages = [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    errors = [e for page in pages for e in check_page(root, page)]
    files = sorted(set(sources(root)))
    errors += [e for path in files for e in check_source(root, path)]
    print("\n".join(errors) if errors else f"{len(pages)} pages and {len(files)} source files: every reference resolves")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
