"""Tests of agents/tools/batch_checks.py: both paths of the Discrete bounds check,
Box bounds in the dtype the actions arrive in, and the finite check's fallback."""

import unittest

import gymnasium
import numpy as np

from agents.tools import batch_checks, errors


class ActionCheckTest(unittest.TestCase):

  def test_discrete_bounds_small_and_large_batches_name_the_environment(self):
    space = gymnasium.spaces.Discrete(3, start=-1)
    for size in (4, batch_checks._SMALL_BATCH + 36):  # A list, then NumPy arrays.
      check = batch_checks.ActionCheck(space, size)
      good = np.resize(np.array([-1, 0, 1]), size)
      np.testing.assert_array_equal(check(good), good)
      self.assertEqual(check(good.astype(np.int32)).dtype, space.dtype)
      for value in (-2, 2):
        bad = good.copy()
        bad[size - 2] = value
        with self.assertRaises(errors.ActionError) as context:
          check(bad)
        self.assertEqual(context.exception.index, size - 2)
      with self.assertRaises(errors.ActionError):
        check(good.astype(np.float32))

  def test_box_bounds_compare_in_the_dtype_of_the_actions(self):
    space = gymnasium.spaces.Box(-0.1, 0.1, (2,), np.float64)
    check = batch_checks.ActionCheck(space, 2)
    clipped = np.clip(np.array([[1.0, -1.0], [0.0, 0.0]], np.float32), -0.1, 0.1)
    for _ in range(2):  # The second call uses the cached float32 bounds.
      result = check(clipped)
      self.assertEqual(result.dtype, np.float64)
      self.assertTrue(all(space.contains(row) for row in result))
    with self.assertRaises(errors.ActionError) as context:
      check(np.array([[0.0, 0.0], [0.0, 0.2]]))
    self.assertEqual(context.exception.index, 1)
    self.assertIn('upper bound', str(context.exception))


class CheckFiniteTest(unittest.TestCase):

  def test_overflowing_sum_of_squares_is_finite_and_nan_is_named(self):
    observ = np.full((2, 3), 3e38, np.float32)  # Squares overflow float32; values do not.
    batch_checks.check_finite(observ, np.ones(2, np.float32))
    batch_checks.check_finite(observ.T[:2], None)  # Not contiguous.
    batch_checks.check_finite(np.zeros((2, 3), np.uint8), None)
    observ[1, 2] = np.nan
    with self.assertRaises(errors.NonFiniteError) as context:
      batch_checks.check_finite(observ, np.ones(2, np.float32))
    self.assertEqual(context.exception.index, 1)
    with self.assertRaises(errors.NonFiniteError) as context:
      batch_checks.check_finite(np.zeros((2, 3)), np.array([0.0, np.inf]))
    self.assertIn('reward', str(context.exception))


if __name__ == '__main__':
  unittest.main()
