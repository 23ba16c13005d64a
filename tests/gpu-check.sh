#!/usr/bin/env bash
# One GPU verifies what one GPU can. On a machine with CUDA GPUs (one is enough), run
# every program that uses CUDA on them and record exactly what ran; sized for 15 minutes
# on one GPU, start-up and installs included.
#
#   tests/gpu-check.sh [OUT]        (OUT defaults to gpu-check/)
#
# 1. Programs that need CUDA (requires: cuda>=N), with their page's exact command and
#    every test: with fewer GPUs than processes they share them over gloo, as
#    syncbn_train.py does on one GPU (its NCCL path needs a GPU per process).
# 2. Every other program's CUDA path (CUDA and NCCL, one GPU per process), with as many
#    processes per node as there are GPUs: the page's launch line with --nproc-per-node
#    set to that number, bare runs only (with their harness run), since the lesson's
#    claims are about the page's number of processes. Records say checks: "bare".
# Records go to snippets/verification.json (commit it); OUT gets a copy, each run's JUnit
# XML and log, and summary.md: the device, and for every program what ran and passed.
# Without a CUDA GPU it writes why to OUT/summary.md and exits 2, having run nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-gpu-check}
mkdir -p "$OUT"
LIMIT_S=${GPU_CHECK_LIMIT_S:-660}  # both pytest runs together; the rest of 15 minutes is start-up

# A Python whose torch sees CUDA: $PYTHON, else the project's .venv, else python3 (a GPU
# image's own torch; the tests need only pytest, pytest-xdist, psutil and numpy beside it),
# else the project's .venv made now (pip installs the pinned torch, a CUDA build on PyPI).
has_cuda_torch() { "$1" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; }
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for candidate in .venv/bin/python python3; do
    if command -v "$candidate" >/dev/null && has_cuda_torch "$candidate"; then PY=$candidate; break; fi
  done
fi
if [ -z "$PY" ] && [ ! -x .venv/bin/python ]; then
  make .venv/.test-deps >"$OUT/install.log" 2>&1 && has_cuda_torch .venv/bin/python && PY=.venv/bin/python
fi
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python || PY=python3; }
PY=$(command -v "$PY")
export PYTHONPATH="$PWD/hooks${PYTHONPATH:+:$PYTHONPATH}"  # coursekit, for the test process only (jobs get PATH alone)

GPUS=$("$PY" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null || echo 0)
"$PY" - "$OUT" "$GPUS" <<'PYEOF'
import json, platform, sys
out, gpus = sys.argv[1], int(sys.argv[2])
try:
    import torch
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus,
            "names": [torch.cuda.get_device_name(i) for i in range(gpus)],
            "nccl": torch.distributed.is_nccl_available() if gpus else False}
except Exception as exc:  # no torch at all
    info = {"torch": None, "error": str(exc), "gpus": 0}
info["python"] = sys.executable + " " + platform.python_version()
json.dump(info, open(f"{out}/device.json", "w"), indent=2)
PYEOF
if [ "$GPUS" -lt 1 ]; then
  reason="Requires: [CUDA GPU + torch with CUDA] (python: $PY; torch sees $GPUS CUDA GPUs)"
  printf '# GPU check: nothing ran\n\n%s\n' "$reason" >"$OUT/summary.md"
  echo "$reason; nothing verified (see $OUT/summary.md)" >&2
  exit 2
fi

cp snippets/verification.json "$OUT/verification.before.json"
START=$(date +%s)
LANES=$("$PY" -c 'import os; print(max(1, min(4, (os.cpu_count() or 2) // 4)))')
run() {  # name, time left, pytest arguments...
  local name=$1 left=$2; shift 2
  timeout --signal=TERM --kill-after=20 "$left" "$PY" -m pytest tests/snippets --reverify -p no:cacheprovider \
    -n "$LANES" --dist loadfile --junitxml="$OUT/$name.xml" -o junit_family=xunit2 "$@" >"$OUT/$name.log" 2>&1
  echo "$name: pytest exit $? after $(( $(date +%s) - START )) s" | tee -a "$OUT/runs.txt"
}
run needs-cuda "$LIMIT_S" --gpu-only
run cuda-paths "$(( LIMIT_S - ($(date +%s) - START) ))" --cuda-only --nproc-per-node "$GPUS" -k "bare_run and not syncbn_train"
cp snippets/verification.json "$OUT/verification.json"
"$PY" tests/gpu_check_summary.py "$OUT" >"$OUT/summary.md"
cat "$OUT/summary.md"
