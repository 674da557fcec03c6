"""Holds BLAS to few threads around the wind code's many small matrix products.

The wind generator (wind_forecast.py) and the GP (wind_gp.py) multiply many
small matrices (10 x 10 to 181 x 120 per balloon). A threaded BLAS spends more
waking and waiting for its threads than it gains on such sizes, and on a busy
2-core machine OpenBLAS's default of 2 threads made the GP's predict 6.5x and
field generation 10x slower than one thread. `limit_blas_threads(1)` fixes the
count for the duration of a call, whatever OPENBLAS_NUM_THREADS says, using
`threadpoolctl` when it is installed (without it this is a no-op; then set
OPENBLAS_NUM_THREADS=1 in the environment). It controls the libraries loaded at
its first use, numpy's BLAS among them; one loaded later (Numba loads scipy's BLAS
when it first compiles, if scipy is installed) is left alone, as the wind code
never calls it.
"""

import contextlib
import functools

try:
  import threadpoolctl
except ImportError:  # Optional: without it BLAS keeps its own thread count.
  threadpoolctl = None


def limit_blas_threads(limit):
  """Context manager holding BLAS to `limit` threads; a no-op for None or without threadpoolctl.

  Costs about 10 microseconds per use, so wrap whole slab-level calls, not
  per-balloon work.
  """
  if limit is None or threadpoolctl is None:
    return contextlib.nullcontext()
  return _threadpool_controller().limit(limits=limit, user_api='blas')


@functools.cache
def _threadpool_controller():
  # Scanning the loaded libraries takes about a millisecond, so it is done once.
  return threadpoolctl.ThreadpoolController()
