"""The CLI's YAML pipelines from Python (SPEC §9, §10): ``run`` (``sigstream run``) and ``batch``
(``sigstream batch``, here or on a Dask cluster), their statistics and summaries as dicts.
``sigstream`` re-exports both; this module keeps them apart from the array API.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Union

from . import _core
from ._choices import BACKENDS, check_choice
from .errors import ConfigError, InputError

PathOrConfig = Union[str, "os.PathLike[str]", Mapping[str, Any]]


_NOT_UTF8_IN_PYTHON = ("sigstream's Python API cannot take as a path: give its folder or a glob (the batch in one "
                       "process finds such names there), or rename it (e.g. with convmv)")


def _utf8_path(value: Any, why: str = _NOT_UTF8_IN_PYTHON) -> str:
    """A path as the bindings take it: text that is UTF-8. A name that is not (a Latin-1 file, which Python
    spells with surrogates) is a ConfigError naming it; a folder or glob that holds it still finds it."""
    path = os.fspath(value)
    if isinstance(path, bytes):
        raise TypeError("a path as bytes: give it as str")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise ConfigError(f"'{shown}' is not a UTF-8 name, which {why}") from None
    return path


def _config_text(config: PathOrConfig) -> tuple[str, str]:
    """(YAML text, origin for messages) of a config path or dict."""
    if isinstance(config, Mapping):
        # JSON is YAML: the dict goes through the same reader as a file.
        try:
            return json.dumps(config), "<dict>"
        except TypeError as e:
            raise ConfigError(f"<dict>: the config holds a value that is not plain data ({e})") from None
    path = _utf8_path(config)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise InputError(f"{path}: cannot read the config ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: the config is not UTF-8 text (byte {e.start}: {e.reason})") from None


def _one_or_many(value: Any) -> list[Any]:
    """A str or path given where a list is expected is one item, not its characters."""
    if isinstance(value, bytes):
        raise TypeError("a path or override as bytes: give it as str")
    return [value] if isinstance(value, (str, os.PathLike)) else list(value)


def run(config: PathOrConfig, overrides: str | Iterable[str] = (), verify: bool = False,
        quiet: bool = False) -> dict[str, Any]:
    """Run a pipeline (a YAML path or the same as a dict; SPEC §2) and return its statistics (SPEC §4).

    overrides: "key.path=value" strings, as the CLI's ``--set``. Messages go
    to stderr as in the CLI (none with quiet=True). Raises ConfigError,
    InputError, CudaError or VerificationError with the CLI's messages.
    """
    text, origin = _config_text(config)
    return json.loads(_core.run(text, origin, [str(o) for o in _one_or_many(overrides)], bool(verify), bool(quiet)))


def batch(
    config: PathOrConfig,
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] = (),
    out_dir: str | os.PathLike[str] | None = None,
    client: Any = None,
    backend: str | None = None,
    force: bool = False,
    *,
    overrides: str | Iterable[str] = (),
    keep_going: bool | None = None,
    verify: bool = False,
    quiet: bool = False,
    progress: bool = True,
    summary_path: str | os.PathLike[str] | None = None,
    files_per_task: int | None = None,
) -> dict[str, Any]:
    """Run a batch config over many files (``sigstream batch``) and return its summary as a dict.

    The arguments after ``force`` are keywords only (SPEC §10's order:
    config, inputs, out_dir, client, backend, force).

    inputs: files, folders or globs added to the config's ``batch.inputs`` (a
    single path or glob may be given as it is). overrides: ``--set``'s
    "key.path=value" strings.
    The summary is the CLI's batch_summary.json (also written to out_dir, or
    to summary_path): a file that fails is reported in it ("files": "status"
    and "error") and, unless keep_going is False (default: the config's
    ``batch.keep_going``), the others still run; "exit_code" is the CLI's exit
    status (1 when a file failed). backend: "auto", "cpu" or "cuda" overrides
    ``execution.backend`` (None: the config's). Files up to date are skipped
    (force=True redoes them), as the CLI's resume does.

    client: a ``distributed.Client``. Without one the batch runs in this
    process. With one, its files go to the Dask workers as tasks of
    ``files_per_task`` files (None: each at most a worker thread's share of the
    files and bytes left, 1 to 64 files; see ``sigstream.distributed``: the driver moves
    paths and summaries, never samples; a task retried after its worker died
    skips what its first attempt committed, with force too), and one progress
    line is drawn on stderr when it is a terminal (not with quiet or
    progress=False). The inputs and out_dir must be on a file system the
    workers share. Ctrl-C stops handing out files: the workers' tasks of the
    batch start no further file, each finishes the one it runs (the driver
    waits up to ``sigstream.distributed.STOP_GRACE_S``, 10 s, for them; a
    second Ctrl-C stops waiting), then the summary of what was done is
    written (finished files ok, the others not_run, those still running
    interrupted) and KeyboardInterrupt raised (re-running resumes).
    """
    text, origin = _config_text(config)
    sets = [str(o) for o in _one_or_many(overrides)]
    if backend is not None:
        check_choice("backend", backend, BACKENDS)
    paths = [_utf8_path(i) for i in _one_or_many(inputs)]
    # (Before SPEC §10's order, the third argument was overrides and the fourth out_dir.)
    if out_dir is not None and not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"batch(): out_dir (the third argument) must be a path, not {type(out_dir).__name__}: "
                        "pass overrides by name (overrides=[...])")
    if isinstance(out_dir, str) and re.fullmatch(
            r"(version|source|stages|sink|stats|execution|batch)\.[\w.]*=.*", out_dir):
        raise TypeError(f"batch(): out_dir (the third argument) '{out_dir}' is an override: pass overrides by name "
                        "(overrides=...)")
    if client is not None and not callable(getattr(client, "submit", None)):
        raise TypeError(f"batch(): client (the fourth argument) must be a distributed.Client, not "
                        f"{type(client).__name__}: pass out_dir and the others by name")
    out = None if out_dir is None else _utf8_path(out_dir)
    if client is not None:
        from .distributed import run_batch_on_client

        return run_batch_on_client(
            client,
            text,
            origin,
            "" if isinstance(config, Mapping) else os.fspath(config),
            sets,
            paths,
            out,
            keep_going,
            bool(force),
            bool(verify),
            bool(quiet),
            backend,
            progress=bool(progress),
            summary_path=None if summary_path is None else _utf8_path(summary_path),
            files_per_task=None if files_per_task is None else int(files_per_task),
        )
    if backend is not None:
        sets.append(f"execution.backend={backend}")
    summary_json, code = _core.batch(text, origin, sets, paths, out, keep_going, bool(force), bool(verify),
                                     bool(quiet), "" if summary_path is None else _utf8_path(summary_path))
    summary: dict[str, Any] = json.loads(summary_json)
    summary["exit_code"] = code
    return summary
