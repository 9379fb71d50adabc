"""The choices the Python API checks before the core sees them (a ValueError naming the
argument and what it may be)."""

from __future__ import annotations

BACKENDS = ("auto", "cpu", "cuda")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)} (got {value!r})")
