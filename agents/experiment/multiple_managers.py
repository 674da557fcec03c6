"""rlberry's `MultipleManagers`: several managers fitted at once.

    from agents.experiment import MultipleManagers

    multiple = MultipleManagers(parallelization='thread')
    multiple.append(manager_a)
    multiple.append(manager_b)
    multiple.run()              # fits (and saves) both
    manager_a, manager_b = multiple.managers

Each manager already fits its agents in parallel, so the managers run in threads of
this process: a manager's fits in processes (`parallelization='process'` of the manager)
leave the threads waiting. 'process' here means the same (a manager holding agents of
a class defined in a notebook would not reach a worker process); `mp_context='fork'` is
refused, as by the manager, because forking a process that may run TensorFlow can deadlock.
"""

import concurrent.futures

from agents.experiment.errors import ExperimentError

PARALLELIZATIONS = ('thread', 'process')
START_METHODS = ('spawn', 'forkserver')


class MultipleManagers:
  """Fits several `ExperimentManager`s at once (rlberry's)."""

  def __init__(self, max_workers=None, parallelization='process', mp_context='spawn'):
    """Args:
      max_workers: managers fitted at once (None: all).
      parallelization: 'thread' or 'process' (both run the managers in threads here; see
        the module).
      mp_context: 'spawn' or 'forkserver'.

    Raises:
      ExperimentError: another parallelization or start method.
    """
    if parallelization not in PARALLELIZATIONS:
      raise ExperimentError(f'parallelization must be one of {PARALLELIZATIONS}, got '
                            f'{parallelization!r}.')
    if mp_context not in START_METHODS:
      raise ExperimentError(f'mp_context must be one of {START_METHODS}, got {mp_context!r} '
                            '(forking a process that may run TensorFlow can deadlock).')
    self.instances = []
    self.max_workers = max_workers
    self.parallelization = parallelization
    self.mp_context = mp_context

  def append(self, experiment_manager):
    """Adds a manager."""
    self.instances.append(experiment_manager)

  def run(self, save=True):
    """Fits every manager (and saves it when `save`); they stay in the order appended."""

    def fit(manager):
      manager.fit()
      if save:
        manager.save()
      return manager

    with concurrent.futures.ThreadPoolExecutor(self.max_workers or None) as pool:
      self.instances = list(pool.map(fit, self.instances))

  def save(self):
    """Saves every manager; returns their paths."""
    return [manager.save() for manager in self.instances]

  @property
  def managers(self):
    """The managers, in the order appended."""
    return self.instances
