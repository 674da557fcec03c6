"""Where a batch's environments step: in this process or in worker processes.

`environment.processes: auto` (the default) decides per environment by measuring it:

    placement = placement_lib.decide('auto', make_env, num_envs=8, workers=2)
    placement.processes     # False for CartPole: one step costs microseconds
    placement.describe()    # 'in this process (auto: one step takes 9 µs; ...)'

The rule. A worker process hop costs about `HOP_SECONDS` per batch step (a message to
and from every worker, the wake-ups, the copies). Workers save the difference between
stepping all `num_envs` environments here and the share of each of the `W` workers
that step at once (at most the cores), so with a mean step time `t`:

    processes  if  t * (num_envs - ceil(num_envs / W)) > HOP_SECONDS

One core, or one environment, never pays for a hop. `HOP_SECONDS` is measured
(docs/parallel.md, "Where environments step"): with 8 environments in 2 workers on 2
free cores, a batch step through processes costs about 200 µs more than the
environments' own work (CartPole: 220 µs a batch step against 4 × 8 µs of stepping);
processes then pay from about 50 µs a step. The probe builds one environment in this process,
steps it a few hundred times after a warm-up (at most about `PROBE_SECONDS`), and
takes the median of the means of short chunks, so a pause of the process (another
job on the machine) does not count as the environment's cost.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

# What crossing to worker processes adds to a batch step (docs/parallel.md, "Where
# environments step"): the crossover t* = HOP_SECONDS / (N - N/W), 50 µs at N = 8, W = 2.
HOP_SECONDS = 200e-6
PROBE_STEPS = 300
PROBE_SECONDS = 0.3
_WARMUP_STEPS = 20
_CHUNK_STEPS = 10

AUTO = 'auto'
RAY = 'ray'  # One Ray actor per slab, over the nodes of a cluster; `auto` never picks it.


@dataclasses.dataclass(frozen=True)
class Placement:
  """Where a batch steps and why.

  Attributes:
    processes: step in worker processes (True), here (False), or in Ray actors ('ray').
    rule: 'config' (`environment.processes` said true, false or ray) or 'auto'.
    step_seconds: the probe's mean step time (auto only), else None.
    workers: worker processes the batch would use (one per core, at most one per
      environment, or as `envs_per_process` implies).
    num_envs: environments of the batch.
    parallel: workers that can step at once (at most the cores).
    nodes: with Ray, the node of each slab's actor, in batch order (once started).
  """
  processes: bool | str
  rule: str
  step_seconds: float | None = None
  workers: int = 1
  num_envs: int = 1
  parallel: int = 1
  nodes: tuple[str, ...] = ()

  def describe(self) -> str:
    """One line: the choice and, for auto, the numbers behind it."""
    if self.processes == RAY:
      where = f'in {self.workers} Ray actors'
      if self.nodes:
        counts = {node: self.nodes.count(node) for node in self.nodes}
        where += ' (' + ', '.join(f'{count} on {node}' for node, count in counts.items()) + ')'
      return f'{where} (environment.processes = ray)'
    where = f'in {self.workers} worker processes' if self.processes else 'in this process'
    if self.rule != AUTO:
      return f'{where} (environment.processes = {str(self.processes).lower()})'
    if self.step_seconds is None:
      return (f'{where} (environment.processes = auto: {self.num_envs} environments, '
              f'{self.parallel} at once, nothing to step in parallel)')
    saved = self.step_seconds * (self.num_envs - math.ceil(self.num_envs / self.parallel))
    return (f'{where} (environment.processes = auto: one step takes '
            f'{self.step_seconds * 1e6:.0f} µs; {self.workers} workers would save '
            f'{saved * 1e6:.0f} µs per batch step against a hop of '
            f'{HOP_SECONDS * 1e6:.0f} µs)')

  def as_record(self) -> dict[str, Any]:
    """Plain values for the run's manifest."""
    record: dict[str, Any] = dict(processes=self.processes, rule=self.rule, workers=self.workers)
    if self.nodes:
      record['nodes'] = list(self.nodes)
    if self.step_seconds is not None:
      record['step_us'] = round(self.step_seconds * 1e6, 1)
      record['hop_us'] = round(HOP_SECONDS * 1e6, 1)
    return record


def pays_off(step_seconds: float, num_envs: int, workers: int,
             hop_seconds: float = HOP_SECONDS) -> bool:
  """Whether `workers` processes step `num_envs` environments of `step_seconds` faster."""
  if workers < 2 or num_envs < 2:
    return False
  return step_seconds * (num_envs - math.ceil(num_envs / workers)) > hop_seconds


def probe_step_seconds(make_env: Callable[[], Any], steps: int = PROBE_STEPS,
                       budget_seconds: float = PROBE_SECONDS) -> float:
  """The mean wall time of one step of an environment built by `make_env`, in seconds.

  Args:
    make_env: callable returning a `gymnasium.Env`.
    steps: most steps timed (after a warm-up), in chunks of ten.
    budget_seconds: stop timing after this long (a slow environment needs few steps).

  Returns:
    The median over chunks of each chunk's mean step time (resets included).
  """
  env = make_env()
  try:
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(_WARMUP_STEPS + steps)]
    env.reset(seed=0)
    means: list[float] = []
    deadline, index = math.inf, 0
    while index < len(actions):
      chunk = actions[index:index + (_WARMUP_STEPS if index == 0 else _CHUNK_STEPS)]
      start = time.perf_counter()
      for action in chunk:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
          env.reset()
      elapsed = time.perf_counter() - start
      if index:  # The first chunk warms up caches and lazy initialisation.
        means.append(elapsed / len(chunk))
      else:
        deadline = time.perf_counter() + budget_seconds
      index += len(chunk)
      if time.perf_counter() > deadline and len(means) >= 3:
        break
    return statistics.median(means)
  finally:
    env.close()


def decide(processes: bool | str, make_env: Callable[[], Any], num_envs: int,
           workers: int, cores: int | None = None) -> Placement:
  """Resolves `environment.processes` (True, False or 'auto') into a `Placement`.

  Args:
    processes: True, False, 'ray' (Ray actors), or 'auto' to probe the environment
      (which decides between True and False only).
    make_env: callable returning one `gymnasium.Env` of the batch (used by 'auto' only).
    num_envs: environments of the batch.
    workers: worker processes the batch would use.
    cores: cores of the machine (None: as many as workers); workers beyond them do not
      step at once.

  Returns:
    A `Placement`.

  Raises:
    ValueError: `processes` is none of True, False, 'auto', 'ray'.
  """
  parallel = min(workers, cores or workers)
  if processes == AUTO:
    if parallel < 2 or num_envs < 2:  # Nothing to parallelise: no need to probe.
      return Placement(False, AUTO, None, workers, num_envs, parallel)
    step_seconds = probe_step_seconds(make_env)
    return Placement(pays_off(step_seconds, num_envs, parallel), AUTO, step_seconds, workers,
                     num_envs, parallel)
  if processes == RAY:
    return Placement(RAY, 'config', None, workers, num_envs, workers)
  if not isinstance(processes, bool):
    raise ValueError(f"environment.processes must be true, false, 'auto' or 'ray', got "
                     f'{processes!r}.')
  return Placement(processes, 'config', None, workers, num_envs, parallel)
