"""`loop.eval_suite`: the current deterministic policy flown on a suite during training.

After each evaluation phase (every `loop.eval_every` training steps), training flies the
policy it would export (`algorithm.export_policy`) on the suite's seeds, in this process,
and logs a row `phase: eval_suite` to metrics.jsonl and TensorBoard (`eval/`): `twr50`
with its 95 % bootstrap interval (`twr50_ci95_low`, `twr50_ci95_high`), the IQM, BLE's
TWR50 and the failure count. Suite seeds are never flown by training itself.
"""

import os

from agents.env.balloon import constants
from agents.evaluation import policies, runner, statistics, suites
from agents.evaluation.errors import EvaluationError


def check(config):
  """Raises ValueError naming `loop.eval_suite` when it cannot be flown for this config."""
  name = config['loop'].get('eval_suite')
  if not name:
    return None
  if config['environment']['id'] != constants.BALLOON_ENV_ID:
    raise ValueError(f"Config key 'loop.eval_suite' = {name!r} needs the balloon "
                     f"({constants.BALLOON_ENV_ID}), not {config['environment']['id']}; set "
                     'it to null.')
  try:
    return suites.get_suite(name)
  except EvaluationError as error:
    raise ValueError(f"Config key 'loop.eval_suite': {error}") from None


class SuiteEvaluator:
  """Flies the algorithm's deterministic policy on a suite and logs TWR50 with its interval.

  Registered as `agents.plugins.TRAINING_EVALUATORS['suite']`, which training builds when
  `loop.eval_suite` and `loop.eval_every` are set.
  """

  metric = 'twr50'  # the headline value of the row (training's progress bar shows it)
  check = staticmethod(check)

  def __init__(self, config, algorithm, observation_space, run_dir, metrics):
    """Builds the policy (it reads the algorithm's current weights at every call).

    Args:
      config: the run's config (`loop.eval_suite`; `environment.num_agents` bounds the
        balloons flown at once, the batch an exported `perform` may take).
      algorithm: the training algorithm (`export_policy`).
      observation_space: the environment's observation space.
      run_dir: the run directory (TensorBoard events go to `eval/`).
      metrics: the loop's `MetricsWriter`.
    """
    import tensorflow as tf
    suite = check(config)
    max_batch = config['environment']['num_agents']
    self.suite = suite
    self._slab_size = max(1, min(runner.DEFAULT_SLAB_SIZE, max_batch))
    batch = sum(runner.slab_sizes(len(suite.seeds), 0, self._slab_size))
    model = algorithm.export_policy(observation_space)
    self._policy = policies.TensorFlowPolicy(model, batch, hasattr(model, 'initial_state'))
    self._metrics = metrics
    self._writer = tf.summary.create_file_writer(os.path.join(run_dir, 'eval'))

  def __call__(self, step):
    """Flies the suite; writes and returns the row."""
    import tensorflow as tf
    results = runner.fly(f'the training policy on {self.suite.name}', self.suite,
                         self.suite.seeds, workers=0, slab_size=self._slab_size,
                         policy=self._policy)
    summary = statistics.summarize(results)
    twr = summary['twr50']
    row = dict(step=step, phase='eval_suite', suite=self.suite.name, episodes=len(results),
               twr50=twr['mean'], twr50_ci95_low=twr['mean_ci95'][0],
               twr50_ci95_high=twr['mean_ci95'][1], twr50_iqm=twr['iqm'],
               ble_twr50=summary['time_within_radius']['mean'],
               failures=summary['failures']['any'],
               mean_score=summary['cumulative_reward']['mean'])
    self._metrics.write(row)
    with self._writer.as_default(step=step):
      for key in ('twr50', 'twr50_ci95_low', 'twr50_ci95_high', 'twr50_iqm', 'ble_twr50'):
        tf.summary.scalar(f'eval_suite/{key}', row[key])
    self._writer.flush()
    return row
