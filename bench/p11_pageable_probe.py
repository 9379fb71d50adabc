#!/usr/bin/env python3
"""P11 (stop 42): host<->device copies of 4 MiB blocks from and to pageable (NumPy) and pinned memory,
T threads at once, each with its own stream: aggregate GB/s, an H2D then a D2H per block, each block
waited for. Whether a batch's files could skip pinning (~0.65 ms a MiB to pin, ~0.2 at exit) by copying
from pageable memory: the driver stages pageable copies through its own buffers, one at a time.
Runs on the GPU machine (CuPy); prints one line per thread count."""
import threading
import time

import cupy as cp
import numpy as np

N = 4 << 20


def bench(threads: int, pinned: bool, reps: int = 30) -> float:
    dev = [cp.empty(N, dtype=cp.uint8) for _ in range(threads)]
    keep: list[object] = []
    ptrs: list[tuple[int, int]] = []
    for _ in range(threads):
        if pinned:
            a, b = cp.cuda.alloc_pinned_memory(N), cp.cuda.alloc_pinned_memory(N)
            ptrs.append((a.ptr, b.ptr))
        else:
            a, b = np.ones(N, np.uint8), np.ones(N, np.uint8)
            ptrs.append((a.ctypes.data, b.ctypes.data))
        keep += [a, b]
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(threads)]
    cp.cuda.Device().synchronize()

    def work(k: int) -> None:
        s = streams[k]
        for _ in range(reps):
            cp.cuda.runtime.memcpyAsync(dev[k].data.ptr, ptrs[k][0], N, 1, s.ptr)
            cp.cuda.runtime.memcpyAsync(ptrs[k][1], dev[k].data.ptr, N, 2, s.ptr)
            s.synchronize()

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    t = time.perf_counter()
    for x in pool:
        x.start()
    for x in pool:
        x.join()
    return 2 * threads * reps * N / (time.perf_counter() - t) / 1e9


if __name__ == "__main__":
    bench(4, False, 3)
    bench(4, True, 3)
    for t in (1, 4, 16, 32):
        print(f"{t:2d} threads: pageable {bench(t, False):5.1f} GB/s, pinned {bench(t, True):5.1f} GB/s "
              "(H2D + D2H per block)")
