"""Tests of the --agent flag of agents/scripts/train.py: it trains a Python agent with the
run directory of an in-graph run, resumes with --timestamp, and refuses bad input in one
line with exit 2 and nothing written."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import numpy as np

from agents import configs
from agents.python_agents import train_lib
from agents.scripts import train

AGENT = 'tests.helpers.ble_agents:CountingAgent'
# Two CartPole environments, 5-step episodes (too short to fall): an iteration is 10 steps.
TINY = ['--config', 'cartpole', '--num_agents', '2', '--set', 'environment.max_episode_steps=5',
        '--quiet']


def run(argv):
  """train.main(argv) -> (exit code, stdout, stderr)."""
  stdout, stderr = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
    try:
      code = train.main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stdout.getvalue(), stderr.getvalue()


def metric_rows(run_dir):
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    return [json.loads(line) for line in file]


class TrainAgentTest(unittest.TestCase):

  def test_trains_resumes_and_exports_in_the_in_graph_layout(self):
    logdir = tempfile.mkdtemp()
    code, stdout, stderr = run(['--logdir', logdir, '--timestamp', 'T', '--agent', AGENT,
                                '--set', 'loop.steps=20', '--set', 'agent.action=0', *TINY])
    self.assertEqual(code, 0, stderr)
    run_dir = os.path.join(logdir, 'T-cartpole')
    self.assertIn(f'Run finished at step 20 (iteration 1): {run_dir}', stdout)
    for name in ('config.yaml', 'run.yaml', 'metrics.jsonl', 'checkpoints', 'train', 'policy'):
      self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
    config = configs.yaml_io.read_yaml(os.path.join(run_dir, 'config.yaml'))
    self.assertEqual(config['agent'], {'name': AGENT, 'kwargs': {'action': 0}})
    self.assertNotIn('algorithm', config)
    self.assertEqual([(row['step'], row['iteration'], row['episodes'])
                      for row in metric_rows(run_dir)], [(10, 0, 2), (20, 1, 4)])
    self.assertEqual(metric_rows(run_dir)[0]['mean_length'], 5.0)
    # Resume: the saved config (agent included) and a larger budget; --agent may be left out.
    code, stdout, stderr = run(['--logdir', logdir, '--timestamp', 'T', '--set',
                                'loop.steps=40', *TINY])
    self.assertEqual(code, 0, stderr)
    self.assertIn('Run finished at step 40 (iteration 3)', stdout)
    self.assertEqual([row['iteration'] for row in metric_rows(run_dir)], [0, 1, 2, 3])
    records = train_lib.read_records(os.path.join(run_dir, 'checkpoints'))
    self.assertEqual(sorted(records), [0, 1, 2, 3])
    # Row 0's agent saw 4 episodes of 4 steps after their first action; export holds it.
    exported = np.load(os.path.join(run_dir, 'policy', 'counts.npy'))
    self.assertEqual(exported.tolist(), [4, 16])

  def test_batched_agents_and_create_agent_names(self):
    for agent in ('tests.helpers.ble_agents:BatchedCountingAgent', 'random'):
      logdir = tempfile.mkdtemp()
      code, stdout, stderr = run(['--logdir', logdir, '--timestamp', 'T', '--agent', agent,
                                  '--set', 'loop.steps=20', *TINY])
      self.assertEqual(code, 0, stderr)
      self.assertIn('Run finished at step', stdout)
      self.assertFalse(os.path.exists(os.path.join(logdir, 'T-cartpole', 'policy')))


class BadInputTest(unittest.TestCase):

  def assert_refused(self, argv, message, logdir=None):
    logdir = logdir or tempfile.mkdtemp()
    before = sorted(os.listdir(logdir))
    code, _, stderr = run(['--logdir', logdir, '--timestamp', 'T', *argv, *TINY])
    self.assertEqual(code, 2, stderr)
    self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
    self.assertRegex(stderr, message)
    return before, sorted(os.listdir(logdir))

  def test_bad_agents_are_one_line_exit_2_and_write_nothing(self):
    cases = (
        (['--agent', 'tests.helpers.no_such:Agent'], "cannot import 'tests.helpers.no"),
        (['--agent', 'tests.helpers.ble_agents:Missing'], "has no 'Missing'"),
        (['--agent', 'tests.helpers.ble_agents:NoStepAgent'], r'has no callable step\(\)'),
        (['--agent', 'tests.helpers.ble_agents:np'], 'is a module, not a class'),
        (['--agent', 'no_such_agent'], "unknown agent 'no_such_agent'"),
        (['--agent', AGENT, '--set', 'agent.speed=1'], "unexpected keyword argument 'speed'"),
        (['--agent', AGENT, '--set', 'algorithm.learning_rate=1'], 'has no algorithm section'),
        (['--agent', AGENT, '--algorithm', 'ppo'], 'not allowed with argument'),
        (['--agent', AGENT, '--set', 'loop.steps=0'], 'loop.steps'),
    )
    for argv, message in cases:
      with self.subTest(argv=argv):
        before, after = self.assert_refused(argv, message)
        self.assertEqual(before, after)

  def test_a_resumed_run_refuses_another_agent_or_kwargs(self):
    logdir = tempfile.mkdtemp()
    code, _, stderr = run(['--logdir', logdir, '--timestamp', 'T', '--agent', AGENT,
                           '--set', 'loop.steps=20', *TINY])
    self.assertEqual(code, 0, stderr)
    config_path = os.path.join(logdir, 'T-cartpole', 'config.yaml')
    with open(config_path, encoding='utf-8') as file:
      saved = file.read()
    self.assert_refused(['--agent', 'random'], "trained by agent '.*CountingAgent', not "
                        "'random'", logdir)
    self.assert_refused(['--set', 'agent.action=2'], 'agent.action', logdir)
    self.assert_refused(['--seed', '3'], 'seed = 0', logdir)
    with open(config_path, encoding='utf-8') as file:
      self.assertEqual(file.read(), saved)


if __name__ == '__main__':
  unittest.main()
