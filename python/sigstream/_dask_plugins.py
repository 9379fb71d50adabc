"""Dask plugins of sigstream's distributed batches (imported where Dask is: a worker unpickles
them by this module's name, so a worker needs sigstream installed, as for the batch's tasks)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from . import _core


class StopBatch(WorkerPlugin):
    """Stops a batch on every worker, those that join later too (a worker restarted after a death,
    or scaled up): its tasks hand out no further file (the one each runs finishes; the rest of its
    files are not_run entries, and a task that starts later returns at once)."""

    idempotent = True

    def __init__(self, batch_id: str) -> None:
        self.batch_id = batch_id

    def setup(self, worker: Any) -> None:
        _core.stop_batch(self.batch_id)
