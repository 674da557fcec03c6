"""Test suites, mirroring the `agents` package (`tests/tools/batch_env_test.py` tests
`agents/tools/batch_env.py`).

Test files end in `_test.py`. The `load_tests` hook below makes the plain
`python -m unittest discover` (whose default pattern is `test*.py`) find them.
"""

import os

# Several tests provoke errors inside the graph on purpose; TensorFlow's C++
# logging of them would bury the test output.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
# One OpenBLAS thread (set before numpy loads; child processes inherit it): the tests'
# matrices are small, and on a busy 2-core machine a second OpenBLAS thread spins: the
# 16 QR decompositions of a 7 x 600 network's orthogonal initialisation took 16 s of CPU
# with two threads against 0.45 s with one (measured under load, nice 19).
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

# The package first, so that TensorFlow, wherever a test imports it, starts without its
# eager import of Keras and its start-up notices (agents/tensorflow_start.py).
import agents  # noqa: E402,F401 -- imported for that side effect

_TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_tests(loader, standard_tests, pattern):
  del pattern  # Our files follow one naming rule, whatever the caller's default.
  here = os.path.dirname(os.path.abspath(__file__))
  standard_tests.addTests(loader.discover(here, pattern='*_test.py', top_level_dir=_TOP))
  return standard_tests
