#!/usr/bin/env bash
# tools/cuda_sanitize.sh: on a GPU machine, compute-sanitizer (memcheck) over the CUDA tests of
# one file per kernel family, then the CUDA soak (mixed ops, and the out-of-memory path 100
# times). Logs and the soak's JSON go to $OUT (default /tmp). Needs xpuruntime installed and
# compute-sanitizer on the PATH (the CUDA toolkit's; it does not work under gVisor).
#
#   tools/cuda_sanitize.sh [pytest -k expression]
#
# The families run side by side, one compute-sanitizer process each with 2 pytest-xdist
# workers (memcheck slows a test run 10-50x; --target-processes all follows the workers,
# and the process's summary counts their errors too).
# XRT_SANITIZE_SOAK=0 skips the soak.
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
  tests/test_linalg_cuda_factorisations.py  # cuSOLVER: cholesky, det, inv, solve, qr
  tests/test_linalg_cuda_spectral.py        # cuSOLVER: eigh, svd
  tests/test_linalg_cuda_layouts.py         # cuSOLVER: batched and strided operands
  tests/test_matmul.py                      # cuBLAS(Lt), native matmul
  tests/test_caching_allocator.py           # the allocator
  tests/test_conventions.py                 # pickle/copy/tolist on cuda
  tests/test_cuda_user_kernels.py           # RawKernel, ElementwiseKernel, ReductionKernel
  tests/test_native_engine_cuda.py          # the native inference engine on CUDA
  tests/test_special.py                     # erf, gelu
  tests/test_nn_linear.py                   # cuBLASLt epilogues
  tests/test_nn_rows.py                     # softmax, layer_norm, rms_norm
  tests/test_profiler_cuda.py               # events, device times
)
# Note: this test loads cuFFT in a child process with a 120 s limit, which a child under
# memcheck (every cuFFT kernel instrumented at load) does not meet: not a memory error.
SLOW_CHILD=tests/test_fft_cuda.py::test_missing_cufft_is_a_cuda_error
status=0
cd "$root" || exit 2
pids=()
for family in "${FAMILIES[@]}"; do
  name=$(basename "$family" .py)
  # API errors the tests provoke on purpose (an out-of-memory path, a missing kernel name)
  # are not memory errors: --report-api-errors no keeps them out of the count.
  compute-sanitizer --tool memcheck --target-processes all --error-exitcode 86 \
    --report-api-errors no \
    --log-file "$out/memcheck.$name.%p.log" \
    python3 -m pytest -q -p no:randomly -n 2 -m cuda --deselect "$SLOW_CHILD" ${1:+-k "$1"} \
    "$family" \
    > "$out/memcheck_pytest.$name.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { status=1; echo "FAILED: ${FAMILIES[$i]}"; }
  name=$(basename "${FAMILIES[$i]}" .py)
  echo "$name: $(tail -n 1 "$out/memcheck_pytest.$name.log"); memcheck:" \
    "$(grep -h "ERROR SUMMARY" "$out"/memcheck."$name".*.log | sort | uniq -c | xargs)"
done
[ "${XRT_SANITIZE_SOAK:-1}" = 0 ] && exit $status
python3 tools/soak.py --devices cuda:0 --ops 200000 --oom-rounds 100 --json "$out/soak.json" \
  2>&1 | tee "$out/soak.log" || status=1
exit $status
