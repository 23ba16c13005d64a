"""Break it: multinode_train.py launched with --standalone added to its multi-node line.

--standalone makes each agent start its own rendezvous on a free port of its own machine,
whatever --rdzv-endpoint says, so the two agents never meet: each waits for a second node
that never joins, and no worker starts. The lesson docs/torchrun-launching.md asks the
reader to predict this; the test in
tests/snippets/test_torchrun_launching/test_multinode_standalone.py runs the line in two
"terminals" and checks that both agents are still waiting at the time limit, each on a
port of its own and neither on the endpoint's, and that no worker was started.

--8<-- [start:launch]
torchrun --standalone --nnodes=2 --nproc-per-node=2 \
    --rdzv-backend=c10d --rdzv-endpoint=${HEAD_ADDR:-127.0.0.1}:${HEAD_PORT:-29400} \
    --rdzv-id=${JOB_ID:-lesson4} multinode_standalone.py
--8<-- [end:launch]
time-limit: 40 s
outcome: hangs
blocked-in: every agent: DynamicRendezvousHandler.next_rendezvous
"""
from multinode_train import main  # the same program; only the launch line changed

if __name__ == "__main__":
    main()
