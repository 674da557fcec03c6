"""TensorFlow's start-up without what this package has no use for: Keras and the notices.

`install()` (run by `agents/__init__.py`, before anything here imports TensorFlow) puts
one meta path finder in front of the import system; it changes two things about
`import tensorflow`, and nothing else:

- Keras is not imported. `import tensorflow` ends by importing `keras.src.optimizers` so
  that Keras registers its optimizers for SavedModels. With Keras 3 installed
  (TensorFlow's wheel requires it) that loads all of Keras, and with it scikit-learn and
  matplotlib's pyplot: 2.2 s of the 4.9 s of CPU the import takes on a 2-core machine,
  paid by every command, fit and worker process. The finder makes that one import fail
  as TensorFlow allows (it catches the ImportError and goes on). `tf.keras` and
  `import keras` still load Keras when first used, its optimizers' registration included.
- Its start-up notices are dropped when `TF_CPP_MIN_LOG_LEVEL` asks for no INFO lines (1
  or more; every command sets 2 unless the user chose). TensorFlow's C++ libraries write
  them to the stderr descriptor during the import, whatever that variable says: absl's
  line about logging before its initialisation and oneDNN's note that it is on, each
  twice. Anything else written during the import is kept and shown after it.

`quiet_float16_start()` does the same for oneDNN's note at a process's first float16
operation (see `HALF_PRECISION_NOTICE`).

If TensorFlow was imported before this package, its import already ran and `install()`
does nothing.
"""

import contextlib
import os
import re
import sys
import tempfile

# The import TensorFlow's __init__ makes eagerly, through importlib.import_module.
_EAGER_IMPORTS = ('keras.src.optimizers', 'tf_keras.src.optimizers')
_TENSORFLOW_INIT = os.path.join('tensorflow', '__init__.py')
# The start-up notices (see the module's docstring): one line each.
START_UP_NOTICES = re.compile(r'All log messages before absl::InitializeLog\(\) is called'
                              r'|\] oneDNN custom operations are on\.')
# oneDNN's note, once per process at its first float16 operation on a CPU it has no
# float16 kernels for (it names AVX-512), that the operation falls back to Eigen's: an
# error line (`E0000 ... util.cc`) about nothing to change. The QR-DQN replay memory stores
# observations in float16 when asked (`algorithm.replay_dtype`).
HALF_PRECISION_NOTICE = re.compile(r'oneDNN supports DT_HALF only on platforms with AVX-512')


class _TensorFlowStart:
  """A meta path finder that imports TensorFlow with its notices held (when asked) and
  refuses Keras to TensorFlow's eager import (and only to it), then steps aside."""

  def find_spec(self, name, path=None, target=None):
    if name == 'tensorflow' and _notices_unwanted():
      return self._held_spec(name, path, target)
    if name in ('keras', 'tf_keras') and _eager_import_by_tensorflow():
      _remove(self)
      raise ImportError(f'{name} is imported when first used (agents.tensorflow_start)')
    return None  # Any other import: the usual finders.

  def _held_spec(self, name, path, target):
    """TensorFlow's own spec, whose loader runs the import with the notices held."""
    for finder in sys.meta_path:
      find_spec = None if finder is self else getattr(finder, 'find_spec', None)
      spec = find_spec(name, path, target) if find_spec else None
      if spec is not None:
        break
    else:
      return None
    exec_module = spec.loader.exec_module

    def exec_module_held(module):
      with held_start_up_notices():
        exec_module(module)

    spec.loader.exec_module = exec_module_held
    return spec


def _notices_unwanted():
  try:
    return int(os.environ.get('TF_CPP_MIN_LOG_LEVEL', '0')) >= 1
  except ValueError:
    return False


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


@contextlib.contextmanager
def captured_stderr_descriptor():
  """Captures what is written to file descriptor 2 inside the block (by C++ libraries, or
  by signal handlers with `os.write`: below `sys.stderr`); yields a list that then holds
  the text (an empty string if the process has no descriptor 2)."""
  captured = []
  sys.stderr.flush()
  with tempfile.TemporaryFile() as capture:
    try:
      saved = os.dup(2)
    except OSError:  # No stderr descriptor to capture.
      saved = None
    else:
      os.dup2(capture.fileno(), 2)
    try:
      yield captured
    finally:
      if saved is not None:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
      capture.seek(0)
      captured.append(capture.read().decode(errors='replace'))

@contextlib.contextmanager
def held_start_up_notices(notices=START_UP_NOTICES):
  """Holds what is written to the stderr descriptor inside the block, then writes it out
  without the lines that match `notices` (TensorFlow's start-up notices by default)."""
  captured = ['']
  try:
    with captured_stderr_descriptor() as captured:
      yield
  finally:
    lines = captured[0].splitlines(keepends=True)
    sys.stderr.write(''.join(line for line in lines if not notices.search(line)))
    sys.stderr.flush()


def quiet_float16_start():
  """Runs one float16 operation with oneDNN's note about it dropped (`HALF_PRECISION_NOTICE`)
  when `TF_CPP_MIN_LOG_LEVEL` asks for no INFO lines, as for the start-up notices. The note
  comes once per process: run before its first float16 operation, this takes the note
  with it; run later, it is one cast of one value."""
  if not _notices_unwanted():
    return
  import tensorflow as tf
  with held_start_up_notices(HALF_PRECISION_NOTICE):
    tf.cast(tf.zeros([1]), tf.float16)


def install():
  """Puts the finder in front, unless TensorFlow or Keras is imported already."""
  if 'tensorflow' in sys.modules or 'keras' in sys.modules:
    return
  if not any(isinstance(finder, _TensorFlowStart) for finder in sys.meta_path):
    sys.meta_path.insert(0, _TensorFlowStart())
