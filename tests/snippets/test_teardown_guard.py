"""Lesson 4's teardown recipe in another torch version (docs/torchrun-launching.md, "End
every worker cleanly"): the page says the programs skip a private cache call that is
missing instead of failing at exit, and that a test checks that they do. This is that
test, for every program that carries ``release_dtensor_caches()``: with each of its
private torch 2.13 calls taken away in turn, the function still returns.

In-process: the program is imported (its ``main()`` does not run) and only the function
is called; ``monkeypatch`` puts the call back afterwards.
"""
from __future__ import annotations

import importlib

import pytest

from conftest import SNIPPETS, import_program

# the private calls the recipe makes, as (module of torch.distributed.tensor, attribute)
PRIVATE_CALLS = [
    ("debug", "_clear_sharding_prop_cache"),
    ("_redistribute", "_gen_transform_infos"),
    ("_redistribute", "clear_redistribute_planner_cache"),
    ("_collective_utils", "MeshTopoInfo"),
]


def _programs() -> list[str]:
    """Every snippet program that defines the recipe (9 in torch 2.13's course)."""
    return [f"{p.parent.name}/{p.name}" for p in sorted(SNIPPETS.glob("*/*.py"))
            if "\ndef release_dtensor_caches(" in p.read_text(encoding="utf-8")]


def test_the_programs_that_carry_the_recipe_are_found():
    assert len(_programs()) == 9, _programs()


@pytest.mark.parametrize("module, name", PRIVATE_CALLS)
@pytest.mark.parametrize("program", _programs())
def test_the_teardown_skips_a_private_cache_call_that_another_torch_version_lacks(program, module, name, monkeypatch):
    # the page calls release_dtensor_caches() a torch 2.13 workaround whose private calls
    # are guarded: in a torch without one of them, the program must still end cleanly
    release = import_program(SNIPPETS / program).release_dtensor_caches
    monkeypatch.delattr(importlib.import_module(f"torch.distributed.tensor.{module}"), name)
    release()
