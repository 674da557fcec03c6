"""rlberry's `compare_agents` and `AdastopComparator`: tests on the agents' evaluations.

    from agents.experiment import AdastopComparator, compare_agents

    table = compare_agents([manager_a, manager_b], method='tukey_hsd')  # one row per pair
    comparator = AdastopComparator(seed=42)
    comparator.compare([dict(agent_class=A, train_env=env, fit_budget=10_000), ...])

Each fitted agent gives one score, the mean of its evaluations; agents of different
managers are independent samples. 'tukey_hsd' is SciPy's Tukey HSD over all managers;
'permutation' is a step-down permutation test of every pair's difference of means
(Lehmann and Romano, Testing Statistical Hypotheses, 15.4.4), which keeps the
family-wise error at `alpha` without a Gaussian model. `AdastopComparator` is AdaStop
(the `adastop` package): it fits managers in rounds of `n` agents and stops as soon as
every pair is decided. `agents.experiment.compare` holds this project's own tests.
"""

import itertools
import logging

import numpy as np
import pandas as pd
import scipy.stats

_LOG = logging.getLogger(__name__)
METHODS = ('tukey_hsd', 'permutation')


def _significance(p_value):
  for bound, stars in ((0.001, '***'), (0.01, '**'), (0.05, '*')):
    if p_value < bound:
      return stars
  return ''


def _scores(agent_source, eval_function, n_simulations):
  """DataFrame `agent, mean_eval` with one row per fitted agent of each manager."""
  from agents.experiment import manager as manager_lib
  managers = [manager_lib.ExperimentManager.load(item) if not hasattr(item, 'agent_name')
              else item for item in agent_source]
  rows = []
  for manager in managers:
    for agent_id in range(len(manager.agent_handlers)):
      if eval_function is None:
        values = manager.eval_agents(n_simulations, agent_id=agent_id, verbose=False)
      else:
        values = eval_function(manager, eval_budget=n_simulations, agent_id=agent_id)
      rows.append(dict(mean_eval=float(np.mean(values)), agent=manager.agent_name))
  frame = pd.DataFrame(rows, columns=['mean_eval', 'agent'])
  if frame['agent'].nunique() != len(managers):
    raise ValueError('compare_agents: each manager needs its own agent_name.')
  return frame


def compare_agents(agent_source, method='tukey_hsd', eval_function=None, n_simulations=50,
                   alpha=0.05, B=10_000, seed=None):  # noqa: N803 (rlberry's argument name)
  """Tests every pair of managers' agents for a difference of mean evaluation (rlberry's).

  Args:
    agent_source: fitted managers, paths of saved managers, or a DataFrame with columns
      `agent` (names) and `mean_eval` (one score per fitted agent).
    method: 'tukey_hsd' or 'permutation' (see the module).
    eval_function: callable(manager, eval_budget=n, agent_id=i) -> float or floats;
      None: the agent's `eval` through `eval_agents(n_simulations, agent_id=i)`.
    n_simulations: evaluations per agent.
    alpha: the family-wise level.
    B: random permutations of 'permutation'.
    seed: the permutations' seed (None: fresh).

  Returns:
    DataFrame, one row per pair: `Agent1 vs Agent2`, `mean Agent1`, `mean Agent2`,
    `mean diff`, `std diff`, `decisions` ('accept' or 'reject' equal means), and for
    'tukey_hsd' also `p-val` and `significance` (*, **, ***).

  Raises:
    ValueError: an unknown method, or two managers of the same name.
  """
  if method not in METHODS:
    raise ValueError(f'method must be one of {METHODS}, got {method!r}.')
  frame = agent_source if isinstance(agent_source, pd.DataFrame) else \
      _scores(list(agent_source), eval_function, n_simulations)
  names = list(frame['agent'].unique())
  data = [frame.loc[frame['agent'] == name, 'mean_eval'].to_numpy(dtype=float) for name in names]
  pairs = list(itertools.combinations(range(len(names)), 2))
  table = pd.DataFrame({
      'Agent1 vs Agent2': [f'{names[i]} vs {names[j]}' for i, j in pairs],
      'mean Agent1': [data[i].mean() for i, _ in pairs],
      'mean Agent2': [data[j].mean() for _, j in pairs],
      'mean diff': [data[i].mean() - data[j].mean() for i, j in pairs],
      'std diff': [np.std(data[i] - data[j]) if len(data[i]) == len(data[j]) else np.nan
                   for i, j in pairs]})
  if method == 'tukey_hsd':
    p_values = scipy.stats.tukey_hsd(*data).pvalue
    table['decisions'] = ['accept' if p_values[i, j] >= alpha else 'reject' for i, j in pairs]
    table['p-val'] = [float(p_values[i, j]) for i, j in pairs]
    table['significance'] = [_significance(p_values[i, j]) for i, j in pairs]
  else:
    rejected = step_down_permutation(data, pairs, B, alpha, np.random.default_rng(seed))
    table['decisions'] = ['reject' if reject else 'accept' for reject in rejected]
  return table


def step_down_permutation(data, pairs, n_permutations, alpha, rng):
  """Which pairs' equal means are rejected at family-wise level `alpha` (a list of bools).

  The statistic of a pair is the absolute difference of its means; the labels of all
  the scores are permuted together, and each hypothesis in decreasing order of its
  statistic is rejected while its statistic exceeds the (1 - alpha) quantile of the
  largest permuted statistic among the hypotheses not rejected yet.
  """
  pooled = np.concatenate(data)
  bounds = np.cumsum([0] + [len(values) for values in data])

  def statistics(values):
    means = [values[bounds[k]:bounds[k + 1]].mean() for k in range(len(data))]
    return np.array([abs(means[i] - means[j]) for i, j in pairs])

  observed = statistics(pooled)
  permuted = np.array([statistics(rng.permutation(pooled)) for _ in range(n_permutations)])
  order = np.argsort(-observed)
  rejected = [False] * len(pairs)
  for position, pair in enumerate(order):
    remaining = order[position:]
    threshold = np.quantile(permuted[:, remaining].max(axis=1), 1 - alpha)
    if observed[pair] <= threshold:
      break
    rejected[pair] = True
  return rejected


def _adastop_base():
  from adastop import MultipleAgentsComparator
  return MultipleAgentsComparator


class AdastopComparator(_adastop_base()):
  """AdaStop over managers fitted in rounds (rlberry's `AdastopComparator`).

  Attributes, besides adastop's `decisions`, `is_finished`, `n_iters`, `eval_values`:
    managers_paths: {agent name: the saved manager of the last round}.
  """

  def __init__(self, n=5, K=5, B=10000, comparisons=None, alpha=0.01, beta=0,  # noqa: N803
               seed=None):
    """Args as adastop's `MultipleAgentsComparator`: `n` fits per round (per agent if a
    list), at most `K` rounds, `B` permutations, the `comparisons` (index pairs; None:
    all), level `alpha`, power `beta` spent on early acceptance, `seed`."""
    super().__init__(n, K, B, comparisons, alpha, beta, seed)
    self.managers_paths = {}

  def compare(self, manager_list, n_evaluations=50, verbose=True):
    """Fits and evaluates the managers round by round until every pair is decided.

    Args:
      manager_list: `ExperimentManager` keyword arguments, one dict per agent (each with
        its own `agent_name`); `n_fit` and `seed` are set per round.
      n_evaluations: evaluations whose mean is one agent's score.
      verbose: log each round's decisions.

    Returns:
      The decisions: {comparison: 'equal', 'larger', 'smaller' or 'continue'}.
    """
    from agents.experiment import agent_base
    from agents.experiment import manager as manager_lib
    sizes = np.broadcast_to(np.asarray(self.n), (len(manager_list),))
    seeders = agent_base.Seeder(int(self.rng.randint(10_000))).spawn(
        len(manager_list) * self.K, squeeze=False)
    names = [manager_lib.name_of_agent(kwargs['agent_class'], kwargs.get('agent_name'))
             for kwargs in manager_list]
    if len(set(names)) != len(names):
      raise ValueError('AdastopComparator: each manager needs its own agent_name.')
    self.n_evaluations = n_evaluations
    eval_values = {name: np.array([]) for name in names}
    for round_number in range(self.K):
      active = set(np.ravel(self.current_comparisons)) if self.current_comparisons is not None \
          else set(range(len(manager_list)))
      for index, kwargs in enumerate(manager_list):
        if index not in active:
          continue
        manager = manager_lib.ExperimentManager(
            **dict(kwargs, n_fit=int(sizes[index]),
                   seed=seeders[round_number * len(manager_list) + index]))
        manager.fit()
        self.managers_paths[names[index]] = manager.save()
        scores = [np.mean(manager.eval_agents(n_evaluations, agent_id=agent, verbose=False))
                  for agent in range(manager.n_fit)]
        eval_values[names[index]] = np.hstack([eval_values[names[index]], scores])
      self.partial_compare(eval_values, verbose=verbose)
      if self.is_finished:
        break
    return self.decisions

  def print_results(self):
    """Prints the scores used per agent, their means and each comparison's decision."""
    print('Number of scores used for each agent:')
    for name, count in self.n_iters.items():
      print(f'{name}:{count}')
    print('\nMean of scores of each agent:')
    for name, values in self.eval_values.items():
      print(f'{name}:{np.mean(values)}')
    print('\nDecision for each comparison:')
    for comparison in self.comparisons:
      print(f'{self.agent_names[comparison[0]]} vs {self.agent_names[comparison[1]]}:'
            f'{self.decisions[str(comparison)]}')
