"""Tests of agents/tools/transport/shared_block.py: the layout of a shared-memory block."""

import unittest
from multiprocessing import shared_memory

import gymnasium
import numpy as np

from agents.tools.transport import shared_block


class SharedBlockTest(unittest.TestCase):

  def test_fields_are_aligned_and_disjoint(self):
    observation_space = gymnasium.spaces.Box(0, 255, (5, 3), np.uint8)
    action_space = gymnasium.spaces.Discrete(4)
    layout, size = shared_block.shared_layout(3, observation_space, action_space)
    self.assertEqual(sorted(layout), ['actions', 'observ', 'reward', 'terminated', 'truncated'])
    self.assertEqual(layout['observ'][1:], ((3, 5, 3), '|u1'))
    self.assertEqual(layout['reward'][1:], ((3,), '<f8'))
    spans = sorted((offset, offset + int(np.prod(shape)) * np.dtype(dtype).itemsize)
                   for offset, shape, dtype in layout.values())
    for (_, end), (start, _) in zip(spans, spans[1:]):
      self.assertLessEqual(end, start)
    self.assertTrue(all(offset % 64 == 0 for offset, _, _ in layout.values()))
    self.assertGreaterEqual(size, spans[-1][1])

  def test_nested_spaces_keep_only_the_flags(self):
    space = gymnasium.spaces.Dict({'a': gymnasium.spaces.Discrete(2)})
    layout, _ = shared_block.shared_layout(2, space, space)
    self.assertEqual(sorted(layout), ['reward', 'terminated', 'truncated'])
    self.assertFalse(shared_block.supports_fast_step(layout))

  def test_slices_view_the_rows_of_the_whole(self):
    space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    layout, size = shared_block.shared_layout(5, space, space)
    memory = shared_memory.SharedMemory(create=True, size=size)
    try:
      whole = shared_block.views(memory.buf, layout)
      part = shared_block.views(memory.buf, shared_block.slice_layout(layout, 2, 3))
      part['observ'][...] = 7
      part['reward'][...] = 1.5
      np.testing.assert_array_equal(whole['observ'][:, 0], [0, 0, 7, 7, 7])
      np.testing.assert_array_equal(whole['reward'], [0, 0, 1.5, 1.5, 1.5])
      del whole, part
    finally:
      shared_block.release_memory(memory)
    shared_block.release_memory(memory)  # Released already: nothing happens.


if __name__ == '__main__':
  unittest.main()
