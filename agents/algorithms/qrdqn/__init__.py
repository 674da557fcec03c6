"""QR-DQN: distributional, off-policy, value-based; see `qrdqn.py`."""
