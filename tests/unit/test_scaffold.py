"""``course new-program``: a new program and its test module, in a copy of the project.

The fast tests check what is written; the torchrun test runs the written test module,
which launches the program's own launch line as real torchrun jobs, and finds the record
that the build's gate reads.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import SNIPPETS, copy_project, import_program, snippet_section
from coursekit.cli import main
from coursekit.runspec import launch_shape, read_spec
from coursekit.scaffold import ScaffoldError, new_program
from coursekit.verification import content_hash, test_for


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path, ("pyproject.toml", "mkdocs.yml", "docs", "snippets", "tests"))


def test_it_writes_a_program_whose_launch_spec_reads_and_its_test_module(project):
    made = new_program(project, "ddp-basics", "rank_sum")
    assert made.program == project / "snippets" / "ddp_basics" / "rank_sum.py"
    assert made.test == project / test_for("ddp_basics/rank_sum.py")  # the module the build names
    assert made.written == (made.program, made.test)  # the lesson's test package was there
    spec = read_spec(made.program)
    assert [line.text for line in spec.lines] == ["torchrun --standalone --nproc-per-node=2 rank_sum.py"]
    assert (spec.time_limit_s, spec.cuda_gpus, spec.outcome) == (120.0, 0, "passes")
    assert launch_shape(spec.lines[0], made.program.parent) == (2, 1)
    test = made.test.read_text(encoding="utf-8")
    compile(test, str(made.test), "exec")
    assert 'pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/rank_sum.py")]' in test
    assert 'test_bare_run = bare_run_test(PROGRAM, reference="job"' in test


def test_the_program_follows_the_device_rule_of_its_siblings(project):
    made = new_program(project, "ddp_basics", "rank_sum.py")  # the folder's spelling, and .py, are accepted
    assert snippet_section(made.program, "setup") == snippet_section(SNIPPETS / "ddp_basics" / "train.py", "setup")
    choose = import_program(made.program).choose_device
    for gpus, procs in [(0, 2), (1, 2), (2, 4), (2, 2), (8, 4), (1, 1)]:  # tests/unit/test_device_rule.py's cases
        for rank in range(procs):
            want = (f"cuda:{rank}", "nccl") if gpus >= procs else ("cpu", "gloo")
            device, backend = choose(rank, procs, gpus)
            assert (str(device), backend) == want, (gpus, procs, rank)


def test_the_include_lines_name_sections_the_program_has(project, capsys):
    assert main(["--config", str(project / "mkdocs.yml"), "new-program", "ddp-basics", "rank_sum"]) == 0
    out = capsys.readouterr().out
    program = project / "snippets" / "ddp_basics" / "rank_sum.py"
    for section in ("launch", "setup", "all_reduce"):
        assert f'--8<-- "ddp_basics/rank_sum.py:{section}"' in out
        assert snippet_section(program, section).strip(), section
    assert "pytest tests/snippets/test_ddp_basics/test_rank_sum.py" in out


def test_a_new_lesson_gets_its_test_package(project):
    (project / "docs" / "fault-tolerance.md").write_text("# Fault tolerance\n", encoding="utf-8")
    made = new_program(project, "fault-tolerance", "restart")
    package = project / "tests" / "snippets" / "test_fault_tolerance" / "__init__.py"
    assert made.written == (package, made.program, made.test)
    assert package.read_text(encoding="utf-8") == '"""Tests of the programs of docs/fault-tolerance.md, one module per program."""\n'


def test_it_never_overwrites(project, capsys):
    made = new_program(project, "ddp-basics", "rank_sum")
    made.program.write_text("edited\n", encoding="utf-8")
    made.test.unlink()  # only the program is left: still refused, and nothing written
    with pytest.raises(ScaffoldError, match=r"^snippets/ddp_basics/rank_sum\.py exists already; nothing was written"):
        new_program(project, "ddp-basics", "rank_sum")
    assert made.program.read_text(encoding="utf-8") == "edited\n" and not made.test.exists()
    with pytest.raises(ScaffoldError, match=r"^snippets/ddp_basics/train\.py exists already"):
        new_program(project, "ddp-basics", "train")
    assert main(["--config", str(project / "mkdocs.yml"), "new-program", "ddp-basics", "train"]) == 2
    assert capsys.readouterr().err.startswith("snippets/ddp_basics/train.py exists already")


@pytest.mark.parametrize("lesson,name,message", [
    ("ddp-basic", "rank_sum", "lesson 'ddp-basic': there is no page docs/ddp-basic.md; write the lesson's page first, "
                              "or name one of the lessons: data-vs-model-parallelism, ddp-basics, syncbn-and-sharding, "
                              "torchrun-launching"),
    ("verification", "rank_sum", "lesson 'verification': there is no page"),
    ("ddp-basics", "Rank-Sum", "program name 'Rank-Sum': use a lower-case Python module name"),
    ("ddp-basics", "class", "program name 'class': use a lower-case Python module name"),
])
def test_a_wrong_lesson_or_name_is_refused(project, lesson, name, message):
    before = sorted(p for p in project.rglob("*"))
    with pytest.raises(ScaffoldError) as refused:
        new_program(project, lesson, name)
    assert str(refused.value).startswith(message)
    assert sorted(p for p in project.rglob("*")) == before


@pytest.mark.torchrun
def test_the_written_test_module_runs_the_launch_line_and_records_the_program(tmp_path):
    """The writer's loop, closed: scaffold, run the written test module (the program's
    launch line with the harness, then bare), and the program has its record."""
    project = copy_project(tmp_path, ("pyproject.toml", "mkdocs.yml", "docs", "snippets", "tests", "hooks"))
    made = new_program(project, "ddp-basics", "rank_sum")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--bare-runs", "1",
                           "--reverify", str(made.test.relative_to(project))],
                          cwd=project, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout  # its claim and its one bare run
    digest, _ = content_hash(made.program, project / "snippets")
    records = [json.loads(p.read_text(encoding="utf-8")).get("ddp_basics/rank_sum.py", {})
               for p in (project / "snippets" / "verification").glob("*.json")]
    mine = [rec for found in records for rec in found.values()]
    assert [(rec["sha256"], rec["bare_runs"], rec["output"]["rank 0"]) for rec in mine] == [
        (digest, 1, ["sum over 2 ranks: 3"])], mine
