"""Parts shared by the in-graph algorithms (BatchPPO's `agents/parts/`).

- `adam`: Adam over plain `tf.Variable`s, its state checkpointed with the network;
- `layers`: `Dense` and `MLP` with orthogonal initial weights, and
  `apply_over_leading_axes`.
"""
