"""BLE's guide to training and evaluating agents (seeds 000/001), snippet by snippet.

Each test runs one snippet of the guide as it is written, with its import lines changed
(`balloon_learning_environment...` -> `agents...`, `gym` -> `gymnasium`), its
placeholders (`YourAgent`, `...`, `do_something_with_eval_results`) filled with this
test's small agent, and its budgets cut (`num_iterations=2000` -> 1, 960 steps -> 3,
`small_eval` -> `micro_eval`), then checks what the guide promises. The snippets fly
BLE's generative wind, the default, as the guide does: they skip where BLE's decoder
weights are not on the machine. The snippets keep
the guide's layout (its import order, 4-space indentation, `super(MyNewAgent, self)`),
hence the file-wide exemptions below.
"""
# ruff: noqa: I001, UP008, UP035, E402

import contextlib
import io
import json
import os
import tempfile
import unittest

import numpy as np

import gin
from agents.python_agents import agent as agent_lib
from tests.helpers import ble_wind

BALLOON_STEPS = 3  # max_episode_length of the cut budgets


def fresh_gin():
  """gin's configuration cleared (and unlocked) now and after the test."""
  gin.clear_config()
  return gin.clear_config


# ---- The guide's "Creating an Agent", as written, its `...` filled in. ----
from typing import Sequence

from agents.python_agents import agent  # was: ...balloon_learning_environment.agents


class MyNewAgent(agent.Agent):
    def __init__(self, num_actions: int, observation_shape: Sequence[int]):
        super(MyNewAgent, self).__init__(num_actions, observation_shape)

        # The `...` of the guide: count what the loop calls, act by a fixed rule.
        self.calls = {'begin_episode': 0, 'step': 0, 'end_episode': 0}

    def begin_episode(self, observation):
        self.calls['begin_episode'] += 1
        return 1

    def step(self, reward, observation):
        self.calls['step'] += 1
        return 2

    def end_episode(self, reward, terminal=True):
        self.calls['end_episode'] += 1


YourAgent = MyNewAgent  # The guide's placeholder for "your agent".


class CreatingAnAgentTest(unittest.TestCase):

  def test_the_guides_agent_class_is_an_agent(self):
    new = MyNewAgent(3, (1099,))
    self.assertIsInstance(new, agent_lib.Agent)
    self.assertEqual(new.begin_episode(np.zeros(1099)), 1)
    self.assertEqual(new.get_name(), 'MyNewAgent')


class ProvidedAgentTest(unittest.TestCase):
  """"Alternatively, you can use one of the agents provided with the BLE"."""

  def setUp(self):
    self.addCleanup(fresh_gin())

  @ble_wind.needs_weights
  def test_bind_gin_variables_then_create_agent_gives_the_gin_bound_agent(self):
    import gymnasium as gym  # was: gym
    from agents.python_agents import train_lib  # noqa: F401 - was: from balloon_learning_environment import train_lib
    import agents.env  # noqa: F401 - was: from balloon_learning_environment.env import balloon_env
    from agents.python_agents import run_helpers  # was: ...utils import run_helpers

    agent_name = 'quantile'
    env = gym.make('BalloonLearningEnvironment-v0')
    run_helpers.bind_gin_variables(agent_name)
    agent = run_helpers.create_agent(agent_name,
                                     env.action_space.n,
                                     env.observation_space.shape)

    observation, _ = env.reset(seed=0)
    env.close()
    # The values of agents/python_agents/configs/quantile.gin, not QR-DQN's defaults.
    config = agent.batched_agent.qrdqn.config
    self.assertEqual((config.num_quantiles, config.discount, config.n_step),
                     (51, 0.993, 5))
    self.assertEqual((config.learning_rate, config.batch_size, config.update_every),
                     (1e-4, 32, 4))
    # The wind-column quantile network of the balloon_qrdqn config, its keys bound by gin.
    network = agent.batched_agent.qrdqn.online_network
    self.assertEqual(type(network).__name__, 'ColumnQuantileNetwork')
    self.assertEqual(network._stride, 4)
    # BLE's single-balloon methods.
    self.assertIn(agent.begin_episode(observation), (0, 1, 2))
    self.assertIn(agent.step(0.0, observation), (0, 1, 2))
    agent.end_episode(0.0, True)

  def test_gin_bindings_override_the_gin_file(self):
    from agents.python_agents import run_helpers
    run_helpers.bind_gin_variables('mlp', gin_bindings=['MLPAgent.hidden_units = 5',
                                                        'MLPAgent.num_layers = 2'])
    mlp = run_helpers.create_agent('mlp', 3, (1099,))
    self.assertEqual([weight.shape for weight in mlp.weights],
                     [(1099, 5), (5,), (5, 3), (3,)])


@gin.configurable
class GinConfiguredAgent(MyNewAgent):
  """A BLE agent of the user's, configured by gin as BLE's are."""

  def __init__(self, num_actions, observation_shape, step_size=0.1, layers=(8,)):
    super().__init__(num_actions, observation_shape)
    self.step_size, self.layers = step_size, layers


class UserGinAgentTest(unittest.TestCase):

  def setUp(self):
    self.addCleanup(fresh_gin())

  def test_a_gin_configurable_ble_agent_gets_its_file_and_bindings(self):
    from agents.python_agents import run_helpers
    path = os.path.join(tempfile.mkdtemp(), 'mine.gin')
    with open(path, 'w') as file:
      file.write('GinConfiguredAgent.step_size = 0.5\nGinConfiguredAgent.layers = (4, 4)\n')
    run_helpers.bind_gin_variables('mine', agent_gin_file=path,
                                   gin_bindings=['GinConfiguredAgent.step_size = 0.25'])
    configured = GinConfiguredAgent(3, (1099,))
    self.assertEqual((configured.step_size, configured.layers), (0.25, (4, 4)))

  def test_a_binding_of_an_unknown_parameter_is_named(self):
    from agents.python_agents import run_helpers
    with self.assertRaisesRegex(run_helpers.GinConfigError,
                                "gin binding 'GinConfiguredAgent.stepsize = 1'.*stepsize"):
      run_helpers.bind_gin_variables('random', gin_bindings=['GinConfiguredAgent.stepsize = 1'])


class TrainingScriptTest(unittest.TestCase):
  """"Create Training Script": the slimmed-down train.py."""

  @ble_wind.needs_weights
  def test_one_iteration_runs_bles_50_episodes(self):
    root = tempfile.mkdtemp()
    from agents.python_agents import train_lib  # was: ...balloon_learning_environment
    import agents.env  # noqa: F401 - was: from balloon_learning_environment.env import balloon_env
    import gymnasium as gym  # was: import gym

    env = gym.make('BalloonLearningEnvironment-v0')
    agent = YourAgent(env.action_space.n, env.observation_space.shape)

    with contextlib.redirect_stderr(io.StringIO()):  # The progress bar.
     train_lib.run_training_loop(
        os.path.join(root, 'my_experiment'),  # The experiment root path.
        env,
        agent,
        num_iterations=1,
        max_episode_length=BALLOON_STEPS,  # 960 steps is 2 days, the default amount.
        collector_constructors=[])  # Specify some collectors to log training stats.

    env.close()
    self.assertEqual(agent.calls, {'begin_episode': 50, 'step': 50 * (BALLOON_STEPS - 1),
                                   'end_episode': 50})
    records = train_lib.read_records(os.path.join(root, 'my_experiment', 'checkpoints'))
    self.assertEqual(sorted(records), [0])
    self.assertEqual(records[0]['episodes'], 50)

  @ble_wind.needs_weights
  def test_a_batch_counts_the_50_episodes_over_its_balloons(self):
    from agents.python_agents import train_lib
    batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', 8, num_processes=0)
    self.addCleanup(batch.close)
    agents = [YourAgent(3, (1099,)) for _ in range(8)]
    result = train_lib.run_training_loop(tempfile.mkdtemp(), batch, agents, num_iterations=1,
                                         max_episode_length=BALLOON_STEPS, progress=False)
    self.assertEqual(result['episodes'], 50)
    # Six rounds of 8, then a round of 2: rows 0 and 1 fly 7 episodes, the others 6.
    self.assertEqual([single.calls['end_episode'] for single in agents], [7, 7] + [6] * 6)

  @ble_wind.needs_weights
  def test_create_agents_quantile_trains_batched_on_a_batch(self):
    from agents.python_agents import run_helpers, train_lib
    quantile = run_helpers.create_agent('quantile', 3, (1099,), num_envs=4, batch_size=4,
                                        replay_capacity=64, learning_starts=8,
                                        hidden_layers=(8,), num_quantiles=3)
    batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', 4, num_processes=0)
    self.addCleanup(batch.close)
    calls = []
    inner = quantile.batched_agent
    original = inner.step
    inner.step = lambda rewards, observations, rows: calls.append(len(rows)) or original(
        rewards, observations, rows)
    result = train_lib.run_training_loop(tempfile.mkdtemp(), batch, quantile, 1,
                                         max_episode_length=BALLOON_STEPS,
                                         episodes_per_iteration=8, progress=False)
    self.assertEqual(result['episodes'], 8)
    self.assertEqual(calls, [4] * (2 * (BALLOON_STEPS - 1)))  # One call per batch step.


class EvaluationScriptTest(unittest.TestCase):
  """"Create Evaluation Script": the slimmed-down eval.py."""

  @ble_wind.needs_weights
  def test_eval_agent_returns_one_result_per_seed_of_the_suite(self):
    written = []

    def do_something_with_eval_results(eval_results):  # The guide's placeholder.
      written.append(json.dumps(eval_results, cls=eval_lib.EvalResultEncoder))

    import agents.env  # noqa: F401 - was: from balloon_learning_environment.env import balloon_env
    from agents.python_agents import eval_lib  # was: from ...eval import eval_lib
    from agents.python_agents import suites  # was: from ...eval import suites
    from agents.python_agents.eval_lib import eval_agent  # the guide calls it bare
    import gymnasium as gym  # was: import gym

    env = gym.make('BalloonLearningEnvironment-v0')
    agent = YourAgent(env.action_space.n, env.observation_space.shape)

    eval_results = eval_agent(
        agent,
        env,
        eval_suite=suites.get_eval_suite('micro_eval'))

    do_something_with_eval_results(eval_results)  # Write to disk, for example.
    env.close()
    suite = suites.get_eval_suite('micro_eval')
    self.assertEqual([result.seed for result in eval_results], list(suite.seeds))
    self.assertEqual(agent.calls['begin_episode'], len(suite.seeds))
    first = json.loads(written[0])[0]
    self.assertEqual(list(first)[:8], ['seed', 'cumulative_reward', 'time_within_radius',
                                       'out_of_power', 'envelope_burst', 'zeropressure',
                                       'final_timestep', 'flight_path'])
    self.assertEqual(first['final_timestep'], suite.max_episode_length)


if __name__ == '__main__':
  unittest.main()
