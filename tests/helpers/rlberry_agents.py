"""Agent classes in rlberry's style (fit/eval) for the experiment tests, on CartPole.

`StepCounter` steps its environment with random actions and counts the steps; its
`eval` depends only on its `learning_rate` (best at 0.3), so a search has something
to find without any learning. `SavedStepCounter` adds rlberry's `save`/`load`.
"""

import json

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
