"""rlberry's agent checks (`rlberry.utils.check_agent`): run them on an agent class of yours.

    from agents.experiment import check_rl_agent

    check_rl_agent(MyAgent)                              # on CartPole-v1
    check_rl_agent(MyAgent, env=('FrozenLake-v1', {}))   # or (constructor or id, kwargs)

Each check raises (AssertionError or RuntimeError, naming what failed) or returns None.
`env` is `(constructor or Gymnasium id, kwargs)` or one of rlberry's names, here
Gymnasium environments: 'continuous_state' (CartPole-v1), 'discrete_state'
(FrozenLake-v1), 'continuous_action' (Pendulum-v1), 'vectorized_env_continuous'
(CartPole-v1). The agent class takes `env` and `seeder` (as a subclass of `Agent` does);
checks of a policy need `policy(observation)`.
"""

import os
import random
import sys
import tempfile

import numpy as np

from agents.experiment import agent_base

SEED = 42
NAMED_ENVS = {
    'continuous_state': ('CartPole-v1', {}),
    'discrete_state': ('FrozenLake-v1', {}),
    'continuous_action': ('Pendulum-v1', {}),
    'vectorized_env_continuous': ('CartPole-v1', {}),
}


def _make_tuple_env(env):
  """`(constructor or id, kwargs)` of `env`: a pair, or one of `NAMED_ENVS`' names.

  Raises:
    ValueError: anything else ('The env given in parameter is not implemented', rlberry's).
  """
  if isinstance(env, str) and env in NAMED_ENVS:
    return NAMED_ENVS[env]
  if isinstance(env, tuple) and len(env) == 2:
    return env[0], dict(env[1] or {})
  raise ValueError(f'The env given in parameter is not implemented: {env!r} (give '
                   f'(constructor or Gymnasium id, kwargs) or one of {sorted(NAMED_ENVS)}).')


def _build(env_pair):
  return agent_base.make_env(env_pair)


def set_external_seed(seed):
  """Seeds Python's, NumPy's global and (when imported) TensorFlow's generators."""
  random.seed(seed)
  np.random.seed(seed)
  if 'tensorflow' in sys.modules:
    sys.modules['tensorflow'].random.set_seed(seed)


def _fit_experiment_manager(agent, env='continuous_state', init_kwargs=None):
  """A manager of one `agent` fitted for 5.

  Raises:
    RuntimeError: 'Agent not compatible with ExperimentManager', from the error.
  """
  from agents.experiment import manager as manager_lib
  train_env = _make_tuple_env(env)
  try:
    manager = manager_lib.ExperimentManager(
        agent, train_env, agent_name='test_agent', fit_budget=5, n_fit=1, seed=SEED,
        init_kwargs=dict(init_kwargs or {}), output_dir=tempfile.mkdtemp(prefix='check-agent-'),
        parallelization='inline')
    manager.fit()
  except Exception as error:
    raise RuntimeError(f'Agent not compatible with ExperimentManager: {error}') from error
  return manager


def _fit_agent(agent, env='continuous_state', init_kwargs=None):
  """`agent(env, **init_kwargs)` fitted for 10, without a manager.

  Raises:
    RuntimeError: 'Agent can not fit without ExperimentManager', from the error.
  """
  try:
    instance = agent(_build(_make_tuple_env(env)), **dict(init_kwargs or {}))
    instance.fit(10)
  except Exception as error:
    raise RuntimeError(f'Agent can not fit without ExperimentManager: {error}') from error
  return instance


def check_experiment_manager(agent, env='continuous_state', init_kwargs=None):
  """The agent class fits in an `ExperimentManager`."""
  assert _fit_experiment_manager(agent, env, init_kwargs) is not None


def check_agent_base(agent, env='continuous_state', init_kwargs=None):
  """The agent class builds on an environment and fits, without a manager."""
  assert _fit_agent(agent, env, init_kwargs) is not None


def check_agents_almost_equal(agent1, agent2, compare_using='policy', n_checks=5):
  """Whether two agents give the same answers `n_checks` times, the global seeds set
  alike before each agent's answers.

  Args:
    agent1, agent2: agents.
    compare_using: 'policy' (their actions on agent1's first observation), or the name of
      a method of theirs without arguments returning numbers (e.g. 'eval').
    n_checks: answers compared.

  Returns:
    bool.
  """
  observation = agent1.env.reset()[0] if compare_using == 'policy' else None

  def answers(agent):
    set_external_seed(SEED)
    method = agent.policy if compare_using == 'policy' else getattr(agent, compare_using)
    return [method(observation) if compare_using == 'policy' else method()
            for _ in range(n_checks)]

  return all(np.all(np.asarray(a) == np.asarray(b))
             for a, b in zip(answers(agent1), answers(agent2)))


def check_fit_additive(agent, env='continuous_state', init_kwargs=None):
  """Fitting twice for 10 gives the agent fitting once for 20 gives."""
  init_kwargs = dict(init_kwargs or {}, seeder=SEED)
  train_env = _make_tuple_env(env)
  set_external_seed(SEED)
  first = agent(train_env, **init_kwargs)
  first.fit(10)
  first.fit(10)
  set_external_seed(SEED)
  second = agent(train_env, **init_kwargs)
  second.fit(20)
  assert check_agents_almost_equal(first, second), (
      'Error: fitting the agent two times for 10 steps is not equivalent to fitting it one '
      'time for 20 steps.')


def check_save_load(agent, env='continuous_state', init_kwargs=None):
  """The agent saves and loads, in a manager and on its own, and the loaded one acts."""
  _check_save_load_with_manager(agent, env, init_kwargs)
  _check_save_load_without_manager(agent, env, init_kwargs)


def _act(instance, env_pair, steps=50):
  env = _build(env_pair)
  observation, _ = env.reset()
  for _ in range(steps):
    observation, _, terminated, truncated, _ = env.step(instance.policy(observation))
    if terminated or truncated:
      observation, _ = env.reset()


def _check_save_load_with_manager(agent, env='continuous_state', init_kwargs=None):
  from agents.experiment import manager as manager_lib
  train_env = _make_tuple_env(env)
  with tempfile.TemporaryDirectory() as directory:
    manager = manager_lib.ExperimentManager(
        agent, train_env, fit_budget=5, n_fit=1, seed=SEED, init_kwargs=dict(init_kwargs or {}),
        output_dir=directory, parallelization='inline')
    manager.fit(3)
    saved = manager.fits[0].get('saved_agent')
    assert saved, 'The agent class has no save(filename): its fits are not saved.'
    path = os.path.join(manager.output_dir_, saved)
    assert os.path.getsize(path) > 1, 'The saved file is empty.'
    try:
      agent.load(path, env=_build(train_env))
    except Exception as error:
      raise RuntimeError(f'Failed to load the agent file: {error}') from error
    loaded = manager_lib.ExperimentManager.load(manager.save())
    assert loaded, 'The manager did not load.'
    _act(loaded.get_agent_instances()[0], train_env)


def _check_save_load_without_manager(agent, env='continuous_state', init_kwargs=None):
  train_env = _make_tuple_env(env)
  with tempfile.TemporaryDirectory() as directory:
    instance = _fit_agent(agent, train_env, init_kwargs)
    instance.fit(3)
    path = instance.save(os.path.join(directory, 'agent_test.pickle'))
    assert path is not None and os.path.exists(path), 'save(filename) wrote no file.'
    loaded = agent.load(path, env=instance.env)
    assert loaded, 'load(filename) returned no agent.'
    _act(loaded, train_env)


def check_seeding_agent(agent, env=None, continuous_state=False, init_kwargs=None):
  """Two managers of the same seed give agents that act alike."""
  del continuous_state  # rlberry's argument, unused there too.
  env = env or 'continuous_state'
  first = _fit_experiment_manager(agent, env, init_kwargs)
  second = _fit_experiment_manager(agent, env, init_kwargs)
  assert check_agents_almost_equal(first.agent_handlers[0], second.agent_handlers[0]), \
      'Agent not reproducible (same seed give different results)'


def check_multi_fit(agent, env='continuous_state', init_kwargs=None):
  """Two fits in a row (each longer than a short rollout) work, and the agent acts."""
  train_env = _make_tuple_env(env)
  instance = agent(_build(train_env), **dict(init_kwargs or {}, seeder=SEED))
  params = instance.get_params() if callable(getattr(instance, 'get_params', None)) else {}
  if 'n_steps' in params:
    instance.n_steps = 3
  instance.fit(13)
  instance.fit(13)
  _act(instance, train_env)


def check_vectorized_env_agent(agent, env='vectorized_env_continuous', agent_init_kwargs=None):
  """Fitting twice on a (vectorized) environment works and the agent acts."""
  train_env = _make_tuple_env(env)
  instance = agent(_build(train_env), **dict(agent_init_kwargs or {}, seeder=SEED))
  instance.fit(13)
  instance.fit(13)
  _act(instance, train_env)


def check_hyperparam_optimisation_agent(agent, env='continuous_state', init_kwargs=None):
  """`optimize_hyperparams` runs on the class's `sample_parameters` (TPE, random, CMA-ES)."""
  from agents.experiment import manager as manager_lib
  for sampler in ('optuna_default', 'random', 'cmaes'):
    with tempfile.TemporaryDirectory() as directory:
      manager = manager_lib.ExperimentManager(
          agent, _make_tuple_env(env), fit_budget=5, n_fit=2, seed=SEED,
          init_kwargs=dict(init_kwargs or {}), eval_kwargs=dict(eval_horizon=5),
          output_dir=directory, parallelization='inline')
      manager.optimize_hyperparams(n_trials=3, timeout=None, n_fit=1, sampler_method=sampler,
                                   pruner_method='none', n_optuna_workers=1)


def check_rl_agent(agent, env='continuous_state', init_kwargs=None):
  """rlberry's checks of an agent class: in a manager, alone, seeding, additive fits,
  save and load, and two fits in a row.

  Raises:
    ValueError: an unknown `env`.
    RuntimeError or AssertionError: the first check that fails, named.
  """
  _make_tuple_env(env)
  check_experiment_manager(agent, env, init_kwargs)
  check_agent_base(agent, env, init_kwargs)
  check_seeding_agent(agent, env, init_kwargs=init_kwargs)
  check_fit_additive(agent, env, init_kwargs)
  check_save_load(agent, env, init_kwargs)
  check_multi_fit(agent, env, init_kwargs)


def check_rlberry_agent(agent, env='continuous_state', init_kwargs=None):
  """rlberry's extra check: the fitted agent has `get_params()`.

  Raises:
    RuntimeError: 'Fail to call get_params on the agent.'
  """
  instance = _fit_experiment_manager(agent, env, init_kwargs).agent_handlers[0]
  try:
    instance.get_params()
  except Exception as error:
    raise RuntimeError(f'Fail to call get_params on the agent: {error}') from error
