"""This project's in-graph PPO and QR-DQN as rlberry agents: `PPOAgent` and `QRDQNAgent`.

    from agents.experiment import ExperimentManager, PPOAgent, gym_make

    manager = ExperimentManager(PPOAgent, (gym_make, dict(id='CartPole-v1')),
                                fit_budget=20_000, n_fit=4, seed=0)
    manager.fit()
    manager.eval_agents(4)

Each agent trains with `agents.training.trainer.train` in a run directory of its own
(`<output_dir>/run`): a batch of `num_envs` copies of its environment stepped in this
process, the algorithm and the environments fused in TensorFlow. `fit(budget)` trains
`budget` more environment steps (rounded up to whole steps of the batch), resuming
from the run's checkpoint; each logged row
goes to `self.writer` (`episode_rewards` is the mean training score, then every other
value of the row under its own tag), `global_step` the step. `policy(observation)` is
the exported policy's action (the mean or the most likely action).

The environment is the one the agent is given: a Gymnasium environment made from a
registered id (`gym_make`, `gymnasium.make`) is rebuilt from its id and keyword
arguments; any other is copied (`copy.deepcopy`) for each member of the batch, under an
id registered in this process. `config_overrides` sets any key of the run config
(`{'algorithm.learning_rate': 1e-3}`; see `python -m agents.scripts.train --help`).
"""

import copy
import itertools
import os
import tempfile
import threading

import gymnasium

from agents.experiment import agent_base

_REGISTER_LOCK = threading.Lock()
_COUNTER = itertools.count()
# The training loop's granularity (steps per call of the fused step, per environment
# row): small enough for budgets of a few hundred steps in tests.
_LOOP_OVERRIDES = {'loop.steps_per_call': 16, 'loop.eval_every': 0}


def _env_source(env):
  """(Gymnasium id, kwargs, max_episode_steps) that rebuild `env` in the batch."""
  spec = getattr(env, 'spec', None)
  if spec is not None and spec.id in gymnasium.registry:
    return spec.id, dict(spec.kwargs or {}), None
  with _REGISTER_LOCK:
    env_id = f'agents-experiment/AgentEnv{next(_COUNTER)}-v0'
    instance = env

    def make(**kwargs):
      del kwargs
      return copy.deepcopy(instance)

    gymnasium.register(env_id, entry_point=make, disable_env_checker=True)
  return env_id, {}, None


class _GraphAgent(agent_base.AgentWithSimplePolicy):
  """An in-graph algorithm of a named config, trained by the project's trainer."""

  base_config = ''
  algorithm = ''

  def __init__(self, env, num_envs=4, config_overrides=None, **kwargs):
    """Args:
      env: the environment (an instance, or `(constructor or id, kwargs)`).
      num_envs: environments stepped as one batch.
      config_overrides: {dotted config key: value} on top of the agent's config.
      **kwargs: `Agent`'s (seeder, output_dir, eval_env, ...); without `output_dir` (an
        agent built outside a manager) the run goes to a new temporary folder.
    """
    if kwargs.get('output_dir') is None:  # Its run (checkpoints, policy) in a temporary folder.
      kwargs['output_dir'] = tempfile.mkdtemp(prefix=f'{self.name}-')
    agent_base.AgentWithSimplePolicy.__init__(self, env, **kwargs)
    self.num_envs = int(num_envs)
    self.config_overrides = dict(config_overrides or {})
    self.total_steps = 0
    self._rows_written = 0
    self._model = None
    self._source = _env_source(self.env)

  def _run_dir(self):
    return os.path.join(os.fspath(self.output_dir), 'run')

  def _config(self):
    from agents import configs
    env_id, env_kwargs, _ = self._source
    overrides = dict(_LOOP_OVERRIDES)
    overrides.update({
        'environment.id': env_id, 'environment.kwargs': env_kwargs,
        'environment.num_agents': self.num_envs, 'environment.processes': False,
        # Whole steps of the batch: a budget below `num_envs` still trains one.
        'seed': self.seeder.generate_int(),
        'loop.steps': -(-self.total_steps // self.num_envs) * self.num_envs,
        'loop.log_every': max(16, min(4096, self.total_steps // 4)),
        'loop.checkpoint_every': max(16, self.total_steps)})
    overrides.update(self.config_overrides)
    return configs.resolve(self.base_config, overrides)

  def fit(self, budget, **kwargs):
    """Trains `budget` more environment steps (none when `budget` < 1)."""
    del kwargs
    if budget < 1:
      return
    from agents.run import metrics_writer
    from agents.training import trainer
    self.total_steps += int(budget)
    trainer.train(self._config(), self._run_dir(), quiet=True)
    self._model = None
    rows = metrics_writer.read_metrics(os.path.join(self._run_dir(), 'metrics.jsonl'))
    for row in rows[self._rows_written:]:
      step = row.get('step')
      if row.get('phase', 'train') == 'train' and row.get('mean_score') is not None:
        self.writer.add_scalar('episode_rewards', float(row['mean_score']), step)
      for tag, value in row.items():
        if tag not in ('step', 'phase') and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
          self.writer.add_scalar(f'{row.get("phase", "train")}/{tag}', float(value), step)
    self._rows_written = len(rows)

  def policy(self, observation):
    """The exported policy's action for one observation (a random one before any fit)."""
    import numpy as np
    if self.total_steps < 1:
      return self.env.action_space.sample()
    if self._model is None:
      import tensorflow as tf
      self._model = tf.saved_model.load(os.path.join(self._run_dir(), 'policy'))
    space = self.env.observation_space
    batch = np.asarray(observation, dtype=space.dtype)[None]
    action = self._model.action(batch).numpy()[0]
    return action.item() if np.ndim(action) == 0 else action

  def save(self, filename):
    """Pickles the agent's attributes (its run directory holds the trained weights)."""
    model, self._model = self._model, None
    try:
      return super().save(filename)
    finally:
      self._model = model

  @classmethod
  def sample_parameters(cls, trial):
    """The learning rate, on a log scale (rlberry's search of its agents)."""
    rate = trial.suggest_float('learning_rate', 1e-4, 1e-2, log=True)
    return dict(config_overrides={'algorithm.learning_rate': rate})


class PPOAgent(_GraphAgent):
  """BatchPPO's PPO (`agents.algorithms.ppo`) as an rlberry agent; discrete or continuous
  actions (the `default` config's algorithm and network)."""

  name = 'PPO'
  base_config = 'default'


class QRDQNAgent(_GraphAgent):
  """QR-DQN (`agents.algorithms.qrdqn`) as an rlberry agent; discrete actions (the
  `cartpole_qrdqn` config's algorithm and network, updates from step 64)."""

  name = 'QRDQN'
  base_config = 'cartpole_qrdqn'

  def _config(self):
    overrides = {'algorithm.learning_starts': 64, 'algorithm.batch_size': 32}
    saved, self.config_overrides = self.config_overrides, dict(overrides, **self.config_overrides)
    try:
      return super()._config()
    finally:
      self.config_overrides = saved
