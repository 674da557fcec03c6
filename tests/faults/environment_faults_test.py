"""An environment that fails during `train`: one message, the environment's own code, no
run folder left behind (issue 26, defect 2).

Both runs are `agents.scripts.train`'s `main` in this process (the environment,
`tests/helpers/failing_cartpole.py`, steps here or in worker processes).
"""

import os
import tempfile
import unittest

from agents.scripts import train as train_script
from tests.helpers import commands


class EnvironmentFaultsTest(unittest.TestCase):

  def setUp(self):
    self.logdir = os.path.join(tempfile.mkdtemp(), 'logdir')

  def train(self, fault, processes):
    """Runs the command on `FailingCartPole-v0` with the random agent (the failure is the
    environment's, whatever acts); returns (exit code, stderr)."""
    return commands.run_main(self, train_script.main, [
        '--config=cartpole', f'--logdir={self.logdir}', '--timestamp=t', '--quiet',
        '--num_agents=2', '--algorithm=random', '--set', 'environment.id=FailingCartPole-v0',
        '--set', 'environment.imports=[tests.helpers.failing_cartpole]',
        '--set', f'environment.kwargs={{fault: {fault}}}',
        '--set', f'environment.processes={str(processes).lower()}',
        '--set', 'loop.steps_per_call=4'])

  def test_a_nan_observation_is_one_message_and_leaves_no_run_folder(self):
    code, stderr = self.train('nan', processes=False)
    self.assertEqual(code, 1, stderr)
    self.assertNotIn('Traceback', stderr)
    self.assertRegex(stderr, r'agents.scripts.train: error: the environment failed '
                             r'during training\. Non-finite observation from '
                             r'environment \d')
    self.assertFalse(os.path.exists(os.path.join(self.logdir, 't-cartpole')))

  def test_a_worker_error_shows_the_environments_own_line(self):
    code, stderr = self.train('raise', processes=True)
    self.assertEqual(code, 1, stderr)
    self.assertIn('RuntimeError: the user environment broke', stderr)
    self.assertIn("raise RuntimeError('the user environment broke')", stderr)
    self.assertIn('failing_cartpole.py', stderr)
    # The fused step's TensorFlow frames are not shown; the worker's are.
    self.assertNotIn('simulate.py', stderr)
    self.assertFalse(os.path.exists(os.path.join(self.logdir, 't-cartpole')))


if __name__ == '__main__':
  unittest.main()
