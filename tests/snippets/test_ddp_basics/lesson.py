"""What the tests of this lesson's programs share."""
from __future__ import annotations

import re
from pathlib import Path

import torch
from torch import nn

from conftest import ROOT, SNIPPETS, run_snippet
from torchjob import JobResult

FOLDER = SNIPPETS / "ddp_basics"
PAGE = ROOT / "docs" / "ddp-basics.md"
PLUGIN = "record_ddp_basics"
TOL = dict(rtol=1e-5, atol=1e-6)

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)$', re.M)
_QUIZ = re.compile(r"^/// details \| (?P<title>[^\n]+)\n    type: quiz\n\n(?P<body>.*?)^///$", re.M | re.S)
_ITEM = re.compile(r"^- \[(?P<mark>[ x])\] (?P<text>.+?)(?=^- \[|^\s*$)", re.M | re.S)


def run(program: Path, tmp_path_factory, pytestconfig, exact_world_size: int | None = None) -> JobResult:
    """Run a program's launch line in a fresh folder, with this lesson's recorder
    (``exact_world_size``: see ``conftest.run_snippet``)."""
    return run_snippet(program, tmp_path_factory, pytestconfig, plugins=(PLUGIN,),
                       exact_world_size=exact_world_size)


def extra(job: JobResult, rank: int) -> dict:
    """What ``record_ddp_basics`` recorded on one rank."""
    return job.records[rank]["extra"]


def stack(stderr: str) -> list[tuple[str, int, str]]:
    """The frames (file, line, function) of the last Python stack that faulthandler
    wrote into a rank's stderr, innermost first; empty if it wrote none."""
    start = stderr.rfind("(most recent call first):")
    if start < 0:
        return []
    frames = []
    for line in stderr[start:].splitlines()[1:]:
        m = _FRAME.match(line)
        if m is None:
            break
        frames.append((m["file"], int(m["line"]), m["func"]))
    return frames


def program_frames(frames: list[tuple[str, int, str]], program: Path) -> list[str]:
    """The source lines of ``program`` on a stack, innermost first, stripped."""
    source = program.read_text(encoding="utf-8").splitlines()
    return [source[line - 1].strip() for file, line, _ in frames if Path(file).name == program.name]


def quiz_answer(title_start: str) -> str:
    """The text of the checked answer of the page's quiz whose title starts with
    ``title_start``, with its line breaks folded into spaces."""
    for quiz in _QUIZ.finditer(PAGE.read_text(encoding="utf-8")):
        if quiz["title"].startswith(title_start):
            checked = [m["text"] for m in _ITEM.finditer(quiz["body"] + "\n\n") if m["mark"] == "x"]
            assert len(checked) == 1, f"quiz {quiz['title']!r} must have exactly one checked answer"
            return " ".join(checked[0].split())
    raise AssertionError(f"{PAGE.name} has no quiz titled {title_start!r}…")


def load(model: nn.Module, state: dict[str, torch.Tensor]) -> nn.Module:
    """A model with a recorded state loaded (strictly)."""
    model.load_state_dict(state, strict=True)
    return model


def grads_of(model: nn.Module, loss: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradients ``loss.backward()`` gives the model's parameters, by name."""
    model.zero_grad()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def assert_same(actual: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], **tol) -> None:
    """Same names, and every tensor close (``TOL`` unless given)."""
    assert actual.keys() == expected.keys()
    for name in expected:
        torch.testing.assert_close(actual[name], expected[name], **(tol or TOL), msg=lambda m: f"{name}: {m}")
