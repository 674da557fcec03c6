"""`AttrDict`: a dictionary whose keys read as attributes, locked against writes by default.

BatchPPO's configs travel as `AttrDict`s: `config.learning_rate` reads a key, and a
missing key reads as None. Writing needs the `unlocked` context, so a typo in an
assignment cannot add a key silently:

    config = tools.AttrDict(learning_rate=1e-4)
    with config.unlocked:
      config.logdir = '/tmp/run'
"""

import contextlib


class AttrDict(dict):
  """A `dict` with attribute access; attribute writes only inside `with obj.unlocked:`."""

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    object.__setattr__(self, '_mutable', False)

  def __getattr__(self, key):
    if key.startswith('__'):  # Leaves Python's protocols (pickle, copy) their defaults.
      raise AttributeError(key)
    return self.get(key)

  def __setattr__(self, key, value):
    if key.startswith('__'):
      raise AttributeError(f"Cannot set the magic attribute '{key}'.")
    if not self._mutable:
      raise RuntimeError(f"Cannot set attribute '{key}': the AttrDict is locked; write it "
                         "inside 'with obj.unlocked:'.")
    self[key] = value

  @property
  @contextlib.contextmanager
  def unlocked(self):
    """A context in which attributes may be set."""
    object.__setattr__(self, '_mutable', True)
    try:
      yield self
    finally:
      object.__setattr__(self, '_mutable', False)

  def copy(self):
    """A shallow copy, itself a locked `AttrDict`."""
    return type(self)(self)
