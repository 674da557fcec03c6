"""Imported by the forkserver of the balloon's worker processes, before it forks the first
(the balloon's plug-in names it in `worker_preloads`).

It runs `precompile.precompile()`, which loads every Numba kernel of the balloon from its
on-disk cache (compiling what is not cached yet), so that each worker forked afterwards
starts with the kernels loaded instead of loading them at its first reset: about half a
second of CPU per worker. The kernels start no thread, so forking after them is safe.
When BLE's decoder weights are on the machine it also reads them (26 MB), so the workers
share one copy instead of each reading its own at its first reset; it never fetches them.

Best effort: if it fails, the workers load the kernels themselves, as they would without
it, and report what goes wrong there.
"""

import contextlib

from agents.env.balloon import ble_models, precompile

with contextlib.suppress(Exception):
  precompile.precompile()

with contextlib.suppress(Exception):
  _weights = ble_models.find(ble_models.OFFLINESKIES22)
  if _weights is not None:
    from agents.env.balloon.wind import generative
    generative.Decoder.load(_weights)
