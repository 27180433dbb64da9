#!/usr/bin/env bash
# tools/cuda_sanitize.sh: on a GPU machine, compute-sanitizer (memcheck) over the CUDA tests of
# one file per kernel family, then the CUDA soak (mixed ops, and the out-of-memory path 100
# times). Logs and the soak's JSON go to $OUT (default /tmp). Needs xpuruntime installed and
# compute-sanitizer on the PATH (the CUDA toolkit's; it does not work under gVisor).
#
#   tools/cuda_sanitize.sh [pytest -k expression]
set -o pipefail
out=${OUT:-/tmp}
root=$(cd "$(dirname "$0")/.." && pwd)
FAMILIES=(
  tests/test_elementwise_cuda_functions.py  # elementwise (NVRTC)
  tests/test_reductions_cuda.py             # reductions and scans
  tests/test_indexing_cuda.py               # gather, scatter, masks
  tests/test_sorting.py                     # radix sort, argsort
  tests/test_set_functions.py               # unique, isin
  tests/test_fft_cuda.py                    # cuFFT
  tests/test_linalg_cuda_factorisations.py  # cuSOLVER
  tests/test_matmul.py                      # cuBLAS(Lt), native matmul
  tests/test_caching_allocator.py           # the allocator
  tests/test_conventions.py                 # pickle/copy/tolist on cuda
)
status=0
cd "$root" || exit 2
compute-sanitizer --tool memcheck --target-processes all --error-exitcode 86 \
  --log-file "$out/memcheck.%p.log" \
  python3 -m pytest -q -p no:randomly -n 0 -m cuda ${1:+-k "$1"} "${FAMILIES[@]}" \
  2>&1 | tee "$out/memcheck_pytest.log" || status=1
grep -h "ERROR SUMMARY" "$out"/memcheck.*.log | sort | uniq -c
python3 tools/soak.py --devices cuda:0 --ops 200000 --oom-rounds 100 --json "$out/soak.json" \
  2>&1 | tee "$out/soak.log" || status=1
exit $status
