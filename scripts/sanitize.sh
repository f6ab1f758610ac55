#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck on every example (the main job,
# examples/main.py, which runs them on the GPU), on the GEMM kernels (their GPU tests) and
# on the attention kernels where benchmarks/attention.py exists; prints one line per (tool,
# job) and a summary.  Run on the GPU machine:
#
#     scripts/sanitize.sh [--tools memcheck,racecheck] [--jobs examples,gemm,attention]
#
# ATTENTION_CMD overrides the attention job's command (e.g. a shorter run).
# Logs go to $SANITIZE_OUT (default out/sanitize/<tool>.<job>.log).  Exit status: 0 when every
# run reports 0 errors and succeeds, 1 otherwise, 2 when compute-sanitizer is missing.
source "$(dirname "$0")/env.sh"

TOOLS=memcheck,racecheck,synccheck
JOBS=examples,gemm,attention
while [ $# -gt 0 ]; do
    case "$1" in
        --tools) TOOLS="$2"; shift 2 ;;
        --jobs) JOBS="$2"; shift 2 ;;
        *) echo "usage: scripts/sanitize.sh [--tools T,..] [--jobs J,..]" >&2; exit 2 ;;
    esac
done

SAN="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}"
for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
    [ -z "$SAN" ] && [ -x "$d/compute-sanitizer" ] && SAN="$d/compute-sanitizer"
done
if [ -z "$SAN" ]; then
    echo "error: compute-sanitizer not found (set COMPUTE_SANITIZER or add it to PATH)" >&2
    exit 2
fi
OUT="${SANITIZE_OUT:-out/sanitize}"
mkdir -p "$OUT"
# fresh compiles (nothing served from an old cache), and torch's allocator off so memcheck
# sees each buffer's real bounds
export TILEWORK_CACHE_DIR="$OUT/cache"
export PYTORCH_NO_CUDA_MEMORY_CACHING=1

job_cmd() {
    case "$1" in
        examples) echo "python examples/main.py -o $OUT/ir" ;;
        gemm) echo "python -m pytest -q -x -p no:cacheprovider test/python/test_dot_gpu.py \
test/python/test_dot_mma_gpu.py test/python/test_dot_wgmma_gpu.py \
test/python/test_pipeline_gpu.py test/python/test_example_persistent_matmul.py" ;;
        attention)
            if [ -n "${ATTENTION_CMD:-}" ]; then echo "$ATTENTION_CMD"
            elif [ -f benchmarks/attention.py ]; then echo "python benchmarks/attention.py"
            elif ls test/python/test_attention*_gpu.py >/dev/null 2>&1; then
                echo "python -m pytest -q -x -p no:cacheprovider $(ls test/python/test_attention*_gpu.py)"
            fi ;;
    esac
}

echo "$("$SAN" --version | tail -1); GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
fail=0
summary=()
for tool in ${TOOLS//,/ }; do
    for job in ${JOBS//,/ }; do
        cmd="$(job_cmd "$job")"
        if [ -z "$cmd" ]; then
            summary+=("$(printf '%-10s %-10s %s' "$tool" "$job" "skipped (nothing to run)")")
            continue
        fi
        log="$OUT/$tool.$job.log"
        # cuda-python probes driver entry points that may not exist (cuGetProcAddress answers
        # CUDA_ERROR_INVALID_VALUE, which it handles): host API errors, not the kernels'
        api=""
        [ "$tool" = memcheck ] && api="--report-api-errors no"
        start=$(date +%s)
        set +e
        # (--error-exitcode: a reported error fails the run even if the program succeeds)
        "$SAN" --tool "$tool" --target-processes all --error-exitcode 99 $api \
            --print-limit 20 $cmd >"$log" 2>&1
        rc=$?
        set -e
        secs=$(( $(date +%s) - start ))
        errs=$({ grep -Eo "ERROR SUMMARY: [0-9]+|RACECHECK SUMMARY: [0-9]+" "$log" || true; } \
            | awk '{s += $3} END {print s + 0}')
        procs=$(grep -Ec "(ERROR|RACECHECK) SUMMARY" "$log" || true)  # one per process
        status="ok"
        if [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ]; then status="FAIL (exit $rc)"; fail=1; fi
        line="$(printf '%-10s %-10s %4s errors in %s processes, %5ss  %s  %s' \
            "$tool" "$job" "$errs" "$procs" "$secs" "$status" "$log")"
        echo "$line"
        summary+=("$line")
    done
done
echo
echo "summary:"
printf '  %s\n' "${summary[@]}"
exit $fail
