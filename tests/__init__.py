"""Test suites, mirroring the `agents` package (`tests/batch/batch_env_test.py` tests
`agents/batch/batch_env.py`).

Test files end in `_test.py`. The `load_tests` hook below makes the plain
`python -m unittest discover` (whose default pattern is `test*.py`) find them.
"""

import os

# Several tests provoke errors inside the graph on purpose; TensorFlow's C++
# logging of them would bury the test output.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

_TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_tests(loader, standard_tests, pattern):
  del pattern  # Our files follow one naming rule, whatever the caller's default.
  here = os.path.dirname(os.path.abspath(__file__))
  standard_tests.addTests(loader.discover(here, pattern='*_test.py', top_level_dir=_TOP))
  return standard_tests
