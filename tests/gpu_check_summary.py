"""The summary of ``tests/gpu-check.sh``: what the GPU machine was, and for every program
what ran on it, what passed, and which records it wrote.

    python tests/gpu_check_summary.py OUT WORK      (Markdown on stdout)

Reads what the script left: ``OUT/device.json``, and in WORK the JUnit XML of each pytest
run (``needs-cuda.xml``, ``cuda-paths.xml``, ``page-commands.xml``) and this platform's
records before and after (``records.before.json``, ``records.json``).
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

RUNS = {"needs-cuda": "programs that need CUDA, their page's command, every test",
        "cuda-paths": "every other program's CUDA path, one process per GPU, bare runs only",
        "page-commands": "every other program's page command as printed (the device rule's choice), bare runs only"}


def program_of(classname: str) -> str | None:
    """``tests.snippets.test_ddp_basics.test_train`` -> ``ddp_basics/train.py`` (the
    one-slug rule of ``coursekit.verification.test_for``, read backwards)."""
    parts = classname.split(".")
    if len(parts) < 4 or parts[:2] != ["tests", "snippets"]:
        return None
    return f"{parts[2].removeprefix('test_')}/{parts[3].removeprefix('test_')}.py"


def results(xml: Path) -> dict[str, dict]:
    """Per program: counts of passed/failed/skipped test cases and the first failure line."""
    out: dict[str, dict] = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0, "why": ""})
    for case in ET.parse(xml).getroot().iter("testcase"):
        program = program_of(case.get("classname", ""))
        if program is None:
            continue
        row = out[program]
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            row["failed"] += 1
            row["why"] = row["why"] or next(iter((bad.get("message") or "").splitlines()), "")[:160]
        elif case.find("skipped") is not None:
            row["skipped"] += 1
            row["why"] = row["why"] or (case.find("skipped").get("message") or "")[:160]
        else:
            row["passed"] += 1
    return dict(out)


def describe(record: dict) -> str:
    """One record as what ran: ``cuda · nccl · 1 GPU · 1 process × 1 node · 3 bare runs · checks: bare · torch 2.11.0``."""
    return (f"{record['device']} · {record['backend']} · {record['device_count']} GPU · "
            f"{record['nproc_per_node']} process(es) × {record['nnodes']} node(s) · {record['bare_runs']} bare runs · "
            f"checks: {record.get('checks', 'claims')} · torch {record['torch']}")


def summarize(out: Path, work: Path | None = None) -> str:
    """The Markdown summary of one gpu-check run: ``out`` holds ``device.json``; ``work``
    (default ``out``) the JUnit XML and the records before and after."""
    work = work or out
    device = json.loads((out / "device.json").read_text())
    before = json.loads((work / "records.before.json").read_text()) if (work / "records.before.json").is_file() else {}
    after = json.loads((work / "records.json").read_text()) if (work / "records.json").is_file() else {}
    lines = ["# GPU check", "",
             f"- device: {', '.join(device.get('names', [])) or 'none'} ({device.get('gpus', 0)} CUDA GPUs)",
             f"- platform (records file): `snippets/verification/{device.get('platform')}.json`",
             f"- torch {device.get('torch')} (CUDA {device.get('cuda')}), NCCL available: {device.get('nccl')}",
             f"- python: {device.get('python')}", ""]
    for name, what in RUNS.items():
        xml = work / f"{name}.xml"
        lines += [f"## {name}: {what}", ""]
        if not xml.is_file():
            lines += ["did not run (no JUnit XML)", ""]
            continue
        lines += ["| program | passed | failed | skipped | first failure or skip | records written |", "| --- | --- | --- | --- | --- | --- |"]
        for program, row in sorted(results(xml).items()):
            new = {env: rec for env, rec in after.get(program, {}).items() if before.get(program, {}).get(env) != rec}
            written = "; ".join(f"{env}: {describe(rec)}" for env, rec in sorted(new.items())) or "-"
            lines.append(f"| {program} | {row['passed']} | {row['failed']} | {row['skipped']} | "
                         f"{row['why'].replace('|', '/')} | {written} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None))
