"""A program's test module must say which program it verifies, and say it right.

Only a module marked ``pytest.mark.verifies("<slug>/<program>.py")`` writes a record when
it passes; without the marker its tests pass, nothing is recorded, and the build keeps
telling the writer to run ``pytest tests/snippets/test_<slug>/test_<program>.py``
(issue 37). ``verification_plugin.verifies_problem`` says what is wrong, and the plugin
makes it a one-line collection error of the module.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, copy_project
from verification_plugin import LESSON_TESTS, named_program, verifies_problem

LESSON = LESSON_TESTS / "test_ddp_basics"


def test_a_lesson_module_is_named_after_its_program():
    assert named_program(LESSON / "test_train.py") == "ddp_basics/train.py"
    assert named_program(LESSON / "test_bucket_defaults.py") == "ddp_basics/bucket_defaults.py"
    assert named_program(LESSON_TESTS / "test_teardown_guard.py") is None
    assert named_program(LESSON / "lesson.py") is None
    assert named_program(ROOT / "tests" / "runner" / "test_torchjob.py") is None


def test_the_siblings_marker_is_right():
    assert verifies_problem(LESSON / "test_train.py", {"ddp_basics/train.py"}, launches=True) is None


def test_a_module_of_an_existing_program_without_the_marker_is_named_with_the_line_to_add():
    problem = verifies_problem(LESSON / "test_train.py", set(), launches=True)
    assert problem == (
        "tests/snippets/test_ddp_basics/test_train.py: verifies no program, so passing here writes no record of "
        "snippets/ddp_basics/train.py and the build keeps saying it changed since its last passing run; "
        "add pytest.mark.verifies('ddp_basics/train.py') to its pytestmark")
    # even when the writer also forgot the torchrun marker
    assert verifies_problem(LESSON / "test_train.py", set(), launches=False) == problem


def test_a_marker_copied_from_a_sibling_is_named():
    problem = verifies_problem(LESSON / "test_evaluate.py", {"ddp_basics/train.py"}, launches=True)
    assert problem == (
        "tests/snippets/test_ddp_basics/test_evaluate.py: verifies snippets/ddp_basics/train.py, but the build tells "
        "whoever changes that program to run tests/snippets/test_ddp_basics/test_train.py; mark it "
        "pytest.mark.verifies('ddp_basics/evaluate.py'), the program it is named after")


def test_a_marker_naming_no_program_is_named():
    problem = verifies_problem(LESSON / "test_train.py", {"ddp_basics/trian.py"}, launches=True)
    assert problem.startswith("tests/snippets/test_ddp_basics/test_train.py: pytest.mark.verifies('ddp_basics/trian.py') "
                              "names no program (there is no snippets/ddp_basics/trian.py)")
    assert problem.endswith(": 'ddp_basics/train.py'")


def test_a_torchrun_module_named_after_no_program_is_named():
    problem = verifies_problem(LESSON / "test_rank_sums.py", set(), launches=True)
    assert "launches torchrun jobs but verifies no program, and there is no snippets/ddp_basics/rank_sums.py" in problem
    assert problem.endswith("pytest.mark.verifies('ddp_basics/<program>.py')")


def test_modules_that_run_no_program_need_no_marker():
    assert verifies_problem(LESSON / "test_bucket_defaults.py", set(), launches=False) is None
    assert verifies_problem(LESSON_TESTS / "test_teardown_guard.py", set(), launches=True) is None


def test_a_marker_outside_the_programs_module_is_named():
    problem = verifies_problem(ROOT / "tests" / "runner" / "test_torchjob.py", {"ddp_basics/train.py"}, launches=True)
    assert problem.endswith("move its tests to tests/snippets/test_ddp_basics/test_train.py")


@pytest.mark.parametrize("lanes", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_pytest_stops_at_collection_in_one_line(tmp_path, lanes):
    """The issue's case, in a copy of the project: a program's test module without its
    marker. pytest stops before running anything, with one line and no traceback."""
    project = copy_project(tmp_path, ("pyproject.toml", "mkdocs.yml", "docs", "i18n", "tests", "snippets", "hooks"))
    module = project / "tests" / "snippets" / "test_ddp_basics" / "test_accumulate.py"
    text = module.read_text(encoding="utf-8")
    marked = ', pytest.mark.verifies("ddp_basics/accumulate.py")'
    assert marked in text
    module.write_text(text.replace(marked, ""), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *lanes,
                           "tests/snippets/test_ddp_basics/test_accumulate.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    # pytest: interrupted (2); pytest-xdist: failed (1); either way nothing ran
    assert proc.returncode in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.TESTS_FAILED), out
    line = ("tests/snippets/test_ddp_basics/test_accumulate.py: verifies no program, so passing here writes no record of "
            "snippets/ddp_basics/accumulate.py and the build keeps saying it changed since its last passing run; "
            "add pytest.mark.verifies('ddp_basics/accumulate.py') to its pytestmark")
    assert re.search(rf"^{re.escape(line)}$", out, re.M), out
    assert "Traceback" not in out and "passed" not in out
