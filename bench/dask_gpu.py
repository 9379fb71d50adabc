#!/usr/bin/env python3
"""The batch through Dask on one host: one worker process per GPU
(sigstream.distributed.local_cluster), files/s for 1, 2, 4 ... GPUs, and a GPU
worker killed with SIGKILL halfway through a batch.

Usage: bench/dask_gpu.py CONFIG.yaml [--gpus 1,2,4] [--files-per-gpu N] [--kill]
                         [--files-per-task 1,auto] [--runs 3] [--out-dir DIR]

CONFIG is a batch config (bench/batch_bench.py writes one: batch_bench.yaml in
its --work folder). Each row times `sigstream.batch(CONFIG, client=...,
force=True, files_per_task=...)` on a cluster already started and warmed by
one batch (the cluster's start is printed apart), --runs times per
--files-per-task value, alternating; files/s counts the files the summary
says ok. --files-per-gpu 0 is the CLI's rule (auto_files_per_gpu). --kill (instead of the
rows) runs a batch on the largest --gpus count into a fresh folder and kills one worker's process once
half the files are done; it then checks that every file is ok in the
summary, that each output was committed once (the commit log of
tests/faults/commit_shim, when SIGSTREAM_COMMIT_LOG and LD_PRELOAD name it:
one commit per output), and that no temporary file is left.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import sys
import threading
import time
from typing import Any

import sigstream
import yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rates import steady_rate  # noqa: E402
from distributed import Client
from sigstream.distributed import auto_files_per_gpu, local_cluster


BACKEND = "cuda"


def run_batch(client: Client, config: str, out_dir: str | None,
              files_per_task: int | None = None) -> tuple[float, dict[str, Any]]:
    t0 = time.monotonic()
    summary = sigstream.batch(config, client=client, force=True, quiet=True, progress=False, backend=BACKEND,
                              out_dir=out_dir, files_per_task=files_per_task)
    return time.monotonic() - t0, summary


# --probe-tail: the driver's calls after the last file, timed (summed over a run).
TAIL: dict[str, float] = {}


def probe_tail() -> None:
    """Wraps the driver's end-of-batch calls (its sweep, the summary merged and written) in timers."""
    try:
        import sigstream._dask_driver as dd
    except ImportError:  # a sigstream from before the driver had a module of its own
        import sigstream.distributed as dd  # type: ignore[no-redef]

    def timed(name: str, fn: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            t = time.monotonic()
            try:
                return fn(*a, **k)
            finally:
                TAIL[name] = TAIL.get(name, 0.0) + time.monotonic() - t
        return run

    dd._sweep_workers = timed("sweep", dd._sweep_workers)
    core = dd._core

    class Core:
        def __getattr__(self, n: str) -> Any:
            f = getattr(core, n)
            return timed(n, f) if n in ("merge_summaries", "write_summary", "batch_plan") else f

    dd._core = Core()


def timeline(summary: dict[str, Any], began: float, took: float) -> str:
    """Where a batch's wall went, from its files' statistics JSON (committed last, each file's
    end) against the wall clock at the batch's call (`began`, time.time()): the first and the
    last file's end, the rate once started (bench/rates.py) and the driver's time after the
    last file (its sweep, the merged summary written)."""
    ends = []
    for f in summary["files"]:
        try:
            ends.append(os.stat(f["stats"]).st_mtime - began)
        except (KeyError, TypeError, OSError):
            pass
    if not ends:
        return ""
    ends.sort()
    rate = steady_rate(ends)
    tail = "".join(f", {k} {v * 1e3:.0f} ms" for k, v in TAIL.items())
    TAIL.clear()
    return (f"; first file ended at {ends[0]:.2f} s, last {ends[-1]:.2f} s, then {took - ends[-1]:.2f} s to the "
            f"return{tail}; {f'{rate:.0f} files/s once started' if rate else ''}")


def kill_halfway(config: str, gpus: int, per_gpu: int, out_dir: str) -> int:
    shutil.rmtree(out_dir, ignore_errors=True)
    log = os.environ.get("SIGSTREAM_COMMIT_LOG")
    if log and os.path.exists(log):
        os.remove(log)
    with local_cluster(gpus=gpus, files_per_gpu=per_gpu) as cluster, Client(cluster) as client:
        client.wait_for_workers(gpus)
        pids = client.run(os.getpid)
        result: dict[str, Any] = {}

        def go() -> None:
            result["took"], result["summary"] = run_batch(client, config, out_dir)

        worker = threading.Thread(target=go)
        worker.start()
        with open(config, encoding="utf-8") as f:
            patterns = yaml.safe_load(f)["batch"]["inputs"]
        total = sum(len(glob.glob(p, recursive=True)) for p in patterns)
        victim_addr, victim_pid = sorted(pids.items())[-1]
        while worker.is_alive():
            done = len(glob.glob(os.path.join(out_dir, "**", "*.json"), recursive=True))
            if done >= total // 2:
                os.kill(victim_pid, signal.SIGKILL)
                print(f"killed worker {victim_addr} (pid {victim_pid}) with {done} file(s) done")
                break
            time.sleep(0.005)
        worker.join()
    s = result["summary"]
    counts = s["counts"]
    temps = glob.glob(os.path.join(out_dir, "**", ".*.sigstream-*"), recursive=True)
    print(f"after the kill: {counts} in {result['took']:.2f} s; temporary files left: {len(temps)}")
    bad = counts["ok"] + counts["skipped"] != counts["total"] or bool(temps)
    if log and os.path.exists(log):
        outputs = {os.path.realpath(f["output"]) for f in s["files"] if f.get("output")}
        with open(log, encoding="utf-8") as f:
            commits = [os.path.realpath(line.rstrip("\n").split("\t")[-1]) for line in f if line.strip()]
        per_output = {o: 0 for o in outputs}
        for c in commits:
            if c in per_output:
                per_output[c] += 1
        twice = sorted(o for o, n in per_output.items() if n > 1)
        never = sorted(o for o, n in per_output.items() if n == 0)
        print(f"commits of audio outputs: {sum(per_output.values())} for {len(outputs)} outputs; "
              f"committed twice: {len(twice)}, never: {len(never)}")
        bad = bad or bool(twice) or bool(never)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--files-per-gpu", type=int, default=0, help="threads per GPU worker (0: CPU cores / GPUs)")
    ap.add_argument("--kill", action="store_true")
    ap.add_argument("--files-per-task", default="auto", help="comma list of files a task (auto: sigstream's rule)")
    ap.add_argument("--runs", type=int, default=3, help="timed batches per --files-per-task value")
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--backend", default="cuda", choices=("cuda", "cpu"), help="cpu: CPU workers (a check without a GPU)")
    ap.add_argument("--probe-tail", action="store_true",
                    help="time the driver's plan, sweep and summary merge and write in each run")
    args = ap.parse_args()
    if args.probe_tail:
        probe_tail()
    global BACKEND
    BACKEND = args.backend
    visible = len([d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "x").split(",") if d]) \
        if os.environ.get("CUDA_VISIBLE_DEVICES") else None
    rows = []
    rc = 0
    for n in [] if args.kill else [int(g) for g in args.gpus.split(",")]:
        if visible is not None and n > visible:
            continue
        per = args.files_per_gpu or auto_files_per_gpu(os.cpu_count() or 2, n)
        t0 = time.monotonic()
        try:
            cluster = local_cluster(gpus=n, files_per_gpu=per)
        except ValueError as e:
            print(f"{n} GPU(s): {e}")
            continue
        with cluster, Client(cluster) as client:
            client.wait_for_workers(n)
            start = time.monotonic() - t0
            run_batch(client, args.config, args.out_dir)  # warm: each worker's CUDA context and caches
            print(f"dask, {n} GPU worker(s) x {per} files: cluster start {start:.2f} s", flush=True)
            for r in range(args.runs):
                for fpt in args.files_per_task.split(","):
                    TAIL.clear()
                    began = time.time()
                    took, summary = run_batch(client, args.config, args.out_dir,
                                              None if fpt == "auto" else int(fpt))
                    ok = summary["counts"]["ok"]
                    rows.append((n, per, start, took, ok))
                    print(f"  round {r + 1}, files a task {fpt} ({summary['tasks']} tasks): batch {took:.2f} s, "
                          f"{ok} ok, {ok / took:.1f} files/s{timeline(summary, began, took)}", flush=True)
    if args.kill:
        n = max(int(g) for g in args.gpus.split(","))
        per = args.files_per_gpu or auto_files_per_gpu(os.cpu_count() or 2, n)
        rc = kill_halfway(args.config, n, per, (args.out_dir or "/tmp/dask_kill") + "_kill")
    return rc


if __name__ == "__main__":
    sys.exit(main())
