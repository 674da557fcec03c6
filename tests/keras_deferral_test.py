"""TensorFlow imported after the package starts without Keras; Keras still loads when used."""

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
assert not any(type(f).__name__ == '_KerasDeferral' for f in sys.meta_path)
print('tf.keras:', tf.keras.optimizers.Adam.__module__)
import keras
print('after keras:', 'keras.src.optimizers' in sys.modules)
"""


class KerasDeferralTest(unittest.TestCase):

  def test_tensorflow_starts_without_keras_and_tf_keras_still_loads_it(self):
    environ = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='3')
    process = subprocess.run([sys.executable, '-c', _PROBE], cwd=ROOT, env=environ,
                             capture_output=True, text=True, timeout=300, check=False)
    self.assertEqual(process.returncode, 0, process.stderr)
    self.assertEqual(process.stdout.splitlines(), [
        'after tensorflow: False', 'tf.keras: keras.src.optimizers.adam',
        'after keras: True'])

  def test_nothing_is_deferred_when_tensorflow_came_first(self):
    from agents import keras_deferral
    before = list(sys.meta_path)
    keras_deferral.install()  # TensorFlow is imported in this process already
    self.assertEqual(sys.meta_path, before)


if __name__ == '__main__':
  unittest.main()
