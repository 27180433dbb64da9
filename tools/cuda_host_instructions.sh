#!/bin/bash
# tools/cuda_host_instructions.sh [STATEMENT] [SETUP]: the host instructions one call of
# STATEMENT (default `a + b`) executes on the CUDA path, counted by callgrind on a machine
# without a GPU: the driver is tools/fake_libcuda.c (a stand-in whose calls do nothing), so
# the count is our code alone (binding, dispatch, allocation, argument packing). Two runs
# differ only in the number of calls; their difference per call is printed, and the
# callgrind files stay in build/fakecuda for callgrind_annotate. SETUP defines the operands
# (default: a and b, 16 float32 on cuda:0). Needs valgrind and an installed xpuruntime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/fakecuda"
mkdir -p "$out"
cc -O2 -shared -fPIC -o "$out/libcuda.so" "$root/tools/fake_libcuda.c"
statement=${1:-"a + b"}
setup=${2:-"a = x.ones(16, device='cuda:0'); b = x.ones(16, device='cuda:0')"}
program="import sys, xpuruntime as x
assert x.cuda.is_available(), 'the fake driver was not loaded'
$setup
def loop(n):
    for _ in range(n):
        $statement
loop(3000)
loop(int(sys.argv[1]))"
export LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONHASHSEED=0 \
  OPENBLAS_NUM_THREADS=1 XPURUNTIME_NUM_THREADS=1
count() {
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$1" \
    "${PYTHON:-python3}" -c "$program" "$1" 2>&1 | sed -n 's/.*I *refs: *//p' | tr -d ,
}
base=$(count 0)
more=$(count 10000)
echo "$statement: $(( (more - base) / 10000 )) instructions a call (callgrind; fake driver)"
