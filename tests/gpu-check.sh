#!/usr/bin/env bash
# One GPU verifies what one GPU can. On a machine with CUDA GPUs (one is enough), run
# every CUDA path the machine can prove and record exactly what ran; sized for 10 minutes
# of run time on one H100 (GPU_CHECK_LIMIT_S, default 540 s, for all runs together).
#
#   tests/gpu-check.sh [OUT]        (OUT defaults to gpu-check/)
#
# 1. needs-cuda: the programs that need CUDA (requires: cuda>=N) with their page's exact
#    command and every test; with fewer GPUs than processes they share them over gloo.
# 2. cuda-paths: every program's CUDA and NCCL path with one process per GPU (on one GPU,
#    a world size of 1: NCCL init with device_id, the program's collectives, its teardown),
#    bare runs only (one, with its harness run), since the lesson's claims are about the
#    page's number of processes.
# 3. page-commands: every other program's page command exactly as printed, bare runs
#    only: with fewer GPUs than the page's processes each program's device rule falls
#    back to the CPU and gloo and says so, which is what a reader with this machine gets.
#    Programs in which a GPU changes nothing are left out (NO_GPU_PART below).
# Records go to this platform's file, snippets/verification/<platform>.json (commit it;
# it merges with every other platform's). OUT gets: summary.md (the device, and per program
# what ran and passed and the records written), device.json, runs.txt, the records file,
# and logs.tar.gz (each run's JUnit XML and pytest log): five files, what a device run
# can bring back. Without a CUDA GPU it writes why to OUT/summary.md and exits 2.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-gpu-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK="$OUT/work"
rm -rf "$WORK" && mkdir -p "$WORK"
LIMIT_S=${GPU_CHECK_LIMIT_S:-540}

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
  make .venv/.test-deps >"$WORK/install.log" 2>&1 && has_cuda_torch .venv/bin/python && PY=.venv/bin/python
fi
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python || PY=python3; }
PY=$(command -v "$PY")
export PYTHONPATH="$PWD/hooks:$PWD/tests${PYTHONPATH:+:$PYTHONPATH}"  # coursekit and the plugin, for the test process only (jobs get PATH alone)

GPUS=$("$PY" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null || echo 0)
"$PY" - "$OUT" "$GPUS" <<'PYEOF'
import json, platform, sys
out, gpus = sys.argv[1], int(sys.argv[2])
try:
    import torch
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus,
            "names": [torch.cuda.get_device_name(i) for i in range(gpus)],
            "nccl": torch.distributed.is_nccl_available() if gpus else False}
    if gpus:
        from verification_plugin import machine_platform
        info["platform"] = machine_platform()
except Exception as exc:  # no torch at all
    info = {"torch": None, "error": str(exc), "gpus": 0}
info["python"] = sys.executable + " " + platform.python_version()
json.dump(info, open(f"{out}/device.json", "w"), indent=2)
PYEOF
if [ "$GPUS" -lt 1 ]; then
  reason="Requires: [CUDA GPU + torch with CUDA] (python: $PY; torch sees $GPUS CUDA GPUs)"
  printf '# GPU check: nothing ran\n\n%s\n' "$reason" >"$OUT/summary.md"
  rm -rf "$WORK"
  echo "$reason; nothing verified (see $OUT/summary.md)" >&2
  exit 2
fi
# resumable_data.py needs torchdata (pyproject.toml's "verify" extra). A GPU image's own
# Python may lack it and the machine may be offline: install it from a wheel carried in
# .cache/wheels/ (pip download --no-deps -d .cache/wheels torchdata==0.11.0) if there is
# one; without it, that program's tests skip with the reason.
if ! "$PY" -c 'import torchdata' 2>/dev/null; then
  wheel=$(ls .cache/wheels/torchdata-0.11.0-*.whl 2>/dev/null | head -n 1)
  if [ -n "$wheel" ]; then
    "$PY" -m pip install --no-deps --no-index "$wheel" >>"$WORK/install.log" 2>&1 \
      || "$PY" -m pip install --user --break-system-packages --no-deps --no-index "$wheel" >>"$WORK/install.log" 2>&1 \
      || echo "tests/gpu-check.sh: could not install $wheel (see $WORK/install.log)" >&2
  fi
fi
PLATFORM=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("platform", ""))' "$OUT/device.json")
if [ -z "$PLATFORM" ]; then
  echo "tests/gpu-check.sh: no platform name in $OUT/device.json (the test plugin did not import: see its error there); nothing ran" >&2
  exit 2
fi
RECORDS="snippets/verification/$PLATFORM.json"
if [ -f "$RECORDS" ]; then cp "$RECORDS" "$WORK/records.before.json"; else echo '{}' >"$WORK/records.before.json"; fi

START=$(date +%s)
LANES=$("$PY" -c 'import os; print(max(1, min(8, (os.cpu_count() or 2) // 2)))')
run() {  # name, share of the time left (percent), pytest arguments...
  local name=$1 share=$2; shift 2
  local left=$(( (LIMIT_S - ($(date +%s) - START)) * share / 100 ))
  if [ "$left" -lt 30 ]; then echo "$name: not run, ${left} s left" | tee -a "$OUT/runs.txt"; return; fi
  # SIGINT at the limit: pytest stops as on Ctrl-C, still writing its JUnit XML and the
  # records of the programs that finished (SIGTERM would lose both)
  timeout --signal=INT --kill-after=30 "$left" "$PY" -m pytest tests/snippets --reverify -p no:cacheprovider \
    --junitxml="$WORK/$name.xml" -o junit_family=xunit2 "$@" >"$WORK/$name.log" 2>&1
  echo "$name: pytest exit $? after $(( $(date +%s) - START )) s (limit ${left} s)" | tee -a "$OUT/runs.txt"
  [ -f "$RECORDS" ] && cp "$RECORDS" "$OUT/$PLATFORM.json"  # brought back even if a later run is cut short
}
# Left out of page-commands: programs on the CPU on purpose, a rendezvous that never meets
# (no worker starts), and the Slurm batch script (no Slurm on a lone GPU machine).
NO_GPU_PART="not test_stuck and not test_collective_timeout and not test_uneven_inputs_no_join and not test_pipeline_hang and not test_dcp_save_rank0 and not test_syncbn_on_cpu and not test_multinode_standalone and not test_slurm_train"
# Break-it programs that follow the device rule: with one process per GPU they no longer fail.
BREAK_IT="not test_desync and not test_find_stuck_rank and not test_unused_params_error"
run needs-cuda 30 -n 0 --gpu-only
run cuda-paths 60 -n "$LANES" --dist loadfile --cuda-only --bare-runs 1 --nproc-per-node "$GPUS" \
  -k "bare_run and not test_syncbn_train and $NO_GPU_PART and $BREAK_IT"
run page-commands 100 -n "$LANES" --dist loadfile --bare-runs 1 -k "bare_run and not test_syncbn_train and $NO_GPU_PART"
if [ -f "$RECORDS" ]; then cp "$RECORDS" "$WORK/records.json"; else echo '{}' >"$WORK/records.json"; fi
"$PY" tests/gpu_check_summary.py "$OUT" "$WORK" >"$OUT/summary.md"
tar -czf "$OUT/logs.tar.gz" -C "$WORK" . && rm -rf "$WORK"
cat "$OUT/summary.md"
