"""A write that fails for lack of space (simulated by a file-size limit in a child
process) leaves the previous checkpoint or results intact and says what failed."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

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


_TRAIN = textwrap.dedent('''
    from agents.scripts import train
    sys.exit(train.main(['--config=cartpole', '--logdir', sys.argv[2], '--timestamp=t',
                         '--quiet', '--num_agents=2', '--set', 'loop.steps=' + sys.argv[3],
                         '--set', 'network.policy_layers=[256, 256]',
                         '--set', 'network.value_layers=[256, 256]',
                         '--set', 'loop.checkpoint_every=512', '--set', 'loop.log_every=512']))
''')


class DiskFullTest(unittest.TestCase):

  def test_a_checkpoint_that_cannot_be_written_keeps_the_one_before(self):
    logdir = tempfile.mkdtemp()
    first = _run_limited(2**40, _TRAIN, logdir, '512')
    self.assertEqual(first.returncode, 0, first.stderr[-2000:])
    directory = os.path.join(logdir, 't-cartpole', 'checkpoints')
    before = sorted(os.listdir(directory))
    data = os.path.getsize(os.path.join(directory, 'ckpt-512.data-00000-of-00001'))
    # The next checkpoint is as large as the first: it cannot be written.
    second = _run_limited(data // 2, _TRAIN, logdir, '2048')
    self.assertEqual(second.returncode, 1, second.stderr[-2000:])
    self.assertNotIn('Traceback', second.stderr)
    self.assertIn('agents.scripts.train: error: Saving checkpoint ckpt-1024 into '
                  f'{directory} failed (File too large); the previous checkpoint ckpt-512 '
                  'is intact and a resume starts from it.', second.stderr)
    self.assertEqual(sorted(os.listdir(directory)), before)
    third = _run_limited(2**40, _TRAIN, logdir, '1024')
    self.assertEqual(third.returncode, 0, third.stderr[-2000:])
    self.assertIn('Restored', third.stderr + third.stdout)
    self.assertIn('ckpt-512 at global step 512', third.stderr + third.stdout)

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
