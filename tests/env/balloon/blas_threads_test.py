"""Tests for agents/env/balloon/wind/blas_threads.py."""

import unittest

import numpy as np

from agents.env.balloon.wind import blas_threads


class LimitBlasThreadsTest(unittest.TestCase):

  def test_none_is_a_no_op_and_products_are_unchanged(self):
    matrix = np.random.default_rng(0).normal(size=(64, 64))
    expected = matrix @ matrix
    with blas_threads.limit_blas_threads(None):
      np.testing.assert_array_equal(matrix @ matrix, expected)
    with blas_threads.limit_blas_threads(1):
      np.testing.assert_allclose(matrix @ matrix, expected, atol=1e-12)

  @unittest.skipIf(blas_threads.threadpoolctl is None, 'threadpoolctl is not installed')
  def test_limits_blas_to_one_thread_inside_and_restores_after(self):
    # The libraries loaded at the first use, numpy's BLAS among them. Any loaded later
    # (Numba loads scipy's BLAS when it first compiles, if scipy is installed) are not
    # controlled; the wind code calls only numpy's.
    controlled = blas_threads._threadpool_controller().select(user_api='blas').lib_controllers
    self.assertTrue(controlled)

    def threads():
      scan = blas_threads.threadpoolctl.ThreadpoolController().select(user_api='blas')
      paths = {pool.filepath for pool in controlled}
      return [pool.num_threads for pool in scan.lib_controllers if pool.filepath in paths]

    before = threads()
    with blas_threads.limit_blas_threads(1):
      self.assertEqual(threads(), [1] * len(controlled))
    self.assertEqual(threads(), before)


if __name__ == '__main__':
  unittest.main()
