"""Planted probe: every rank prints the names of its environment variables, one per line.

The block goes out in one write: torchrun runs workers with ``python -u``, where ``print``
writes the text and its newline separately, so two ranks printing at once could share a line.
"""
import os
import sys

import torch.distributed as dist

dist.init_process_group("gloo")
sys.stdout.write("".join(f"env {name}\n" for name in sorted(os.environ)))  # one write, under PIPE_BUF
# a group destroyed with no collective since init can close its connections while the
# other rank still makes them (gloo: "connectFullMesh failed ... Connection closed by peer",
# 4 runs in 48 on a busy machine, none in 48 with this barrier)
dist.barrier()
dist.destroy_process_group()
