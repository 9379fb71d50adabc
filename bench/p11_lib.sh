# Sourced by the P11 device scripts (bench/p11_*.sh): the bundle's libraries,
# a millisecond clock and a timed run, and the io / GPU-bound inputs.
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# Milliseconds since $1 (a `date +%s%N`).
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# timed LABEL COMMAND...: runs COMMAND into an emptied /tmp/po, prints "LABEL: N ms"
# (and its last error lines when it fails).
timed() {
  local label=$1; shift; rm -rf /tmp/po && mkdir /tmp/po
  local t0; t0=$(date +%s%N)
  "$@" >/dev/null 2>/tmp/err.txt || { echo "failed: $label"; tail -2 /tmp/err.txt; }
  echo "$label: $(ms "$t0") ms"
}
# make_inputs BIN IO_FILES GPU_FILES: the io config's inputs (and its floor,
# printed) in /tmp/bb_io and the GPU-bound config's in /tmp/bb_gpu; sets C
# and G (their configs) and ONE (an io input).
make_inputs() {
  python3 bench/batch_bench.py --bin "$PWD/$1" --floor .gpu/bin/bench_cpu_io_floor --files "$2" \
    --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
  python3 bench/batch_bench.py --bin "$PWD/$1" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
    --files "$3" --work /tmp/bb_gpu --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
  C=/tmp/bb_io/batch_bench.yaml; G=/tmp/bb_gpu/batch_bench.yaml
  ONE=$(ls /tmp/bb_io/in_*/* | head -1)
}
# dask_site [FOLDER]: the Dask wheels of .whl/ and FOLDER's sigstream wheel
# (default .whl) into a fresh /tmp/site, and the environment bench/dask_gpu.py
# runs in (PYTHONPATH, SIGSTREAM_CLI: the bundle's CLI).
dask_site() {
  rm -rf /tmp/site && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/site $(ls .whl/*.whl | grep -v sigstream) "${1:-.whl}"/sigstream*.whl || return 1
  export PYTHONPATH=/tmp/site SIGSTREAM_CLI=$PWD/.gpu/bin/sigstream PYTHONUNBUFFERED=1
}
# long_work [MIN_GB]: W, the folder of a long batch's inputs and outputs:
# /dev/shm/lb where /dev/shm has MIN_GB (default 200) free, else /tmp/lb;
# SHM_FREE, what /dev/shm had.
long_work() {
  SHM_FREE=$(df --output=avail -B1G /dev/shm 2>/dev/null | tail -1)
  W=/tmp/lb; [ "${SHM_FREE:-0}" -ge "${1:-200}" ] && W=/dev/shm/lb
}
# gpu_bound_inputs FILES: FILES GPU-bound inputs in $W/gpu (200 distinct, the
# rest hard links to them), made without timing anything; sets G, their config.
gpu_bound_inputs() {
  timeout 120 python3 bench/batch_bench.py --bin /bin/true --files "$1" --unique 200 --work "$W/gpu" \
    --config gpu --backend cuda --skip-loop --runs 1 --jobs 1 2>&1 | grep -E "^inputs"
  G=$W/gpu/batch_bench.yaml
}
