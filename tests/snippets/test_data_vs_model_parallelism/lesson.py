"""What the tests of this lesson's programs share."""
from __future__ import annotations

from pathlib import Path
import torch
from torch import nn
from conftest import SNIPPETS, run_snippet
from torchjob import JobResult

FOLDER = SNIPPETS / "data_vs_model_parallelism"
PLUGIN = "record_data_vs_model_parallelism"
TOL = dict(rtol=1e-5, atol=1e-6)


def _run(program: Path, tmp_path_factory, pytestconfig, *, exact_world_size: int | None = None) -> JobResult:
    """Run a program's launch command on a scratch copy of its folder, with the recorder."""
    return run_snippet(program, tmp_path_factory, pytestconfig, plugins=(PLUGIN,), exact_world_size=exact_world_size)


def _load(model: nn.Module, values: list[torch.Tensor]) -> nn.Module:
    """Set a model's parameters, in ``model.parameters()`` order, to recorded values."""
    params = list(model.parameters())
    assert [tuple(p.shape) for p in params] == [tuple(v.shape) for v in values]
    with torch.no_grad():
        for p, v in zip(params, values):
            p.copy_(v)
    return model


def _grads(model: nn.Module, loss: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def _assert_all_close(actual: list[torch.Tensor], expected: list[torch.Tensor]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **TOL)
