"""A launch line continued over several lines with a trailing backslash (coursekit.runspec).

The page shows the line as a reader pastes it into bash; ``text`` keeps the
backslash-newlines, so ``bash -c text`` runs exactly that, while ``argv`` and ``env`` are
the words of the joined line.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from coursekit.runspec import RunSpecError, read_spec

CONTINUED = (
    "MODE=fast torchrun --nnodes=2 --nproc-per-node=2 \\\n"
    "    --rdzv-endpoint=${HEAD_ADDR:-127.0.0.1}:29400 \\\n"
    "    train.py"
)


def _program(tmp_path: Path, launch: str) -> Path:
    program = tmp_path / "train.py"
    program.write_text(f'"""Doc.\n\n--8<-- [start:launch]\n{launch}\n--8<-- [end:launch]\n'
                       'time-limit: 60 s\n"""\n', encoding="utf-8")
    return program


def test_continued_line_is_one_launch_line(tmp_path: Path) -> None:
    spec = read_spec(_program(tmp_path, CONTINUED + "\n"))
    assert len(spec.lines) == 1
    line = spec.lines[0]
    assert line.text == CONTINUED
    assert line.env == (("MODE", "fast"),)
    assert line.argv == ("torchrun", "--nnodes=2", "--nproc-per-node=2",
                         "--rdzv-endpoint=${HEAD_ADDR:-127.0.0.1}:29400", "train.py")
    assert line.variables == {"MODE", "HEAD_ADDR"}


def test_bash_runs_the_continued_text_as_one_command(tmp_path: Path) -> None:
    spec = read_spec(_program(tmp_path, "echo one \\\n  two \\\n  three"))
    out = subprocess.run(["bash", "-c", spec.lines[0].text], capture_output=True, text=True, check=True)
    assert out.stdout == "one two three\n"
    assert spec.lines[0].argv == ("echo", "one", "two", "three")


def test_continued_lines_next_to_plain_ones(tmp_path: Path) -> None:
    spec = read_spec(_program(tmp_path, "torchrun \\\n  --standalone a.py\n\ntorchrun b.py"))
    assert [line.argv for line in spec.lines] == [("torchrun", "--standalone", "a.py"), ("torchrun", "b.py")]


def test_nproc_override_keeps_the_continuations(tmp_path: Path) -> None:
    line = read_spec(_program(tmp_path, CONTINUED)).lines[0].with_nproc_per_node(1)
    assert line.text == CONTINUED.replace("--nproc-per-node=2", "--nproc-per-node=1")
    assert "--nproc-per-node=1" in line.argv


def test_backslash_not_at_the_end_is_an_escape_not_a_continuation(tmp_path: Path) -> None:
    spec = read_spec(_program(tmp_path, "echo a\\ b c\ntorchrun x.py"))
    assert len(spec.lines) == 2
    assert spec.lines[0].argv == ("echo", "a b", "c")


def test_backslash_then_space_at_the_end_does_not_continue(tmp_path: Path) -> None:
    # bash continues only on a backslash right before the newline
    spec = read_spec(_program(tmp_path, "echo a \\ \ntorchrun x.py"))
    assert len(spec.lines) == 2


def test_last_line_ending_in_a_backslash_is_refused(tmp_path: Path) -> None:
    program = _program(tmp_path, "torchrun --standalone \\\n  train.py \\")
    with pytest.raises(RunSpecError) as caught:
        read_spec(program)
    message = str(caught.value)
    assert "\n" not in message
    assert str(program) in message and "remove that backslash" in message
