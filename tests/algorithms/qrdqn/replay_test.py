"""Tests of agents/algorithms/qrdqn/replay.py: the ring buffer and the n-step targets."""

import unittest

import numpy as np
import tensorflow as tf

from agents.algorithms.qrdqn import replay


def _append(memory, step, ended=False, terminated=False, envs=1):
  """One transition per environment; observations carry the step number."""
  indices = tf.range(envs)
  observ = tf.fill([envs, 1], float(step))
  return memory.append(indices, observ, tf.zeros([envs], tf.int32),
                       tf.fill([envs], float(step)), tf.fill([envs], terminated),
                       tf.fill([envs], ended), tf.fill([envs, 1], float(step) + 0.5))


class NStepTargetsTest(unittest.TestCase):

  def _targets(self, valid, terminated):
    reward = tf.constant([[1.0, 2.0, 4.0]])
    returns, steps, discount = replay.n_step_targets(
        reward, tf.constant([valid]), tf.constant([terminated]), 0.5)
    return float(returns[0]), int(steps[0]), float(discount[0])

  def test_full_window_bootstraps_after_n_steps(self):
    self.assertEqual(self._targets([True] * 3, [False] * 3), (1 + 0.5 * 2 + 0.25 * 4, 3, 0.125))

  def test_termination_ends_the_return_without_bootstrap(self):
    self.assertEqual(self._targets([True] * 3, [False, True, False]), (2.0, 2, 0.0))

  def test_truncation_bootstraps_from_the_kept_final_observation(self):
    # After a truncated transition the next row is its final observation (invalid).
    self.assertEqual(self._targets([True, False, True], [False] * 3), (1.0, 1, 0.5))

  def test_window_starting_on_an_observation_row_is_empty(self):
    self.assertEqual(self._targets([False, True, True], [False] * 3), (0.0, 0, 1.0))


class ReplayMemoryTest(unittest.TestCase):

  def test_an_episode_end_keeps_its_final_observation_in_the_next_row(self):
    memory = replay.ReplayMemory(rows=8, num_envs=1, observ_size=1)
    _append(memory, 0)
    _append(memory, 1, ended=True)
    _append(memory, 2)
    np.testing.assert_array_equal(memory.observ.numpy()[:5, 0, 0], [0, 1, 1.5, 2, 2.5])
    np.testing.assert_array_equal(memory.valid.numpy()[:5, 0], [True, True, False, True, False])
    self.assertEqual(int(memory.cursor[0]), 4)  # The provisional row 4 holds 2.5.

  def test_forced_reset_keeps_the_provisional_row_once(self):
    memory = replay.ReplayMemory(rows=8, num_envs=2, observ_size=1)
    _append(memory, 0, envs=2)
    memory.close_open_rows(tf.constant([1]))
    memory.close_open_rows(tf.constant([1]))  # A second begin adds nothing.
    np.testing.assert_array_equal(memory.cursor.numpy(), [1, 2])
    _append(memory, 1, envs=2)
    np.testing.assert_array_equal(memory.observ.numpy()[:3, 1, 0], [0, 0.5, 1])
    np.testing.assert_array_equal(memory.valid.numpy()[:3, 1], [True, False, True])

  def test_wrap_around_overwrites_the_oldest_rows(self):
    memory = replay.ReplayMemory(rows=5, num_envs=1, observ_size=1)
    for step in range(7):
      _append(memory, step)
    # Rows hold steps 5, 6, 6.5 (provisional), 3, 4 after seven appends.
    np.testing.assert_array_equal(memory.observ.numpy()[:, 0, 0], [5, 6, 6.5, 3, 4])
    first, count = memory.start_rows(n_step=2)
    # Windows t..t+2 within the kept rows 3..7 (7 is the provisional one): t in 3..5.
    self.assertEqual((int(first[0]), int(count[0])), (3, 3))
    self.assertEqual(int(memory.size()), 5)

  def test_samples_stay_within_the_kept_rows_and_cover_them(self):
    memory = replay.ReplayMemory(rows=6, num_envs=3, observ_size=1, observ_dtype=tf.float16)
    for step in range(10):
      _append(memory, step, envs=3)
    generator = tf.random.Generator.from_seed(0)
    sample = memory.sample(generator, 3000, n_step=2)
    starts = sample['start'].numpy()
    # Rows 5..10 are kept (10 is the provisional one); a window t..t+2 fits for t in 5..8.
    self.assertEqual(set(starts.tolist()), {5, 6, 7, 8})
    self.assertEqual(set(sample['env'].numpy().tolist()), {0, 1, 2})
    self.assertTrue(np.all(sample['usable'].numpy()))
    # Rewards of a window are those of its consecutive steps.
    np.testing.assert_array_equal(sample['reward'].numpy(), np.stack([starts, starts + 1], 1))
    observ = memory.observations(sample['env'], sample['start'] + 2).numpy()[:, 0]
    # The provisional row 10 holds step 9's next observation (9.5 here).
    np.testing.assert_array_equal(observ, np.where(starts + 2 == 10, 9.5, starts + 2))
    self.assertEqual(memory.observ.dtype, tf.float16)

  def test_nothing_to_sample_before_a_window_is_written(self):
    memory = replay.ReplayMemory(rows=6, num_envs=1, observ_size=1)
    _append(memory, 0)
    sample = memory.sample(tf.random.Generator.from_seed(0), 4, n_step=3)
    self.assertFalse(np.any(sample['usable'].numpy()))


if __name__ == '__main__':
  unittest.main()
