"""tests/gpu-check.sh, the one-GPU command, as far as a machine without a GPU can check it:
what it does without a GPU, how it selects programs, and its summary."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT
from gpu_check_summary import program_of, summarize

SCRIPT = ROOT / "tests" / "gpu-check.sh"
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU: run tests/gpu-check.sh itself")


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


@no_gpu
def test_without_a_gpu_it_says_why_and_changes_nothing(tmp_path):
    records = {p.name: p.read_bytes() for p in (ROOT / "snippets" / "verification").iterdir()}
    env = {"PATH": os.environ["PATH"], "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "nothing ran" in summary and "Requires: [CUDA GPU + torch with CUDA]" in summary
    assert json.loads((tmp_path / "out" / "device.json").read_text())["gpus"] == 0
    assert {p.name: p.read_bytes() for p in (ROOT / "snippets" / "verification").iterdir()} == records
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["device.json", "summary.md"]


@no_gpu
def test_its_first_run_selects_the_programs_that_need_cuda_and_says_what_they_need():
    proc = _pytest("tests/snippets", "--gpu-only", "--reverify", "--no-record", "-q", "-rs")
    assert proc.returncode == 0, proc.stdout[-3000:]
    skipped = [l for l in proc.stdout.splitlines() if l.startswith("SKIPPED")]
    assert skipped and all("Requires: [CUDA GPUs>=1] (this machine has 0)" in l for l in skipped), proc.stdout[-3000:]
    # syncbn_train.py's seven claims (statistics, gradients, the backward all-reduces) and
    # its three bare runs (their test is made in conftest.py)
    assert sorted(int(l.split("[")[1].split("]")[0]) for l in skipped) == [3, 7]
    assert proc.stdout.splitlines()[-1].startswith("10 skipped")


@no_gpu
def test_its_second_run_keeps_only_jobs_that_run_on_cuda_here():
    proc = _pytest("tests/snippets", "--cuda-only", "--nproc-per-node", "1", "-k", "bare_run and not test_syncbn_train",
                   "--collect-only", "-q")
    assert proc.returncode == 5, proc.stdout[-3000:]  # no CUDA here: every program would run on the CPU
    assert "deselected" in proc.stdout


def test_the_summary_lists_what_ran_and_the_records_it_wrote(tmp_path):
    assert program_of("tests.snippets.test_ddp_basics.test_train") == "ddp_basics/train.py"
    (tmp_path / "device.json").write_text(json.dumps({"torch": "2.13.0", "cuda": "12.8", "gpus": 1,
                                                      "names": ["NVIDIA H200"], "nccl": True, "python": "python3",
                                                      "platform": "cuda-1xnvidia-h200-x86_64-torch2.13.0"}))
    before = json.loads((ROOT / "snippets" / "verification" / "cpu-x86_64-torch2.13.0.json").read_text())
    after = json.loads(json.dumps(before))
    rec = dict(after["ddp_basics/train.py"]["cpu-gloo"], device="cuda", backend="nccl", device_count=1,
               nproc_per_node=1, checks="bare")
    after["ddp_basics/train.py"]["cuda-nccl"] = rec
    (tmp_path / "records.before.json").write_text(json.dumps(before))
    (tmp_path / "records.json").write_text(json.dumps(after))
    (tmp_path / "cuda-paths.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.snippets.test_ddp_basics.test_train" name="test_bare_run[bare-1]"/>'
        '<testcase classname="tests.snippets.test_data_vs_model_parallelism.test_pipeline_parallel" name="test_bare_run[bare-1]">'
        '<failure message="AssertionError: exit status 1 after 9.1 s&#10;more">x</failure></testcase>'
        '</testsuite></testsuites>')
    text = summarize(tmp_path)
    assert "NVIDIA H200 (1 CUDA GPUs)" in text
    assert "`snippets/verification/cuda-1xnvidia-h200-x86_64-torch2.13.0.json`" in text
    assert "## needs-cuda" in text and "did not run" in text
    ddp = next(l for l in text.splitlines() if l.startswith("| ddp_basics/train.py"))
    assert "| 1 | 0 | 0 |" in ddp and "cuda-nccl: cuda · nccl · 1 GPU · 1 process(es) × 1 node(s)" in ddp and "checks: bare" in ddp
    pipeline = next(l for l in text.splitlines() if l.startswith("| data_vs_model_parallelism/pipeline_parallel.py"))
    assert "| 0 | 1 | 0 | AssertionError: exit status 1 after 9.1 s | - |" in pipeline
