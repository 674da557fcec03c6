"""The layers beneath `ExternalProcess`, one job per module, each testable alone.

- `wire`: the bytes of every message (framing, the one-byte hot-path messages,
  packed resets, pickled requests and replies, errors).
- `shared_block`: where actions, observations, rewards and flags live in a
  shared-memory block.
- `channel`: length-prefixed messages over two one-way pipes.
- `launch`: starting a worker process (forkserver or spawn) and stopping it.
- `worker`: the worker process's loop, and its watchdog for a dead parent.
- `connection`: one worker's requests and replies, the parent's bookkeeping.
- `waiter`: waiting for the replies of many workers with one poll.

`agents.tools.wrappers.ExternalProcess` (the parent's side: requests,
promises, faults) is built on them.
"""
