"""An environment that fails during `train`: one message, the environment's own code, no
run folder left behind (issue 26, defect 2)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from tests.helpers import commands

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Registered by `environment.imports`; `nan` returns a NaN observation at step 3, `raise`
# raises in its own step there.
_ENVIRONMENT_MODULE = textwrap.dedent('''
    import gymnasium
    import numpy as np
    from gymnasium.envs.classic_control import cartpole

    class FailingCartPole(cartpole.CartPoleEnv):
      def __init__(self, fault='nan', **kwargs):
        super().__init__(**kwargs)
        self.fault, self.steps = fault, 0

      def step(self, action):
        observ, reward, terminated, truncated, info = super().step(action)
        self.steps += 1
        if self.steps == 3 and self.fault == 'nan':
          observ = np.full_like(observ, np.nan)
        if self.steps == 3 and self.fault == 'raise':
          raise RuntimeError('the user environment broke')
        return observ, reward, terminated, truncated, info

    gymnasium.register('FailingCartPole-v0', entry_point=FailingCartPole,
                       max_episode_steps=500)
''')


class EnvironmentFaultsTest(unittest.TestCase):

  def setUp(self):
    self.directory = tempfile.mkdtemp()
    with open(os.path.join(self.directory, 'failing_cartpole.py'), 'w') as file:
      file.write(_ENVIRONMENT_MODULE)
    self.logdir = os.path.join(self.directory, 'logdir')

  def flags(self, fault, processes):
    return ['--config=cartpole', f'--logdir={self.logdir}', '--timestamp=t', '--quiet',
            '--num_agents=2', '--set', 'environment.id=FailingCartPole-v0',
            '--set', 'environment.imports=[failing_cartpole]',
            '--set', f'environment.kwargs={{fault: {fault}}}',
            '--set', f'environment.processes={str(processes).lower()}',
            '--set', 'loop.steps_per_call=4']

  def train(self, fault, processes):
    command = [sys.executable, '-m', 'agents.scripts.train', *self.flags(fault, processes)]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([_REPOSITORY, self.directory]),
                       TF_CPP_MIN_LOG_LEVEL='3')
    return subprocess.run(command, cwd=self.directory, env=environment, capture_output=True,
                          text=True, timeout=300)

  def test_a_nan_observation_is_one_message_and_leaves_no_run_folder(self):
    # In this process: the environments step here too, and no subprocess start-up is paid.
    from agents.scripts import train as train_script
    sys.path.insert(0, self.directory)
    self.addCleanup(sys.path.remove, self.directory)
    self.addCleanup(sys.modules.pop, 'failing_cartpole', None)
    code, stderr = commands.run_main(self, train_script.main,
                                     self.flags('nan', processes=False))
    self.assertEqual(code, 1, stderr)
    self.assertNotIn('Traceback', stderr)
    self.assertRegex(stderr, r'agents.scripts.train: error: the environment failed '
                                        r'during training\. Non-finite observation from '
                                        r'environment \d')
    self.assertFalse(os.path.exists(os.path.join(self.logdir, 't-cartpole')))

  def test_a_worker_error_shows_the_environments_own_line(self):
    result = self.train('raise', processes=True)
    self.assertEqual(result.returncode, 1, result.stderr)
    self.assertIn('RuntimeError: the user environment broke', result.stderr)
    self.assertIn("raise RuntimeError('the user environment broke')", result.stderr)
    self.assertIn('failing_cartpole.py', result.stderr)
    # The fused step's TensorFlow frames are not shown; the worker's are.
    self.assertNotIn('simulate.py', result.stderr)
    self.assertFalse(os.path.exists(os.path.join(self.logdir, 't-cartpole')))


if __name__ == '__main__':
  unittest.main()
