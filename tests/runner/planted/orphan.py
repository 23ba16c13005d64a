"""Planted leftover: rank 0 starts a child in its own session that outlives the job."""
import subprocess
import sys

import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 0:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
dist.barrier()
dist.destroy_process_group()
