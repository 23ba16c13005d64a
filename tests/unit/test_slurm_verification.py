"""A Slurm batch script is verified like a program: its launch spec, its content
binding, its badge; and what one GPU can run of a program that needs CUDA."""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from coursekit.gate import add_badges, commands_not_shown
from po_i18n.interface import Interface
from po_i18n.project import Project
from coursekit.runspec import RunSpecError, batch_script, launch_shape, owner_of, parse_line, read_spec
from coursekit.verification import Record, content_hash, load_records, platform_name, save_records, status
from torchjob import bare_folder
from verification_plugin import device_plan

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "snippets" / "torchrun_launching"
CPU = "cpu-x86_64-torch2.13.0"
H100 = "cuda-1xnvidia-h100-80gb-hbm3-x86_64-torch2.11.0"


@pytest.fixture
def snippets(tmp_path) -> Path:
    shutil.copytree(ROOT / "snippets", tmp_path / "snippets")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    return tmp_path / "snippets"


def test_a_batch_line_takes_nodes_from_the_script_and_processes_from_its_torchrun():
    line = read_spec(LESSON / "slurm_train.py").lines[0]
    assert line.submits == "slurm_train.sbatch"
    assert launch_shape(line, LESSON) == (2, 2)  # --nodes=2; ${SLURM_GPUS_ON_NODE:-2} without GPUs
    # sbatch's own precedence: the command line over the script's #SBATCH lines
    assert launch_shape(parse_line("sbatch -N 3 slurm_train.sbatch"), LESSON) == (2, 3)
    assert launch_shape(parse_line("sbatch --nodes=4-8 -p gpu slurm_train.sbatch"), LESSON) == (2, 4)
    assert parse_line("torchrun --standalone train.py").submits is None


def test_a_batch_script_without_a_countable_torchrun_is_refused(tmp_path):
    (tmp_path / "a.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n")
    with pytest.raises(RunSpecError, match="runs no torchrun"):
        batch_script(parse_line("sbatch a.sbatch"), tmp_path)
    (tmp_path / "b.sbatch").write_text("#!/bin/bash\nsrun torchrun --nproc-per-node=$N train.py\n")
    with pytest.raises(RunSpecError, match=r"--nproc-per-node is '\$N'"):
        batch_script(parse_line("sbatch b.sbatch"), tmp_path)
    with pytest.raises(RunSpecError, match="no such file"):
        batch_script(parse_line("sbatch missing.sbatch"), tmp_path)


def test_the_script_is_part_of_the_program_s_content(snippets, tmp_path):
    program = snippets / "torchrun_launching" / "slurm_train.py"
    script = program.with_suffix(".sbatch")
    before, files = content_hash(program, snippets)
    assert sorted(files) == ["torchrun_launching/slurm_train.py", "torchrun_launching/slurm_train.sbatch"]
    script.write_text(script.read_text().replace("--time=00:10:00", "--time=00:20:00"))
    assert content_hash(program, snippets)[0] != before
    assert owner_of(script) == program
    assert sorted(p.name for p in bare_folder(program, tmp_path / "bare").iterdir()) == ["slurm_train.py", "slurm_train.sbatch"]


def _record(program: Path, snippets: Path, **fields) -> dict:
    digest, files = content_hash(program, snippets)
    base = dict(sha256=digest, files=files, torch="2.13.0", python="3.11", backend="gloo", device="cpu", device_count=0,
                nproc_per_node=2, nnodes=1, test="t", bare_runs=3)
    return asdict(Record(**{**base, **fields}))


def _badges(snippets: Path, records: dict, page: str, others: dict[str, dict] | None = None) -> tuple[list[str], list[str]]:
    """Badges of ``page`` with ``records`` as this CPU platform's file and ``others``
    as other platforms' files (``{platform: records}``)."""
    shutil.rmtree(snippets / "verification")
    (snippets / "verification").mkdir()
    for platform, recs in {CPU: records, **(others or {})}.items():
        (snippets / "verification" / f"{platform}.json").write_text(json.dumps(recs))
    result = add_badges(page, "torchrun-launching.md", Project.load(snippets.parent / "mkdocs.yml"), Interface())
    return [l for l in result.markdown.splitlines() if "course-badge" in l], result.problems


def test_the_batch_script_s_block_is_badged_with_the_program_s_slurm_record(snippets):
    program = snippets / "torchrun_launching" / "slurm_train.py"
    rec = _record(program, snippets, nnodes=2, launcher="slurm")
    page = '``` bash\n--8<-- "torchrun_launching/slurm_train.sbatch"\n```\n'
    badges, problems = _badges(snippets, {"torchrun_launching/slurm_train.py": {"cpu-gloo": rec}}, page)
    assert problems == []
    assert len(badges) == 1 and "Slurm, 2 nodes · torchrun 4 processes · gloo on CPU" in badges[0]
    # one byte of the script changed: the block the page shows is no longer verified
    script = program.with_suffix(".sbatch")
    script.write_text(script.read_text() + "\n")
    badges, problems = _badges(snippets, {"torchrun_launching/slurm_train.py": {"cpu-gloo": rec}}, page)
    assert "course-badge--unverified" in badges[0]
    assert problems and "snippets/torchrun_launching/slurm_train.py" in problems[0]


def test_the_batch_script_counts_as_its_program_shown_with_or_without_its_command():
    """Issue 33: the script included whole shows slurm_train.py; its command is the
    program's launch section (the sbatch line), wherever a page includes it."""
    script = '``` bash\n--8<-- "torchrun_launching/slurm_train.sbatch"\n```\n'
    command = '``` bash\n--8<-- "torchrun_launching/slurm_train.py:launch"\n```\n'
    snippets = ROOT / "snippets"
    assert commands_not_shown({"a.md": script, "b.md": command}, snippets) == []
    assert commands_not_shown({"a.md": script}, snippets) == [
        "a.md: program 'snippets/torchrun_launching/slurm_train.py' is shown without its command: no page includes "
        'its launch section; add a block with --8<-- "torchrun_launching/slurm_train.py:launch" to a.md']


def test_a_gpu_shared_over_gloo_and_bare_only_runs_say_exactly_that(snippets):
    syncbn = snippets / "syncbn_and_sharding" / "syncbn_train.py"
    shared = _record(syncbn, snippets, device="cuda", backend="gloo", device_count=1)
    page = '``` py\n--8<-- "syncbn_and_sharding/syncbn_train.py:train"\n```\n'
    badges, _ = _badges(snippets, {"syncbn_and_sharding/syncbn_train.py": {"cuda-gloo": shared}}, page)
    assert "torchrun 2 processes · gloo on 1 CUDA GPU" in badges[0] and "NCCL awaiting 2 CUDA GPUs" in badges[0]
    ddp = snippets / "ddp_basics" / "train.py"
    cpu = _record(ddp, snippets)
    bare = _record(ddp, snippets, device="cuda", backend="nccl", device_count=1, nproc_per_node=1, checks="bare",
                   torch="2.11.0")
    page = '``` py\n--8<-- "ddp_basics/train.py:train"\n```\n'
    badges, _ = _badges(snippets, {"ddp_basics/train.py": {"cpu-gloo": cpu, "cuda-nccl": bare}}, page)
    assert "gloo on CPU · torch 2.13.0" in badges[0]
    assert "its bare runs also passed with torchrun 1 process, NCCL on 1 CUDA GPU, torch 2.11.0" in badges[0]
    # a bare-only record never verifies a program by itself
    records = {"ddp_basics/train.py": {"cuda-nccl": bare}}
    assert not status("ddp_basics/train.py", snippets, {p: {e: Record(**r) for e, r in envs.items()} for p, envs in records.items()}).verified


def test_records_of_every_platform_merge_and_the_badge_names_each_machine(snippets):
    """One file per platform: a GPU machine's records (another torch) sit beside the CPU
    ones, the badge lists both with their torch versions, and saving one platform's
    records never rewrites another's file."""
    ddp = snippets / "ddp_basics" / "train.py"
    cpu = _record(ddp, snippets)
    fallback = _record(ddp, snippets, torch="2.11.0", python="3.12", checks="bare", bare_runs=1)
    nccl = _record(ddp, snippets, device="cuda", backend="nccl", device_count=1, nproc_per_node=1, checks="bare",
                   torch="2.11.0", python="3.12", bare_runs=1)
    page = '``` py\n--8<-- "ddp_basics/train.py:train"\n```\n'
    badges, problems = _badges(snippets, {"ddp_basics/train.py": {"cpu-gloo": cpu}}, page,
                               {H100: {"ddp_basics/train.py": {"cpu-gloo": fallback, "cuda-nccl": nccl}}})
    assert problems == []
    badge = badges[0].replace("\\_", "_")  # Markdown-escaped in the badge
    assert "gloo on CPU · torch 2.13.0" in badge
    assert ("its bare runs also passed with torchrun 1 process, NCCL on 1 CUDA GPU, torch 2.11.0, "
            "cuda-1xnvidia-h100-80gb-hbm3-x86_64") in badge
    assert ("its bare runs also passed with torchrun 2 processes, gloo on CPU, torch 2.11.0, "
            "cuda-1xnvidia-h100-80gb-hbm3-x86_64") in badge
    records = load_records(snippets)
    assert sorted(records["ddp_basics/train.py"]) == [f"{CPU}/cpu-gloo", f"{H100}/cpu-gloo", f"{H100}/cuda-nccl"]
    h100_file = (snippets / "verification" / f"{H100}.json").read_bytes()
    changed = {p: dict(envs) for p, envs in records.items()}
    changed["ddp_basics/train.py"][f"{CPU}/cpu-gloo"] = replace(records["ddp_basics/train.py"][f"{CPU}/cpu-gloo"], bare_runs=5)
    assert save_records(snippets, changed, CPU)
    assert (snippets / "verification" / f"{H100}.json").read_bytes() == h100_file
    assert json.loads((snippets / "verification" / f"{CPU}.json").read_text())["ddp_basics/train.py"]["cpu-gloo"]["bare_runs"] == 5
    assert "platform" not in (snippets / "verification" / f"{CPU}.json").read_text()


def test_a_platform_is_named_by_its_devices_processor_and_torch():
    assert platform_name("2.13.0", "x86_64") == CPU
    assert platform_name("2.11.0+cu130", "x86_64", ["NVIDIA H100 80GB HBM3"]) == H100
    assert platform_name("2.13.0", "aarch64", ["NVIDIA GH200 480GB"] * 4) == "cuda-4xnvidia-gh200-480gb-aarch64-torch2.13.0"


@pytest.mark.parametrize(("processes", "gpus", "nccl", "needs_cuda", "plan"), [
    (2, 2, True, False, ("cuda", "nccl", 2)),   # a GPU per process: NCCL
    (2, 1, True, False, ("cpu", "gloo", 0)),    # too few GPUs for a device-agnostic program: CPU
    (1, 1, True, False, ("cuda", "nccl", 1)),   # one process on the one GPU
    (2, 1, True, True, ("cuda", "gloo", 1)),    # a CUDA-only program shares the GPU over gloo
    (2, 0, False, True, ("cpu", "gloo", 0)),    # no GPU at all (the test is skipped)
])
def test_what_a_job_runs_on(processes, gpus, nccl, needs_cuda, plan):
    assert device_plan(processes, gpus, nccl, needs_cuda) == plan
