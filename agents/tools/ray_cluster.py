"""The package's one start-up of Ray, and the placement group of a batch's actors.

    ray = ray_cluster.init(address)   # joins `address` (or RAY_ADDRESS), else starts Ray here
    group = ray_cluster.ActorGroup(ray, count=4)   # 4 one-CPU bundles spread over nodes

Evaluation shards, experiment fits and the environments of `environment.processes:
ray` all start Ray through `init`: workers get one BLAS thread each and this process's
PYTHONPATH, and a local instance runs its workers at niceness 0 (Ray's default of 15
starves them on a busy machine).

`ActorGroup` reserves one CPU per slab in a placement group with the SPREAD strategy:
Ray puts the bundles on as many nodes as it can, so the slabs of a run share out the
cluster's machines evenly instead of filling the first node. A restarted actor goes
back into its bundle (on its node, or where Ray rescheduled a bundle whose node died).
Ray is an optional extra: `pip install -e '.[ray]'`.
"""

from __future__ import annotations

import os
import socket
import time
from types import ModuleType
from typing import Any

from agents.config_fields import ConfigError

# How often a batch step checks that the head still answers (a TCP connection to its
# GCS, well under a millisecond), and how long a check waits: Ray ends a driver whose
# GCS stays away for 60 s, which leaves time to save a checkpoint first.
HEAD_CHECK_SECONDS = 5.0
HEAD_TIMEOUT_SECONDS = 2.0

INSTALL_HINT = "environment.processes = ray needs Ray: pip install -e '.[ray]'."


def import_ray() -> ModuleType:
  """The `ray` module, or a `ConfigError` saying what to install."""
  try:
    import ray
  except ImportError:
    raise ConfigError(INSTALL_HINT) from None
  return ray


# How many times this process has started or joined Ray through `init`.
sessions_started = 0


def init(address: str | None = None, num_cpus: int | None = None) -> ModuleType:
  """Connects to the cluster at `address` (or `RAY_ADDRESS`), or starts a local instance.

  Does nothing when this process is connected already.

  Args:
    address: a Ray address ('auto', 'host:6379', 'ray://host:10001'); None takes
      `RAY_ADDRESS`, and without it starts Ray here.
    num_cpus: CPUs of a local instance (None: the machine's).

  Returns:
    The `ray` module.
  """
  ray = import_ray()
  if ray.is_initialized():
    return ray
  env_vars = {'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1'}
  if os.environ.get('PYTHONPATH'):
    env_vars['PYTHONPATH'] = os.environ['PYTHONPATH']
  kwargs = dict(include_dashboard=False, log_to_driver=False,
                runtime_env={'env_vars': env_vars})
  address = address or os.environ.get('RAY_ADDRESS')
  global sessions_started  # pylint: disable=global-statement
  sessions_started += 1
  if address:
    ray.init(address=address, **kwargs)
  else:
    os.environ.setdefault('RAY_worker_niceness', '0')
    # 'local': a new instance, even where another cluster's address file is left on disk.
    ray.init(address='local', num_cpus=num_cpus, **kwargs)
  return ray


def node_names(ray: ModuleType) -> dict[str, str]:
  """{node id: 'ip' or 'ip#k'} for the cluster's nodes (k tells apart nodes that share an
  address, as the nodes of a local test cluster do)."""
  names: dict[str, str] = {}
  seen: dict[str, int] = {}
  for node in sorted(ray.nodes(), key=lambda node: node['NodeID']):
    ip = node.get('NodeManagerAddress', '?')
    seen[ip] = seen.get(ip, 0) + 1
    names[node['NodeID']] = ip if seen[ip] == 1 else f'{ip}#{seen[ip]}'
  return names


class ActorGroup:
  """One CPU for each of `count` actors, spread over the cluster's nodes.

  Attributes:
    count: the number of bundles (one per actor).
  """

  def __init__(self, ray: ModuleType, count: int, start_timeout: float = 120.0) -> None:
    """Reserves the bundles; waits up to `start_timeout` seconds for the cluster to have them.

    Raises:
      ConfigError: the cluster does not have `count` CPUs free in that time.
    """
    placement_group_lib = _placement_groups()
    self._ray = ray
    self.count = count
    self._open = 0
    self.head_address = ray.get_runtime_context().gcs_address
    self.lost = False
    self._checked = time.monotonic()
    self._group = placement_group_lib.placement_group([{'CPU': 1}] * count, strategy='SPREAD')
    if not self._group.wait(timeout_seconds=start_timeout):
      placement_group_lib.remove_placement_group(self._group)
      cpus = ray.cluster_resources().get('CPU', 0)
      free = ray.available_resources().get('CPU', 0)
      raise ConfigError(
          f'environment.processes = ray: {count} slabs need one CPU each, and the Ray '
          f'cluster has {cpus:g} CPUs ({free:g} free) after {start_timeout:g} s; use fewer '
          f'slabs (environment.envs_per_process) or add nodes.')

  def head_lost(self, force: bool = False) -> bool:
    """Whether the head's GCS no longer takes connections (checked at most every
    `HEAD_CHECK_SECONDS` unless `force`); once lost, the group makes no more Ray calls."""
    now = time.monotonic()
    if self.lost or (not force and now - self._checked < HEAD_CHECK_SECONDS):
      return self.lost
    self._checked = now
    host, _, port = self.head_address.rpartition(':')
    for attempt in range(2):
      try:
        socket.create_connection((host, int(port)), HEAD_TIMEOUT_SECONDS).close()
        return False
      except OSError:
        if attempt == 0:
          time.sleep(0.5)
    self.lost = True
    return True

  def options(self, bundle: int) -> dict[str, Any]:
    """The actor options that place an actor into bundle `bundle`."""
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
    return dict(num_cpus=1, scheduling_strategy=PlacementGroupSchedulingStrategy(
        self._group, placement_group_bundle_index=bundle))

  def join(self) -> None:
    """An actor of the group starts; `release` when it ends."""
    self._open += 1

  def release(self) -> None:
    """An actor of the group ended; the last one out frees the bundles."""
    self._open -= 1
    if self._open <= 0:
      self.close()

  def close(self) -> None:
    """Frees the bundles (their actors should be gone). Safe to call more than once."""
    if self._group is None or self.lost:
      return
    placement_group_lib = _placement_groups()
    group, self._group = self._group, None
    try:
      placement_group_lib.remove_placement_group(group)
    except Exception:  # noqa: BLE001 - the cluster is gone; so are its groups.
      pass


def _placement_groups() -> ModuleType:
  """Ray's placement-group module (`ray.util` exports a function of the same name)."""
  import importlib
  return importlib.import_module('ray.util.placement_group')
