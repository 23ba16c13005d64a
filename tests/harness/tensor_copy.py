"""What the recorder plugins keep of a tensor (imported by ``record_<slug>.py``)."""
import torch
from torch.distributed.tensor import DTensor


def plain(t: torch.Tensor) -> torch.Tensor:
    """A detached CPU copy; for a DTensor, of this rank's local shard."""
    t = t.detach()
    if isinstance(t, DTensor):
        t = t.to_local()
    return t.cpu().clone()
