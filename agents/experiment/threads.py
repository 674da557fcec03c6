"""Thread limits of a fit's worker process, set before TensorFlow or NumPy start their pools.

N fits on C cores share them only if each fit keeps to about C / N threads:
BLAS, OpenMP, Numba and TensorFlow each start one thread per core by default,
and N such processes oversubscribe the machine. The limits are environment
variables, read once when each library starts, so `apply` must run before the
worker imports TensorFlow or NumPy's BLAS does its first call.
"""

import os

# Variables read by OpenMP, the BLAS libraries, NumExpr, Numba and TensorFlow.
_THREAD_VARIABLES = (
    'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'BLIS_NUM_THREADS',
    'VECLIB_MAXIMUM_THREADS', 'NUMEXPR_NUM_THREADS', 'NUMBA_NUM_THREADS',
    'TF_NUM_INTRAOP_THREADS', 'TF_NUM_INTEROP_THREADS')


def threads_per_fit(max_workers, cpus=None):
  """Threads each of `max_workers` concurrent fits may use on `cpus` cores (at least 1)."""
  cpus = cpus or os.cpu_count() or 1
  return max(1, cpus // max(1, max_workers))


def environment(threads):
  """The environment variables that limit every library to `threads` threads.

  Args:
    threads: threads per library, at least 1.

  Returns:
    Dict of variable names to string values; also quiets TensorFlow's C++
    INFO lines.
  """
  if threads < 1:
    raise ValueError(f'threads must be at least 1, got {threads}.')
  variables = {name: str(threads) for name in _THREAD_VARIABLES}
  variables['TF_CPP_MIN_LOG_LEVEL'] = '2'
  return variables


def apply(threads):
  """Sets the limits in this process's environment (call before importing TensorFlow)."""
  os.environ.update(environment(threads))
