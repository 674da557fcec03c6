"""TensorFlow's start-up without its eager import of Keras.

`import tensorflow` ends by importing `keras.src.optimizers` so that Keras registers its
optimizers for SavedModels. With Keras 3 installed (TensorFlow's wheel requires it) that
loads all of Keras, and with it scikit-learn and matplotlib's pyplot: 2.2 s of the 4.9 s
of CPU the import takes on a 2-core machine, paid by every command, fit and worker
process that imports TensorFlow. This package uses no Keras.

`install()` (run by `agents/__init__.py`, before anything here imports TensorFlow) makes
that one import fail as TensorFlow allows: it catches the ImportError and goes on. Keras
itself stays available: `tf.keras` and `import keras` load it when first used, its
optimizers' registration included. Nothing else is changed; if TensorFlow was imported
before this package, its import already ran and this does nothing.
"""

import os
import sys

# The import TensorFlow's __init__ makes eagerly, through importlib.import_module.
_EAGER_IMPORTS = ('keras.src.optimizers', 'tf_keras.src.optimizers')
_TENSORFLOW_INIT = os.path.join('tensorflow', '__init__.py')


class _KerasDeferral:
  """A meta path finder that refuses Keras to TensorFlow's eager import (and only to it),
  then steps aside."""

  def find_spec(self, name, path=None, target=None):  # pylint: disable=unused-argument
    if name in ('keras', 'tf_keras') and _eager_import_by_tensorflow():
      _remove(self)
      raise ImportError(f'{name} is imported when first used (agents.keras_deferral)')
    return None  # Any other import: the usual finders.


def _eager_import_by_tensorflow():
  """Whether TensorFlow's __init__ is importing Keras's optimizers right now."""
  frame = sys._getframe(1)  # pylint: disable=protected-access
  while frame is not None:
    caller = frame.f_back
    if (frame.f_code.co_name == 'import_module' and caller is not None
        and frame.f_locals.get('name') in _EAGER_IMPORTS
        and caller.f_code.co_filename.endswith(_TENSORFLOW_INIT)):
      return True
    frame = caller
  return False


def _remove(finder):
  if finder in sys.meta_path:
    sys.meta_path.remove(finder)


def install():
  """Defers Keras past TensorFlow's import, unless TensorFlow or Keras is imported already."""
  if 'tensorflow' in sys.modules or 'keras' in sys.modules:
    return
  if not any(isinstance(finder, _KerasDeferral) for finder in sys.meta_path):
    sys.meta_path.insert(0, _KerasDeferral())
