"""The command lines: train, evaluate, experiment, export, visualize (`python -m agents.scripts.X`).

Importing any of them sets `TF_CPP_MIN_LOG_LEVEL=2` unless it is set: a command shows
TensorFlow's errors as its own one-line messages, not TensorFlow's C++ INFO and WARNING
logging, and then TensorFlow starts without its start-up notices too
(`agents/tensorflow_start.py`). Set the variable to 0 to see everything.
"""

import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
