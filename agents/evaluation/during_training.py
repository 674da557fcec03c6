"""`loop.eval_suite`, `loop.select_suite`: the current deterministic policy flown on suites
during training.

After each evaluation phase (every `loop.eval_every` training steps), training flies the
policy it would export (`algorithm.export_policy`) on the suite's seeds, in this process,
and logs a row `phase: eval_suite` to metrics.jsonl and TensorBoard (`eval_suite/`): the
environment's headline metric (the balloon: `twr50`; any other: `cumulative_reward`, the
mean return) with its 95 % bootstrap interval (`<metric>_ci95_low`, `<metric>_ci95_high`)
and IQM (`<metric>_iqm`), `mean_score` (the mean return), and what the environment's
plug-in adds (the balloon: BLE's TWR50 `ble_twr50` and the failure count `failures`).
Each phase also keeps its per-seed results where `evaluate` would write them,
`RUN_DIR/eval_suite/step-<STEP>/` (`results.json`, `summary.json`), so a phase pairs with
any evaluation on the same suite: `evaluate compare RUN_DIR/eval_suite/step-<STEP> eval/ss`.

`loop.select_suite` is flown the same way after the same phases, beside it: its rows are
`phase: select_suite`, its results `RUN_DIR/select_suite/step-<STEP>/`, and training
exports the weights that score best on it as `best_policy/` (`agents.training.trainer`). Keep
its seeds apart from the suite you report on, or the selection is measured on the seeds
that chose it.

Training finds `SuiteEvaluator` as `agents.plugins.TRAINING_EVALUATORS['suite']`
(registered by `agents.evaluation.plugin`), so the core imports nothing of evaluation:

    SuiteEvaluator.check(config, 'select_suite')   # the Suite, or ValueError naming the key
    evaluator = SuiteEvaluator(config, algorithm, observation_space, run_dir, metrics,
                               key='select_suite')  # default key: 'eval_suite'
    row = evaluator(step)             # row[evaluator.metric] is the headline value
"""

import os

from agents import configs
from agents.evaluation import environments, policies, runner, suite_runs, suites
from agents.evaluation import results as results_lib
from agents.evaluation.errors import EvaluationError
from agents.training.trainer import (
  SUITE_KEYS,  # the `loop` keys that name a suite flown in training
)


def check(config, key='eval_suite'):
  """The Suite that `loop.<key>` names in a config (None when unset), for its environment.

  Args:
    config: the run's config.
    key: 'eval_suite' or 'select_suite'.

  Raises:
    ValueError: the suite cannot be flown for this config (naming `loop.<key>`).
  """
  if key not in SUITE_KEYS:
    raise ValueError(f'Unknown suite key {key!r}; known: {", ".join(SUITE_KEYS)}.')
  config = configs.as_run_config(config)
  name = getattr(config.loop, key)
  if not name:
    return None
  env_id = config.environment.id
  # The suite flies in the run's own wind unless it names another.
  defaults = environments.get(env_id).suite_defaults(config.environment.kwargs)
  try:
    return suites.get_suite(name, env_id, defaults)
  except EvaluationError as error:
    raise ValueError(f"Config key 'loop.{key}': {error}") from None


def phase_results(run_dir, checkpoint, suite):
  """The per-seed results a training phase kept for one checkpoint on one suite, or None.

  A run's evaluation phase at step N flies the weights its checkpoint `ckpt-N` saves, so
  `ExperimentManager.eval_agents` takes these results instead of flying that checkpoint
  again.

  Args:
    run_dir: the run directory.
    checkpoint: a checkpoint name of the run, `ckpt-<STEP>`.
    suite: a suite name or `Suite`.

  Returns:
    The phase's results in suite order, or None when no phase flew that step, or it flew
    another suite (its name, seeds, episode length or wind differ).
  """
  step = checkpoint.rsplit('-', 1)[-1]
  path = os.path.join(run_dir, 'eval_suite', f'step-{step}', 'results.json')
  if not step.isdigit() or not os.path.exists(path):
    return None
  header, results = results_lib.load_combined(path)
  environment = environments.get(header['env_id'])
  if isinstance(suite, str):
    suite = suites.get_suite(suite, header['env_id'])
  if header['suite'] != suites.complete(suite, environment).to_dict():
    return None
  return results


class SuiteEvaluator:
  """Flies the algorithm's deterministic policy on a suite; logs the headline metric's CI.

  Registered as `agents.plugins.TRAINING_EVALUATORS['suite']`, which training builds for
  `loop.eval_suite` and `loop.select_suite` when they and `loop.eval_every` are set.

  Attributes:
    metric: the row's headline key (the environment's metric: `twr50`, `cumulative_reward`).
    suite: the `Suite` flown.
    key: the `loop` key that names it, also the row's phase and the results' folder.
  """

  check = staticmethod(check)

  def __init__(self, config, algorithm, observation_space, run_dir, metrics,
               key='eval_suite'):
    """Builds the policy (it reads the algorithm's current weights at every call).

    Args:
      config: the run's config (`loop.<key>`, `environment.id`;
        `environment.num_agents` bounds the environments flown at once, the batch an
        exported `perform` may take).
      algorithm: the training algorithm (`export_policy`).
      observation_space: the environment's observation space.
      run_dir: the run directory (TensorBoard events go to `eval/`, per-seed results
        to `<key>/step-<STEP>/`).
      metrics: the loop's `MetricsWriter`.
      key: 'eval_suite' or 'select_suite'.
    """
    import tensorflow as tf
    self.key = key
    self.suite = check(config, key)
    environment = configs.as_run_config(config).environment
    self._environment = environments.get(environment.id)
    self.metric = self._environment.metric
    self._slab_size = max(1, min(runner.DEFAULT_SLAB_SIZE, environment.num_agents))
    batch = sum(runner.slab_sizes(len(self.suite.seeds), 0, self._slab_size))
    model = algorithm.export_policy(observation_space)
    self._policy = policies.TensorFlowPolicy(model, batch, hasattr(model, 'initial_state'))
    self._observation_kwargs = self._environment.observation_kwargs(environment.kwargs)
    self._metrics = metrics
    self._run_dir = os.path.abspath(run_dir)
    self._writer = tf.summary.create_file_writer(os.path.join(run_dir, 'eval'))

  def __call__(self, step):
    """Flies the suite; writes and returns the row."""
    import tensorflow as tf
    results = runner.fly(f'the training policy on {self.suite.name}', self.suite,
                         self.suite.seeds, workers=0, slab_size=self._slab_size,
                         policy=self._policy, env_id=self._environment.env_id,
                         observation_kwargs=self._observation_kwargs)
    summary = self._save(step, results)
    headline = summary[self.metric]
    scalars = {self.metric: headline['mean'],
               f'{self.metric}_ci95_low': headline['mean_ci95'][0],
               f'{self.metric}_ci95_high': headline['mean_ci95'][1],
               f'{self.metric}_iqm': headline['iqm']}
    for key, (name, statistic) in self._environment.training_row.items():
      scalars[key] = summary[name][statistic]
    row = dict(step=step, phase=self.key, suite=self.suite.name, episodes=len(results),
               **scalars, mean_score=summary['cumulative_reward']['mean'])
    self._metrics.write(row)
    with self._writer.as_default(step=step):
      for key, value in scalars.items():
        tf.summary.scalar(f'{self.key}/{key}', value)
    self._writer.flush()
    return row

  def _save(self, step, results):
    """Writes the phase's results.json and summary.json; returns the summary."""
    output_dir = os.path.join(self._run_dir, self.key, f'step-{step}')
    os.makedirs(output_dir, exist_ok=True)
    header = results_lib.run_header(results_lib.header(
        f'run:{self._run_dir} at step {step}', self.suite, 1, 0,
        env_id=self._environment.env_id,
        agent_info={'kind': 'training', 'run_dir': self._run_dir, 'step': int(step)}))
    # In suite order, as `evaluate` combines them: the bootstrap intervals depend on it.
    by_seed = {result.seed: result for result in results}
    ordered = [by_seed[seed] for seed in self.suite.seeds]
    results_lib.write_combined(output_dir, header, ordered)
    summary = suite_runs.summary_of(header, ordered)
    results_lib.write_json(os.path.join(output_dir, 'summary.json'), summary)
    return summary
