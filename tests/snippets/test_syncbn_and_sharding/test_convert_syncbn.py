"""snippets/syncbn_and_sharding/convert_syncbn.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import pytest
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import BATCHNORMS, FOLDER, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/convert_syncbn.py")]


CONVERT = FOLDER / "convert_syncbn.py"
convert = import_program(CONVERT)


@pytest.fixture(scope="module")
def convert_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(CONVERT, tmp_path_factory, pytestconfig)


class TestConvertSyncBatchNorm:
    def test_every_batchnorm_layer_is_replaced_on_every_rank(self, convert_job):
        for rank in range(convert_job.world_size):
            calls = convert_job.records[rank]["extra"]["convert"]
            assert len(calls) == 1
            before, after = calls[0]["before"], calls[0]["after"]
            swapped = [name for name, m in before.items() if m["type"] in BATCHNORMS]
            assert {before[n]["type"] for n in swapped} == {"BatchNorm1d", "BatchNorm2d"}  # nested, 1d and 2d
            assert len(swapped) == sum(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in convert.Net().modules())
            assert after.keys() == before.keys()
            for name in swapped:
                assert after[name]["type"] == "SyncBatchNorm", name
            assert not [n for n, m in after.items() if m["type"] in BATCHNORMS]

    def test_the_swapped_layers_keep_their_parameters_and_statistics(self, convert_job):
        for rank in range(convert_job.world_size):
            call = convert_job.records[rank]["extra"]["convert"][0]
            for name, module in call["before"].items():
                if module["type"] in BATCHNORMS:
                    # the same tensor objects: weight, bias, running_mean, running_var, num_batches_tracked
                    assert set(module["tensors"]) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
                    assert call["after"][name]["tensors"] == module["tensors"], name
                else:
                    assert call["after"][name] == module, f"{name} changed although it is no BatchNorm"

    def test_the_printed_model_shows_syncbatchnorm_only(self, convert_job):
        out = convert_job.stdout(0)
        n_bn = sum(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in convert.Net().modules())
        assert out.count("SyncBatchNorm(") == n_bn
        assert not re.search(r"\bBatchNorm[123]d\(", out)


test_bare_run = bare_run_test(CONVERT, reference="convert_job")
