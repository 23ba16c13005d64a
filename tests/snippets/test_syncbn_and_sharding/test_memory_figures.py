"""The memory figures of docs/syncbn-and-sharding.md ("The memory wall", "Shard the state")
recomputed from their accounting, and the one PyTorch fact behind "with the buckets".

The page's tables are read with Python-Markdown's ``tables`` extension (the extension the
site uses) and xml.etree; each row's formula is evaluated with Ψ = 7e9 and N = 8 and must
give the row's GB figure, and the figure must also follow from the bytes per parameter
the row's accounting stands for (ZeRO paper, Rajbhandari et al. 2020, section 5; PyTorch:
fp32 parameters, gradients and two Adam moments, DDP's buckets in the parameters' dtype).
"""
from __future__ import annotations

import ast
import operator
import re
import xml.etree.ElementTree as ET

import markdown
import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from conftest import ROOT

PAGE = ROOT / "docs" / "syncbn-and-sharding.md"
PSI, N, GB = 7e9, 8, 1e9

# bytes per parameter: (kept whole on every device, sharded over the N devices)
ZERO_PAPER = {  # bf16/fp16 parameters 2 + gradients 2; fp32 master copy, momentum, variance 12
    "DDP": (2 + 2 + 12, 0),
    "ZeRO-1": (2 + 2, 12),
    "ZeRO-2": (2, 2 + 12),
    "ZeRO-3": (0, 2 + 2 + 12),
}
PYTORCH = {  # fp32 parameters 4 + gradients 4 + Adam 8; bf16 gathered copies 2
    "DistributedDataParallel": (4 + 4 + 8, 0),
    "ZeroRedundancyOptimizer": (4 + 4, 8),
    "reshard_after_forward=False": (2, 4 + 4 + 8),
    "fully_shard": (0, 4 + 4 + 8),
}
DDP_BUCKETS = 4  # an fp32 copy of every gradient unless gradient_as_bucket_view=True
WITH_BUCKETS = {"DistributedDataParallel", "ZeroRedundancyOptimizer"}


def _tables() -> list[list[list[str]]]:
    """The page's Markdown tables, each a list of rows of cell texts (header row first)."""
    html = markdown.markdown(PAGE.read_text(encoding="utf-8"), extensions=["tables"])
    return [[["".join(cell.itertext()).strip() for cell in row] for row in ET.fromstring(table).iter("tr")]
            for table in re.findall(r"<table>.*?</table>", html, flags=re.S)]


def _table(first_header: str) -> dict[str, list[str]]:
    found = [t for t in _tables() if t[0][0] == first_header]
    assert len(found) == 1, f"{PAGE.name}: expected one table headed {first_header!r}"
    return {row[0]: row for row in found[0][1:]}


_OPS = {ast.Add: operator.add, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _value(formula: str) -> float:
    """A cell's formula such as ``(4 + 4) Ψ + 8 Ψ / N`` (words after it ignored) with
    Ψ and N substituted; only numbers, + * / and parentheses are accepted."""
    expr = re.sub(r"\s*Ψ", " * P", re.match(r"[\d\s()+*/ΨN]+", formula)[0]).replace("N", "Nd")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id in ("P", "Nd"):
            return {"P": PSI, "Nd": N}[node.id]
        raise AssertionError(f"{PAGE.name}: unexpected formula {formula!r}")
    return ev(ast.parse(expr, mode="eval"))


def _gb(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"([\d.]+) GB", cell)]


def _row(table: dict[str, list[str]], key: str) -> list[str]:
    rows = [row for name, row in table.items() if key in name]
    assert rows, f"{PAGE.name}: no row for {key!r}"
    return rows[-1]  # "fully_shard" also names the reshard_after_forward=False row: the last is stage 3


def test_the_mixed_precision_adam_table_adds_up_to_16_bytes():
    rows = _table("What is stored")
    assert [int(r[2]) for name, r in rows.items() if name != "total"] == [2, 2, 4, 4, 4]
    assert int(rows["total"][2]) == 16


@pytest.mark.parametrize("stage", list(ZERO_PAPER))
def test_zero_paper_figures(stage):
    row = _table("Stage")[stage]
    whole, sharded = ZERO_PAPER[stage]
    expected = (whole * PSI + sharded * PSI / N) / GB
    assert _value(row[2]) / GB == pytest.approx(expected)
    assert _gb(row[3]) == pytest.approx([expected])


@pytest.mark.parametrize("tool", list(PYTORCH))
def test_pytorch_native_figures(tool):
    row = _row(_table("PyTorch"), tool)
    whole, sharded = PYTORCH[tool]
    expected = (whole * PSI + sharded * PSI / N) / GB
    assert _value(row[2]) / GB == pytest.approx(expected)
    figures = [expected, expected + DDP_BUCKETS * PSI / GB] if tool in WITH_BUCKETS else [expected]
    assert _gb(row[3]) == pytest.approx(figures)


@pytest.mark.parametrize("gradient_as_bucket_view", [False, True])
def test_ddp_buckets_are_a_second_copy_of_the_gradients_unless_they_are_views(gradient_as_bucket_view):
    # one process, one bucket: the comm hook sees the bucket DDP all-reduces
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    ddp = None
    try:
        model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 1))
        ddp = DDP(model, gradient_as_bucket_view=gradient_as_bucket_view)
        buckets = []

        def hook(state, bucket):
            buckets.append(bucket.buffer())
            fut = torch.futures.Future()
            fut.set_result(bucket.buffer())
            return fut
        ddp.register_comm_hook(None, hook)
        for _ in range(2):  # the second backward runs on the buckets DDP rebuilt after the first
            buckets.clear()
            ddp(torch.randn(4, 8)).sum().backward()
        grads = [p.grad for p in model.parameters()]
        assert sum(b.numel() for b in buckets) == sum(g.numel() for g in grads)
        assert all(b.dtype == torch.float32 for b in buckets)
        bucket_storages = {b.untyped_storage().data_ptr() for b in buckets}
        grad_storages = {g.untyped_storage().data_ptr() for g in grads}
        if gradient_as_bucket_view:
            assert grad_storages <= bucket_storages  # the gradients live in the buckets
        else:
            assert not grad_storages & bucket_storages  # the buckets are extra memory
    finally:
        ddp = None  # DDP's reducer holds the group: free it before destroying it (test_bucket_defaults.py)
        dist.destroy_process_group()
