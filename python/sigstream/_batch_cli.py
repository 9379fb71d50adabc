"""``python -m sigstream.distributed`` behind ``sigstream batch --scheduler``: the CLI's flags
parsed again, a cluster found or started (``local[:N]``, a scheduler file or an address), and the
batch run on it by :mod:`sigstream.distributed` (its ``main`` calls this one's).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import signal
import sys
import time
from typing import Any, Optional, Sequence, Union

from ._dask_driver import _Interrupted, _on_sigterm, _plan, _run_planned
from ._dask_tasks import _cores, _require_distributed
from .distributed import _visible_gpus, auto_files_per_gpu, local_cluster
from .errors import ConfigError, Error


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sigstream batch --scheduler",
        description="Run a sigstream batch on a Dask cluster (SPEC §10); `sigstream batch CONFIG [INPUT...] "
                    "--scheduler ...` runs this.")
    p.add_argument("config", metavar="CONFIG", help="YAML config with a batch: section")
    p.add_argument("inputs", metavar="INPUT", nargs="*", help="more inputs: files, folders or globs")
    p.add_argument("--scheduler", required=True, metavar="ADDRESS|FILE.json|local[:N]",
                   help="a scheduler address (tcp://host:8786), a scheduler file (dask scheduler --scheduler-file), "
                        "or local[:N]: a cluster on this host with N GPU workers (all GPUs; CPU workers without)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY.PATH=VALUE",
                   help="override a config value (repeatable)")
    p.add_argument("--out-dir", help="output folder (overrides batch.out_dir)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--keep-going", dest="keep_going", action="store_true", default=None)
    g.add_argument("--stop-on-error", dest="keep_going", action="store_false")
    p.add_argument("--force", action="store_true", help="redo files whose outputs are up to date")
    p.add_argument("--backend", choices=["auto", "cpu", "cuda"])
    p.add_argument("--verify", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--stats", metavar="FILE.json", help="the summary's path (default OUT_DIR/batch_summary.json)")
    p.add_argument("--files-per-device", type=int, default=0,
                   help="local[:N]: files in flight per GPU worker "
                        "(default: the CPU cores over the GPUs, 2 to 16)")
    p.add_argument("--files-per-task", type=int, default=0,
                   help="files a Dask task runs (default 0: a worker thread's share of the files left, 1 to 64)")
    p.add_argument("--inputs-from", metavar="FILE", help="take the inputs from a list (- = standard input)")
    return p


class _UsageError(Exception):
    pass


def _local_gpus(spec: str) -> Union[str, int]:
    if spec == "local":
        return "all"
    n = spec[len("local:"):]
    if not n.isdigit():
        raise _UsageError(f"--scheduler '{spec}': expected local or local:N with N a whole number of GPU workers")
    return int(n)


# How long ``--scheduler FILE.json`` waits for a scheduler to write its file (``dask worker
# --scheduler-file`` waits as long as its --death-timeout, forever by default; the CLI gives up and says so).
SCHEDULER_FILE_WAIT_S = 30.0
# A file there but not a scheduler's for this long is not one being written (a scheduler writes it in
# one go).
SCHEDULER_FILE_WHOLE_S = 2.0
_SCHEDULER_FILE_HINT = "dask scheduler --scheduler-file FILE.json writes it"


def _scheduler_address(path: str, err: Optional[Any]) -> str:
    """The address in a scheduler file, once the file is there and whole: a scheduler started just before
    this command has not written it yet, so it is waited for (SCHEDULER_FILE_WAIT_S; ``err``, None when
    quiet, is told after a second). Raises _UsageError naming the file."""
    t0 = time.monotonic()
    said = False
    why = ""
    bad_since: Optional[float] = None  # a file there but not (yet) whole: written now, or not a scheduler's
    while True:
        try:
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
            address = info.get("address") if isinstance(info, dict) else None
            if isinstance(address, str) and address:
                return address
            why = 'it has no "address"'
        except FileNotFoundError:
            why = ""
        except (OSError, UnicodeDecodeError) as e:
            why = f"cannot read it: {e}"
        except json.JSONDecodeError as e:  # (also a file still being written)
            why = f"not JSON: {e}"
        now = time.monotonic()
        bad_since = (bad_since or now) if why else None
        if now - t0 >= SCHEDULER_FILE_WAIT_S or (bad_since is not None and now - bad_since >= SCHEDULER_FILE_WHOLE_S):
            break
        if not said and err is not None and not why and now - t0 >= 1.0:
            err.write(f"sigstream: batch: waiting for the scheduler file '{path}' ({_SCHEDULER_FILE_HINT}; up to "
                      f"{SCHEDULER_FILE_WAIT_S:g} s)\n")
            said = True
        time.sleep(0.1)
    if not why:
        raise _UsageError(f"--scheduler '{path}': no such scheduler file after {SCHEDULER_FILE_WAIT_S:g} s "
                          f"({_SCHEDULER_FILE_HINT})")
    raise _UsageError(f"--scheduler '{path}': not a Dask scheduler file ({why}; dask scheduler --scheduler-file "
                      'FILE.json writes a JSON object with its "address")')


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``sigstream batch --scheduler``'s work; returns the CLI's exit code (0, 1, 2 or 130)."""
    err = sys.stderr
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse: usage errors exit 2, --help 0
        return int(e.code) if isinstance(e.code, int) else 2
    try:
        _require_distributed()
    except ImportError as e:
        err.write(f"sigstream: error: batch --scheduler: {e}; or point SIGSTREAM_PYTHON at a Python that has "
                  "sigstream and Dask\n")
        return 2
    from distributed import Client

    from ._pipelines import _config_text, _utf8_path

    # Checked before the signals are this function's and before --inputs-from - is read (a scheduler
    # file's content later, once the batch is planned).
    spec = args.scheduler
    try:
        gpus = _local_gpus(spec) if spec == "local" or spec.startswith("local:") else None
        scheduler_file = gpus is None and spec.endswith(".json")
        if scheduler_file and not os.path.isdir(os.path.dirname(os.path.abspath(spec))):
            raise _UsageError(f"--scheduler '{spec}': no such scheduler file (no folder "
                              f"'{os.path.dirname(os.path.abspath(spec))}'; {_SCHEDULER_FILE_HINT})")
        if gpus is None and not spec.endswith(".json") and ":" not in spec:
            near = difflib.get_close_matches(spec, ["local"], n=1, cutoff=0.6)
            raise _UsageError(f"--scheduler '{spec}': expected local[:N], a scheduler file (FILE.json) or an address "
                              "with its port (tcp://HOST:8786)" + (f"; did you mean '{near[0]}'?" if near else ""))
    except _UsageError as e:
        err.write(f"sigstream: error: {e}\n")
        return 2
    saved = {sig: signal.signal(sig, _on_sigterm) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if args.inputs_from and args.inputs:
            raise ConfigError(f"batch: --inputs-from '{args.inputs_from}' gives the inputs, and so does INPUT "
                              f"'{args.inputs[0]}': give one or the other")
        for path in [*args.inputs, args.out_dir, args.stats, args.inputs_from]:
            if path:
                _utf8_path(path, "a Dask batch cannot hand to its workers (rename it, e.g. with convmv, or run the "
                                 "batch without --scheduler)")  # ConfigError, exit 2
        list_text = None
        if args.inputs_from:
            try:
                if args.inputs_from == "-":
                    raw = getattr(sys.stdin, "buffer", None)  # (a text stream without one: a test's)
                    list_text = raw.read().decode("utf-8") if raw is not None else sys.stdin.read()
                else:
                    with open(args.inputs_from, encoding="utf-8") as f:
                        list_text = f.read()
            except OSError as e:
                raise ConfigError(f"--inputs-from: cannot read '{args.inputs_from}': {e.strerror}") from None
            except UnicodeDecodeError as e:
                raise ConfigError(f"--inputs-from '{args.inputs_from}': byte {e.start} is not UTF-8 (a name that is "
                                  "not UTF-8, which a Dask batch cannot hand to its workers: rename it, e.g. with "
                                  "convmv, or run the batch without --scheduler)") from None
        text, origin = _config_text(args.config)
        if args.files_per_task < 0 or args.files_per_device < 0:
            raise _UsageError("--files-per-task and --files-per-device must be 0 (auto) or more")
        # Planned before any cluster: a bad config or input list fails at once.
        planned = _plan(text, origin, args.config, args.sets, args.inputs, args.out_dir, args.keep_going,
                        args.backend, args.quiet, list_text,
                        "<standard input>" if args.inputs_from == "-" else (args.inputs_from or ""), args.stats)
        # (Waited for once the batch is planned, under the signal handlers: Ctrl-C ends the wait.)
        address = _scheduler_address(spec, None if args.quiet else err) if scheduler_file else spec
        with_cluster: Any = None
        try:
            if gpus is not None:
                per = args.files_per_device
                if per == 0:  # as the CLI's own batch (auto_files_per_device)
                    n = max(1, len(_visible_gpus()) if gpus == "all" else int(gpus))
                    per = auto_files_per_gpu(_cores(), n)
                with_cluster = local_cluster(gpus, files_per_gpu=per)
                client = Client(with_cluster)
            else:  # (a scheduler file's address)
                client = Client(address, timeout=30)
        except ValueError as e:
            if with_cluster is not None:
                with_cluster.close()
            raise _UsageError(f"--scheduler '{spec}': {e}") from None
        except (OSError, TimeoutError) as e:
            if with_cluster is not None:
                with_cluster.close()
            err.write(f"sigstream: error: --scheduler '{spec}': cannot reach the Dask scheduler: {e}\n")
            return 1
        try:
            summary = _run_planned(client, planned, args.force, args.verify, args.quiet, not args.no_progress,
                                   args.stats, args.files_per_task or None, None)
            return int(summary.get("exit_code", 0))
        finally:
            client.close()
            if with_cluster is not None:
                with_cluster.close()
    except _Interrupted:
        return 130
    except KeyboardInterrupt:
        err.write("sigstream: error: interrupted\n")
        return 130
    except _UsageError as e:
        err.write(f"sigstream: error: {e}\n")
        return 2
    except ConfigError as e:
        err.write(f"sigstream: error: {e}\n")
        return 2
    except Error as e:
        err.write(f"sigstream: error: {e}\n")
        return 1
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
