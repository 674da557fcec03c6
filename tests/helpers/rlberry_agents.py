"""Agent classes in rlberry's style (fit/eval) for the experiment tests, on CartPole.

`StepCounter` steps its environment with random actions and counts the steps; its
`eval` depends only on its `learning_rate` (best at 0.3), so a search has something
to find without any learning. `SavedStepCounter` adds rlberry's `save`/`load`.
`PoleAgent` derives from rlberry's `AgentWithSimplePolicy` (`agents.experiment`).
"""

import json

import numpy as np

from agents.experiment import AgentWithSimplePolicy

CONSTRUCTED = []  # (seed, output_dir, learning_rate) of every StepCounter built


class StepCounter:
  """Counts the environment steps its fits take; eval is -|learning_rate - 0.3|."""

  name = 'step_counter'

  def __init__(self, env, learning_rate=0.1, seed=None, output_dir=None):
    self.env = env
    self.learning_rate = learning_rate
    self.seed = seed
    self.output_dir = output_dir
    self.steps = 0
    self.fit_calls = []
    CONSTRUCTED.append((seed, output_dir, learning_rate))

  def fit(self, budget, **kwargs):
    self.fit_calls.append((budget, kwargs))
    self.env.reset()
    for _ in range(budget):
      _, _, terminated, truncated, _ = self.env.step(self.env.action_space.sample())
      if terminated or truncated:
        self.env.reset()
    self.steps += budget

  def eval(self, n_simulations=1, **kwargs):
    del n_simulations, kwargs
    return -abs(self.learning_rate - 0.3)


class SavedStepCounter(StepCounter):
  """A `StepCounter` with rlberry's save(filename) and classmethod load(filename, **kwargs)."""

  name = 'saved_step_counter'

  def save(self, filename):
    path = f'{filename}.json'
    with open(path, 'w', encoding='utf-8') as file:
      json.dump(dict(steps=self.steps), file)
    return path

  @classmethod
  def load(cls, filename, **kwargs):
    agent = cls(**kwargs)
    with open(filename, encoding='utf-8') as file:
      agent.steps = json.load(file)['steps']
    return agent


class SampledStepCounter(StepCounter):
  """A `StepCounter` that samples its own learning rate (rlberry's sample_parameters)."""

  @classmethod
  def sample_parameters(cls, trial):
    return dict(learning_rate=trial.suggest_float('learning_rate', 0.0, 1.0))


class FitOnly:
  """Not an agent class: no eval."""

  def __init__(self, env):
    self.env = env

  def fit(self, budget):
    del budget


class PoleAgent(AgentWithSimplePolicy):
  """A small agent on rlberry's base class for CartPole: pushes the cart toward the pole's
  fall, `action = [angle + gain * angular velocity > 0]`, exploring with `rng` during fit.

  `fit(budget)` steps the environment `budget` times, nudges `gain` toward the better of
  two nearby values after each episode, and logs each episode's return through `writer`.
  """

  name = 'pole'

  def __init__(self, env, gain=0.5, epsilon=0.1, **kwargs):
    AgentWithSimplePolicy.__init__(self, env, **kwargs)
    self.gain = gain
    self.epsilon = epsilon
    self.total_steps = 0
    self.episodes = 0

  def fit(self, budget, **kwargs):
    del kwargs
    observation, _ = self.env.reset()
    episode_return = 0.0
    for _ in range(int(budget)):
      action = self.policy(observation)
      if self.rng.random() < self.epsilon:
        action = int(self.rng.integers(2))
      observation, reward, terminated, truncated, _ = self.env.step(action)
      episode_return += reward
      self.total_steps += 1
      if terminated or truncated:
        self.episodes += 1
        self.writer.add_scalar('episode_rewards', episode_return, self.total_steps)
        self.gain = float(np.clip(self.gain + 0.05 * self.rng.standard_normal(), 0.0, 2.0))
        observation, _ = self.env.reset()
        episode_return = 0.0

  def policy(self, observation):
    return int(observation[2] + self.gain * observation[3] > 0)

  @classmethod
  def sample_parameters(cls, trial):
    return dict(gain=trial.suggest_float('gain', 0.0, 2.0))


class HorizonPoleAgent(PoleAgent):
  """A `PoleAgent` whose `eval` takes `horizon` (the argument name of rlberry's
  `eval_agents` docstring example) for `eval_horizon`."""

  def eval(self, horizon=10**5, n_simulations=10, gamma=1.0):
    return PoleAgent.eval(self, eval_horizon=horizon, n_simulations=n_simulations, gamma=gamma)


class NoFitAgent(AgentWithSimplePolicy):
  """Derives from AgentWithSimplePolicy but forgets fit."""

  def policy(self, observation):
    del observation
    return 0
