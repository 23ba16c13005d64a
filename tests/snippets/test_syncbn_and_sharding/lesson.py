"""What the tests of this lesson's programs share."""
from __future__ import annotations

from pathlib import Path
import torch
from torch import nn
from conftest import ROOT, SNIPPETS, run_snippet
from torchjob import JobResult

FOLDER = SNIPPETS / "syncbn_and_sharding"
PAGE = ROOT / "docs" / "syncbn-and-sharding.md"
PLUGIN = "record_syncbn_and_sharding"
TOL = dict(rtol=1e-4, atol=1e-5)
BATCHNORMS = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d"}


def _run(program: Path, tmp_path_factory, pytestconfig, exact_world_size: int | None = None) -> JobResult:
    """Run a program's launch line in a fresh folder, with the recorder
    (``exact_world_size``: see ``conftest.run_snippet``)."""
    return run_snippet(program, tmp_path_factory, pytestconfig, plugins=(PLUGIN,),
                       exact_world_size=exact_world_size)


def _global_batches(job: JobResult, dataset, batch_size: int, epoch: int):
    """The global batches of one epoch: step by step, every rank's batch in rank order."""
    shares = [dict(job.records[r]["sampler_epochs"])[epoch] for r in range(job.world_size)]
    steps = -(-len(shares[0]) // batch_size)
    for step in range(steps):
        indices = [i for share in shares for i in share[step * batch_size:(step + 1) * batch_size]]
        yield dataset[indices]


def _adam_in_one_process(program, job: JobResult) -> tuple[nn.Module, torch.optim.Optimizer, dict[str, torch.Tensor]]:
    """A program's training redone in one process on the job's global batches with plain
    Adam (the program's make_model, make_dataset, LR, EPOCHS, BATCH_SIZE); returns the
    model, its optimizer and a copy of the initial state."""
    torch.manual_seed(0)
    model = program.make_model()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=program.LR)
    dataset = program.make_dataset()
    for epoch in range(program.EPOCHS):
        for x, y in _global_batches(job, dataset, program.BATCH_SIZE, epoch):
            optimizer.zero_grad()
            nn.MSELoss()(model(x), y).backward()
            optimizer.step()
    return model, optimizer, initial


def _files_saved(job: JobResult, rank: int) -> list[str]:
    """The files a rank wrote with torch.save (collectives that send Python objects, such
    as ZeroRedundancyOptimizer.consolidate_state_dict, torch.save into memory buffers)."""
    return [f for f in job.records[rank]["saves"] if not f.startswith("<")]


def _bn_buffers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v for k, v in state.items() if k.endswith(("running_mean", "running_var"))}


def _expected_rows(rows: int, world_size: int, rank: int) -> int:
    """Rows of dim 0 that rank ``rank`` holds under fully_shard: torch.chunk's split, so
    the last ranks may get fewer or none."""
    per_rank = -(-rows // world_size)
    return max(0, min(rows, (rank + 1) * per_rank) - rank * per_rank)


def _padded_numel(shape: tuple[int, ...], world_size: int) -> int:
    """Elements of one rank's padded shard of a parameter (what its all-gather sends)."""
    rest = torch.Size(shape[1:]).numel()
    return -(-shape[0] // world_size) * rest


def _passes(events: list[dict]) -> list[dict]:
    """The recorder's ``events`` cut into forward/backward passes.

    Returns:
        One dict per pass, in order: ``forward`` and ``backward`` (the events of each
        phase, markers included except the ``backward`` marker) and ``params`` (the
        parameter classes per unit that the ``backward`` marker saw). A pass starts at
        the first unit ``forward`` after a backward, a step, or the start.
    """
    out, phase = [], None
    for event in events:
        if event["op"] == "forward" and phase != "forward":
            out.append({"forward": [], "backward": [], "params": None})
            phase = "forward"
        if event["op"] == "backward":
            if out:
                out[-1]["params"] = event["params"]
            phase = "backward"
            continue
        if event["op"] == "step":
            phase = "step"
            continue
        if out and phase in ("forward", "backward"):
            out[-1][phase].append(event)
    return out


def _ops(events: list[dict], op: str) -> list[dict]:
    return [e for e in events if e["op"] == op]


def _traceback(job: JobResult, local_rank: int) -> str:
    """One worker's stderr from its first traceback on ('' if it printed none)."""
    err = next(r.stderr for r in job.ranks if r.local_rank == local_rank)
    start = err.find("Traceback (most recent call last)")
    return "" if start < 0 else err[start:]
