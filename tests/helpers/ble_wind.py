"""For tests that fly BLE's generative wind (the balloon's default) as written: they need the
decoder's weights (`python -m agents.env.balloon.ble_models fetch`) and skip without them, so
the suite never reaches for the network."""

import unittest

from agents.env.balloon import ble_models

HAVE_WEIGHTS = ble_models.find(ble_models.OFFLINESKIES22) is not None
needs_weights = unittest.skipUnless(
    HAVE_WEIGHTS, "flies BLE's generative wind (the default) as written, and BLE's decoder "
    f'weights are not on this machine (`{ble_models.FETCH_COMMAND}`)')
