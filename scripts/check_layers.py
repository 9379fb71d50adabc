#!/usr/bin/env python3
"""The layers of DESIGN §1b, checked: a source file may include headers of its
own layer and of the layers below it, never of one above.

    core (0) < kernels (1) < model, pipeline/config (2: the config, plan and report
             types; the YAML walker) < stages (3)
             < pipeline/io (4: sources, sinks, statistics)
             < pipeline, pipeline/backends (5: the engine)
             < app, python (6)

Tests, benchmarks and fuzz targets may include anything. The includes that run
up today are listed in scripts/layer_debt.txt, one "FILE -> HEADER" a line: the
refactor (issue P12) removes them, and this check fails on any upward include
that is not listed, and on a listed one that is gone (so the list only
shrinks). Exit 0 when the tree holds, 1 otherwise (each problem on stderr).

Usage: scripts/check_layers.py [ROOT]   (default: the repository holding this script)
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

RANKS: dict[str, int] = {
    "core": 0,
    "kernels": 1,
    "model": 2,
    "pipeline/config": 2,
    "stages": 3,
    "pipeline": 5,
    "pipeline/backends": 5,
    "pipeline/io": 4,
    "app": 6,
    "python": 6,
}
SOURCES = (".cpp", ".hpp", ".cu", ".cuh")
FREE = ("tests/", "bench/", "fuzz/", "third_party/")
# Both forms: the repository root is an include directory, so <pipeline/plan.hpp> compiles too.
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.MULTILINE)


def layer_of(path: str) -> str | None:
    """The layer a repository path belongs to (the longest matching folder), or None."""
    best: str | None = None
    for name in RANKS:
        if (path == name or path.startswith(name + "/")) and (best is None or len(name) > len(best)):
            best = name
    return best


def is_free(path: str) -> bool:
    """Tests, benchmarks, fuzz targets and a kind's QA tests (stages/<kind>/test_*) include anything."""
    parts = path.split("/")
    qa_test = len(parts) == 3 and parts[0] == "stages" and parts[2].startswith("test_")
    return path.startswith(FREE) or qa_test


def upward_includes(root: Path, files: list[str]) -> set[str]:
    """Every "FILE -> HEADER" where FILE's layer is below HEADER's."""
    found: set[str] = set()
    for f in files:
        if not f.endswith(SOURCES) or is_free(f):
            continue
        mine = layer_of(f)
        if mine is None:
            continue
        for header in INCLUDE.findall((root / f).read_text(encoding="utf-8", errors="replace")):
            theirs = layer_of(header)
            if theirs is not None and RANKS[theirs] > RANKS[mine]:
                found.add(f"{f} -> {header}")
    return found


def read_debt(path: Path) -> set[str]:
    """The listed upward includes (blank lines and # comments skipped)."""
    if not path.exists():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


def check(root: Path, files: list[str]) -> list[str]:
    """The problems: unlisted upward includes, then listed ones that are gone."""
    found = upward_includes(root, files)
    debt = read_debt(root / "scripts" / "layer_debt.txt")
    problems = [f"{item}: includes a layer above its own (DESIGN §1b)" for item in sorted(found - debt)]
    problems += [f"{item}: listed in scripts/layer_debt.txt but gone: remove the line" for item in sorted(debt - found)]
    return problems


def tracked_files(root: Path) -> list[str]:
    """git's list of the tree's files; outside a git checkout (an sdist, a copy), the layers' folders."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True, text=True)
        if out.stdout.strip():
            return out.stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pass
    top = {name.split("/")[0] for name in RANKS}
    return sorted(str(p.relative_to(root)) for t in top if (root / t).is_dir()
                  for p in (root / t).rglob("*") if p.is_file())


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    files = tracked_files(root)
    problems = check(root, files)
    for p in problems:
        print(f"check-layers: {p}", file=sys.stderr)
    if problems:
        return 1
    debt = len(read_debt(root / "scripts" / "layer_debt.txt"))
    sources = sum(1 for f in files if f.endswith(SOURCES))
    print(f"check-layers: {sources} source files hold the layers ({debt} listed upward include(s) left)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
