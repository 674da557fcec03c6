"""TensorFlow imported after the package starts without Keras and, when TF_CPP_MIN_LOG_LEVEL
asks for no INFO lines, without its start-up notices; Keras still loads when used. A
float16 replay memory adds no oneDNN note either."""

import contextlib
import io
import os
import subprocess
import sys
import unittest

from tests.helpers.processes import ROOT

# Run in a fresh interpreter: this process imported TensorFlow long ago.
_PROBE = """
import sys
import agents
import tensorflow as tf
print('after tensorflow:', 'keras' in sys.modules)
assert not any(type(f).__name__ == '_TensorFlowStart' for f in sys.meta_path)
print('tf.keras:', tf.keras.optimizers.Adam.__module__)
import keras
print('after keras:', 'keras.src.optimizers' in sys.modules)
from agents.algorithms.qrdqn import replay
memory = replay.ReplayMemory(4, 2, 3, tf.float16)
memory.observ.assign(tf.cast(tf.ones([4, 2, 3]), tf.float16))
print('float16 replay:', float(tf.reduce_sum(tf.cast(memory.observ, tf.float32))))
"""


class TensorFlowStartTest(unittest.TestCase):

  def test_tensorflow_starts_without_keras_or_notices_and_tf_keras_still_loads_it(self):
    environ = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='2')
    process = subprocess.run([sys.executable, '-c', _PROBE], cwd=ROOT, env=environ,
                             capture_output=True, text=True, timeout=300, check=False)
    self.assertEqual(process.returncode, 0, process.stderr)
    self.assertEqual(process.stdout.splitlines(), [
        'after tensorflow: False', 'tf.keras: keras.src.optimizers.adam',
        'after keras: True', 'float16 replay: 24.0'])
    self.assertEqual(process.stderr, '')

  def test_other_lines_written_while_held_are_kept(self):
    from agents import tensorflow_start
    shown = io.StringIO()
    with contextlib.redirect_stderr(shown), tensorflow_start.held_start_up_notices():
      os.write(2, b'I0000 00:00:1.0 1 port.cc:153] oneDNN custom operations are on. Yes.\n'
                  b'the line to keep\n'
                  b'WARNING: All log messages before absl::InitializeLog() is called '
                  b'are written to STDERR\n')
    self.assertEqual(shown.getvalue(), 'the line to keep\n')

  def test_nothing_is_installed_when_tensorflow_came_first(self):
    from agents import tensorflow_start
    before = list(sys.meta_path)
    tensorflow_start.install()  # TensorFlow is imported in this process already
    self.assertEqual(sys.meta_path, before)


if __name__ == '__main__':
  unittest.main()
