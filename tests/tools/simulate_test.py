"""Tests of the fused step: exactly which environments reset and end on which step."""

import unittest

import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm
from agents.tools import batch_env as batch_env_lib
from agents.tools import errors, in_graph_batch_env, mock_algorithm, mock_environment, simulate

# Three environments with varied episode lengths: 2; 3; and 1, 4 in turn.
DURATIONS = [[2], [3], [1, 4]]
# Environments that begin / end an episode on each of the first 8 batch steps,
# worked out by hand from DURATIONS.
EXPECTED_BEGINS = [[0, 1, 2], [2], [0], [1], [0], [2], [0, 1, 2], []]
EXPECTED_ENDS = [[2], [0], [1], [0], [2], [0, 1, 2], [], [0]]


def _build(durations=DURATIONS, truncated=None):
  envs = [mock_environment.MockEnvironment(d, truncated[i] if truncated else None)
          for i, d in enumerate(durations)]
  batch_env = in_graph_batch_env.InGraphBatchEnv(
      batch_env_lib.BatchEnv(envs), info_specs=mock_environment.INFO_SPECS)
  agent = mock_algorithm.MockAlgorithm(batch_env)
  return envs, batch_env, agent


def _per_step(agent, method, steps):
  """Splits the recorded indices of 'begin' or 'end' calls by batch step.

  Each step records 'begin' (if any environment began), then 'perform', then
  'experience', then 'end' (if any ended); a step without the call gets [].
  """
  begins, ends, pending_begin = [], [], []
  for name, data in agent.calls:
    if name == 'begin':
      pending_begin = data
    elif name == 'perform':
      begins.append(pending_begin)
      ends.append([])
      pending_begin = []
    elif name == 'end':
      ends[-1] = data
  return (begins if method == 'begin' else ends)[:steps]


class SimulateTest(unittest.TestCase):

  def test_begins_and_ends_the_right_environments_on_each_step(self):
    envs, batch_env, agent = _build()
    fused_step = simulate.FusedStep(batch_env, agent)
    for _ in range(8):
      fused_step(False, 1)
    self.assertEqual(_per_step(agent, 'begin', 8), EXPECTED_BEGINS)
    self.assertEqual(_per_step(agent, 'end', 8), EXPECTED_ENDS)
    # Every finished episode ran exactly its scripted length.
    self.assertEqual([env.steps for env in envs], [[2, 2, 2, 2], [3, 3, 2], [1, 4, 1, 2]])

  def test_several_steps_per_call_match_single_steps(self):
    for steps_per_call in (8, 3):
      with self.subTest(steps_per_call=steps_per_call):
        envs, batch_env, agent = _build()
        fused_step = simulate.FusedStep(batch_env, agent)
        remaining = 8
        while remaining:
          fused_step(False, min(steps_per_call, remaining))
          remaining -= min(steps_per_call, remaining)
        self.assertEqual(_per_step(agent, 'begin', 8), EXPECTED_BEGINS)
        self.assertEqual(_per_step(agent, 'end', 8), EXPECTED_ENDS)
        self.assertEqual([env.steps for env in envs], [[2, 2, 2, 2], [3, 3, 2], [1, 4, 1, 2]])

  def test_begin_and_end_are_never_called_with_no_environments(self):
    _, batch_env, agent = _build()
    simulate.FusedStep(batch_env, agent)(False, 8)
    self.assertTrue(all(agent.calls_of('begin')))
    self.assertTrue(all(agent.calls_of('end')))
    self.assertEqual(len(agent.calls_of('perform')), 8)

  def test_methods_run_in_order_within_a_step(self):
    _, batch_env, agent = _build()
    simulate.FusedStep(batch_env, agent)(False, 2)
    self.assertEqual([name for name, _ in agent.calls],
                     ['begin', 'perform', 'experience', 'end',
                      'begin', 'perform', 'experience', 'end'])

  def test_experience_keeps_terminated_and_truncated_apart(self):
    # Environment 0 terminates after 2 steps; environment 1 is truncated after 2.
    _, batch_env, agent = _build(durations=[[2], [2]], truncated=[[False], [True]])
    simulate.FusedStep(batch_env, agent)(False, 2)
    first, second = agent.calls_of('experience')
    _, observ, action, reward, terminated, truncated, next_observ = second
    np.testing.assert_array_equal(terminated, [True, False])
    np.testing.assert_array_equal(truncated, [False, True])
    np.testing.assert_array_equal(first[4], [False, False])
    np.testing.assert_array_equal(first[5], [False, False])
    # The observation the action was chosen on, and the final one before reset.
    np.testing.assert_array_equal(observ, [[0, 1], [0, 1]])
    np.testing.assert_array_equal(next_observ, [[0, 2], [0, 2]])
    np.testing.assert_array_equal(reward, [1.0, 1.0])
    self.assertEqual(action.shape, (2, 1))

  def test_tracks_scores_and_lengths_of_finished_episodes(self):
    _, batch_env, agent = _build()
    fused_step = simulate.FusedStep(batch_env, agent)
    result = fused_step(False, 2)
    # After 2 steps: env 0 finished episode 0 (2 steps, reward 1 each);
    # env 2 finished episode 0 (1 step) at step 1 and is in episode 1.
    np.testing.assert_array_equal(result.done, [True, False, False])
    np.testing.assert_array_equal(result.score, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(result.length, [2, 2, 1])
    self.assertEqual(int(result.episodes), 2)
    fused_step(False, 6)
    # Finished by step 8: env 0 four episodes of 2 steps with returns 2, 4, 6,
    # 8; env 1 two of 3 steps with returns 3, 6; env 2 returns 1, 8 and 3.
    self.assertEqual(fused_step.episodes.totals(), (9, 41.0, 20))

  def test_forced_reset_begins_every_episode_and_drops_unfinished_ones(self):
    envs, batch_env, agent = _build()
    fused_step = simulate.FusedStep(batch_env, agent)
    fused_step(False, 2)
    totals = fused_step.episodes.totals()
    result = fused_step(True, 1)
    self.assertEqual(agent.calls_of('begin')[-1], [0, 1, 2])
    # Environment 1 was in the middle of its first episode; it was reset anyway.
    self.assertEqual(envs[1].steps, [2, 1])
    np.testing.assert_array_equal(result.length, [1, 1, 1])
    self.assertEqual(fused_step.episodes.totals()[0], totals[0] + int(result.episodes))

  def test_global_step_counts_environment_steps_of_the_batch(self):
    _, batch_env, agent = _build()
    global_step = tf.Variable(0, dtype=tf.int64)
    fused_step = simulate.FusedStep(batch_env, agent, global_step=global_step)
    fused_step(False, 3)
    fused_step(False, 1)
    self.assertEqual(int(global_step.numpy()), 4 * 3)

  def test_traced_once_whatever_reset_and_steps_are(self):
    _, batch_env, agent = _build()
    fused_step = simulate.FusedStep(batch_env, agent)
    for reset, steps in [(True, 1), (False, 1), (False, 5), (True, 3), (False, 2)]:
      fused_step(reset, steps)
    self.assertEqual(fused_step.trace_count, 1)
    self.assertEqual(fused_step._function.experimental_get_tracing_count(), 1)

  def test_grappler_setting_is_scoped_to_the_fused_step(self):
    _, batch_env, agent = _build()
    before = tf.config.optimizer.get_experimental_options().get('arithmetic_optimization')
    fused_step = simulate.FusedStep(batch_env, agent)
    fused_step(True, 2)
    after = tf.config.optimizer.get_experimental_options().get('arithmetic_optimization')
    self.assertIn(after, (before, True))  # Never left off for the rest of the process.

  def test_simulate_is_usable_inside_a_plain_tf_function(self):
    _, batch_env, agent = _build()
    episodes = simulate.EpisodeStatistics(len(batch_env))
    run = tf.function(lambda: simulate.simulate(batch_env, agent, episodes, steps=8))
    result = run()
    self.assertEqual(int(result.episodes), 9)
    self.assertEqual(_per_step(agent, 'end', 8), EXPECTED_ENDS)

  def test_variables_created_while_tracing_are_named(self):
    _, batch_env, _ = _build()

    class LazyAlgorithm(algorithm.InGraphAlgorithm):

      def begin_episode(self, agent_indices):
        return None

      def perform(self, agent_indices, observ):
        if not hasattr(self, 'late'):
          self.late = tf.Variable(1.0, name='late_variable')
        return tf.zeros([3, 1]) * self.late

      def experience(self, *unused_transition):
        return None

      def end_episode(self, agent_indices):
        return None

    with self.assertRaisesRegex(RuntimeError, 'late_variable'):
      simulate.FusedStep(batch_env, LazyAlgorithm())(False, 1)

  def test_environment_errors_reach_the_caller_with_their_own_type(self):
    _, batch_env, agent = _build()
    fused_step = simulate.FusedStep(batch_env, agent)
    fused_step(False, 1)
    batch_env.done.assign([False, False, False])  # Pretend env 2 was not done.
    with self.assertRaisesRegex(RuntimeError, 'stepped after its episode ended') as caught:
      fused_step(False, 1)
    self.assertIsInstance(caught.exception.__cause__, tf.errors.OpError)
    self.assertIsNone(batch_env.pop_python_error())

  def test_action_errors_of_the_batch_keep_their_type(self):
    _, batch_env, agent = _build()

    class NotFinite(mock_algorithm.MockAlgorithm):

      def perform(self, agent_indices, observ):
        return float('nan') + super().perform(agent_indices, observ)

    with self.assertRaises(errors.ActionError):
      simulate.FusedStep(batch_env, NotFinite(batch_env))(False, 1)


if __name__ == '__main__':
  unittest.main()
