"""A write that fails for lack of space (simulated by a file-size limit in a child
process) leaves the previous checkpoint or results intact and says what failed."""

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from agents.scripts import train as train_script

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_LIMITED = textwrap.dedent('''
    import resource, signal, sys
    # Writes past the limit fail with EFBIG, as on a full disk, instead of killing us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    sys.argv = sys.argv[1:]
    exec(compile(sys.argv[1], '<test>', 'exec'))
''')


def _run_limited(limit, code, *args):
  """Runs `code` in a child whose files may not grow beyond `limit` bytes."""
  return subprocess.run([sys.executable, '-c', _LIMITED, str(limit), code, *args],
                        capture_output=True, text=True, timeout=300,
                        env=dict(os.environ, PYTHONPATH=_REPOSITORY, TF_CPP_MIN_LOG_LEVEL='3'))


def _train_flags(logdir, steps):
  """`agents.scripts.train` flags of a CartPole run whose checkpoint (weights and Adam's
  slots) is about 1 MB; short updates, since what is trained does not matter here."""
  return ['--config=cartpole', '--logdir', logdir, '--timestamp=t', '--quiet',
          '--num_agents=2', '--set', f'loop.steps={steps}',
          '--set', 'network.policy_layers=[256, 256]', '--set', 'network.value_layers=[256, 256]',
          '--set', 'algorithm.segment_length=16', '--set', 'algorithm.num_minibatches=2',
          '--set', 'algorithm.update_epochs=1',
          '--set', 'loop.checkpoint_every=128', '--set', 'loop.log_every=128']


# The run in a child whose files may not grow: the flags come after the limit and the code.
_TRAIN = textwrap.dedent('''
    from agents.scripts import train
    sys.exit(train.main(sys.argv[2:]))
''')


def _train_here(test, logdir, steps):
  """Runs `agents.scripts.train` in this process (no limit); returns its exit code and the
  INFO lines the run logged."""
  # main() configures the root logger; undo it afterwards.
  root = logging.getLogger()
  test.addCleanup(setattr, root, 'handlers', root.handlers[:])
  test.addCleanup(root.setLevel, root.level)
  with test.assertLogs('agents', 'INFO') as logs, contextlib.redirect_stdout(io.StringIO()):
    code = train_script.main(_train_flags(logdir, steps))
  return code, logs.output


class DiskFullTest(unittest.TestCase):

  def test_a_checkpoint_that_cannot_be_written_keeps_the_one_before(self):
    logdir = tempfile.mkdtemp()
    # The runs before and after the full disk need no limit: they run in this process.
    self.assertEqual(_train_here(self, logdir, 128)[0], 0)
    directory = os.path.join(logdir, 't-cartpole', 'checkpoints')
    before = sorted(os.listdir(directory))
    data = os.path.getsize(os.path.join(directory, 'ckpt-128.data-00000-of-00001'))
    # The next checkpoint is as large as the first: it cannot be written.
    second = _run_limited(data // 2, _TRAIN, *_train_flags(logdir, 512))
    self.assertEqual(second.returncode, 1, second.stderr[-2000:])
    self.assertNotIn('Traceback', second.stderr)
    self.assertIn('agents.scripts.train: error: Saving checkpoint ckpt-256 into '
                  f'{directory} failed (File too large); the previous checkpoint ckpt-128 '
                  'is intact and a resume starts from it.', second.stderr)
    self.assertEqual(sorted(os.listdir(directory)), before)
    code, logged = _train_here(self, logdir, 256)
    self.assertEqual(code, 0, logged)
    self.assertIn('Restored', '\n'.join(logged))
    self.assertIn('ckpt-128 at global step 128', '\n'.join(logged))

  def test_results_that_cannot_be_written_keep_the_file_before(self):
    path = os.path.join(tempfile.mkdtemp(), 'results.json')
    with open(path, 'w') as file:
      json.dump({'results': [1, 2, 3]}, file)
    code = textwrap.dedent('''
        from agents.evaluation import errors, results
        try:
          results.write_json(sys.argv[2], {'results': list(range(100_000))})
        except errors.EvaluationError as error:
          print(error)
    ''')
    child = _run_limited(4096, code, path)
    self.assertIn(f'cannot write {path} (File too large); the previous one is intact.',
                  child.stdout, child.stderr[-2000:])
    with open(path) as file:
      self.assertEqual(json.load(file), {'results': [1, 2, 3]})
    self.assertEqual(os.listdir(os.path.dirname(path)), ['results.json'])


if __name__ == '__main__':
  unittest.main()
