#!/bin/bash
# tools/cuda_host_instructions.sh [STATEMENT] [SETUP]: the host instructions one call of
# STATEMENT (default `a + b`) executes on the CUDA path, counted by callgrind on a machine
# without a GPU: the driver is tools/fake_libcuda.c (a stand-in whose calls do nothing), so
# the count is our code alone (binding, dispatch, allocation, argument packing). Two runs
# differ only in the number of calls; their difference per call is printed, and the
# callgrind files stay in build/fakecuda for callgrind_annotate. SETUP defines the operands
# (default: a and b, 16 float32 on cuda:0). Needs valgrind and an installed xpuruntime.
# CACHE=1 also simulates the caches, with each fake launch evicting our code as the real
# driver's does (FAKE_CUDA_EVICT in fake_libcuda.c), and prints the L1 instruction misses a
# call by object: on the GPU hosts the time of our part follows them (Note [Where the host
# time of a tiny op goes] in cpp/src/cuda/host_costs.cpp).
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
cache=()
if [ "${CACHE:-0}" = 1 ]; then
  cache=(--cache-sim=yes --I1=32768,8,64)
  export FAKE_CUDA_EVICT=1
fi
count() {
  valgrind --tool=callgrind "${cache[@]}" --callgrind-out-file="$out/callgrind.$1" \
    "${PYTHON:-python3}" -c "$program" "$1" 2>&1 | sed -n 's/.*I *refs: *//p' | tr -d ,
}
base=$(count 0)
more=$(count 10000)
echo "$statement: $(( (more - base) / 10000 )) instructions a call (callgrind; fake driver)"
if [ "${CACHE:-0}" = 1 ]; then
  # Instruction-cache misses a call, by object (the fake driver's own are the eviction).
  for n in 0 10000; do
    callgrind_annotate --show=I1mr --threshold=100 "$out/callgrind.$n" >"$out/misses.$n"
  done
  "${PYTHON:-python3}" - "$out/misses.0" "$out/misses.10000" <<'EOF'
import collections, re, sys
def by_object(path):
    sums = collections.Counter()
    for line in open(path):
        m = re.match(r"\s*([\d,]+) .*\[(.*)\]\s*$", line)
        if m:
            name = m.group(2).rsplit("/", 1)[-1]
            sums[name.split(".cpython")[0].split(".so")[0]] += int(m.group(1).replace(",", ""))
    return sums
base, more = by_object(sys.argv[1]), by_object(sys.argv[2])
for name in sorted(more, key=lambda k: base[k] - more[k]):
    per = (more[name] - base[name]) / 10000
    if per >= 0.5:
        print(f"  L1 instruction misses a call, {name}: {per:.0f}")
EOF
fi
