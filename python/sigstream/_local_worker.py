"""Preloaded into each worker process of :func:`sigstream.distributed.local_cluster`.

Those workers share the terminal (its process group) of the process that
started them, so a Ctrl-C there reaches them too: Python would raise
KeyboardInterrupt in the worker and end it, with the file its task was
running. The interrupt is the driver's to handle: it has the batch's tasks
stop after the file each runs, and writes the summary. So the workers ignore
SIGINT; SIGTERM (the cluster's close, Slurm's end of a job) still ends them.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: runs in the worker process as it starts."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the process's main thread: nothing to change from here
        pass
