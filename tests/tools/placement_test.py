"""Tests of agents/tools/placement.py: where `environment.processes: auto` steps a batch.

The probe's timing is kept far from the crossover on both sides (a step that does
nothing, a step that sleeps milliseconds), so a loaded machine cannot flip a decision.
"""

import dataclasses
import time
import unittest

import gymnasium
import numpy as np

from agents.tools import placement


class _Env(gymnasium.Env):
  """Steps in `sleep_seconds`; counts the steps it took."""

  def __init__(self, sleep_seconds=0.0):
    self.observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    self.action_space = gymnasium.spaces.Discrete(2)
    self.sleep_seconds = sleep_seconds
    self.steps = 0
    self.closed = False

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    return np.zeros(2, np.float32), {}

  def step(self, action):
    self.steps += 1
    if self.sleep_seconds:
      time.sleep(self.sleep_seconds)
    return np.zeros(2, np.float32), 0.0, False, self.steps % 7 == 0, {}

  def close(self):
    self.closed = True


def _refuse():
  raise AssertionError('the environment should not be built')


class PlacementTest(unittest.TestCase):

  def test_auto_steps_a_cheap_environment_here(self):
    envs = []
    decision = placement.decide('auto', lambda: envs.append(_Env()) or envs[-1], 8, 2)
    self.assertFalse(decision.processes)
    self.assertEqual((decision.rule, decision.workers, decision.num_envs), ('auto', 2, 8))
    self.assertLess(decision.step_seconds, placement.HOP_SECONDS)
    self.assertTrue(envs[0].closed)
    self.assertIn('in this process (environment.processes = auto: one step takes',
                  decision.describe())

  def test_auto_takes_processes_for_a_costly_environment(self):
    # 2 ms a step: workers save 4 x 2 ms a batch step, forty times the hop.
    envs = []
    decision = placement.decide('auto', lambda: envs.append(_Env(2e-3)) or envs[-1], 8, 2)
    self.assertTrue(decision.processes)
    self.assertGreaterEqual(decision.step_seconds, 2e-3)
    # The time budget ends the probe early: far fewer than PROBE_STEPS steps.
    self.assertLess(envs[0].steps, placement.PROBE_STEPS)
    self.assertIn('in 2 worker processes', decision.describe())
    self.assertEqual(decision.as_record()['processes'], True)
    self.assertIn('step_us', decision.as_record())

  def test_one_core_or_one_environment_needs_no_probe(self):
    for num_envs, workers, cores in ((8, 1, None), (1, 2, None), (8, 4, 1)):
      decision = placement.decide('auto', _refuse, num_envs, workers, cores)
      self.assertFalse(decision.processes)
      self.assertIsNone(decision.step_seconds)
      self.assertIn('nothing to step in parallel', decision.describe())

  def test_true_and_false_are_taken_as_they_are(self):
    for processes in (True, False):
      decision = placement.decide(processes, _refuse, 8, 2)
      self.assertEqual((decision.processes, decision.rule), (processes, 'config'))
      self.assertEqual(decision.as_record(),
                       {'processes': processes, 'rule': 'config', 'workers': 2})
    with self.assertRaisesRegex(ValueError, "true, false, 'auto' or 'ray', got 'sometimes'"):
      placement.decide('sometimes', _refuse, 8, 2)

  def test_ray_is_taken_as_it_is_and_records_the_nodes(self):
    decision = placement.decide('ray', _refuse, 8, 4, cores=2)
    self.assertEqual((decision.processes, decision.rule, decision.parallel), ('ray', 'config', 4))
    decision = dataclasses.replace(decision, nodes=('10.0.0.1', '10.0.0.2', '10.0.0.1',
                                                    '10.0.0.2'))
    self.assertEqual(decision.as_record()['nodes'], list(decision.nodes))
    self.assertEqual(decision.describe(), 'in 4 Ray actors (2 on 10.0.0.1, 2 on 10.0.0.2) '
                     '(environment.processes = ray)')

  def test_auto_never_picks_ray(self):
    # A slow environment on many cores: auto takes processes, never Ray.
    decision = placement.decide('auto', lambda: _Env(0.003), 64, 8, cores=8)
    self.assertIs(decision.processes, True)

  def test_the_rule_weighs_the_work_workers_save_against_the_hop(self):
    hop = placement.HOP_SECONDS
    # 8 environments in 2 workers save 4 steps a batch step.
    self.assertFalse(placement.pays_off(hop / 4, 8, 2))
    self.assertTrue(placement.pays_off(hop / 4 * 1.01, 8, 2))
    # More environments per batch lower the crossover.
    self.assertTrue(placement.pays_off(hop / 4, 64, 2))
    self.assertFalse(placement.pays_off(1.0, 8, 1))


if __name__ == '__main__':
  unittest.main()
