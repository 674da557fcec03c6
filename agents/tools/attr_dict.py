"""A dictionary whose keys are also attributes, locked against changes by default.

Configs and hyperparameters travel through the code as `AttrDict`s: reading
`config.learning_rate` is shorter than `config['learning_rate']`, and because
the dict is locked, a typo such as `config.learnig_rate = 1e-4` raises instead
of silently adding a new key. Unlock it explicitly for a deliberate change:

    with config.unlocked():
      config.learning_rate = 1e-4
"""

import contextlib


class LockedError(AttributeError):
  """A locked `AttrDict` was about to be changed."""


class AttrDict(dict):
  """Dictionary with attribute access that refuses changes while locked."""

  def __init__(self, *args, **kwargs):
    unlocked = kwargs.pop('_unlocked', False)
    super().__init__(*args, **kwargs)
    object.__setattr__(self, '_locked', not unlocked)

  def __getattr__(self, name):
    try:
      return self[name]
    except KeyError:
      raise AttributeError(
          f"AttrDict has no key {name!r}; keys are {sorted(self.keys())}.") from None

  def __setattr__(self, name, value):
    self[name] = value

  def __delattr__(self, name):
    del self[name]

  def __setitem__(self, key, value):
    self._check_unlocked(f'set {key!r}')
    super().__setitem__(key, value)

  def __delitem__(self, key):
    self._check_unlocked(f'delete {key!r}')
    super().__delitem__(key)

  def update(self, *args, **kwargs):
    self._check_unlocked('update')
    super().update(*args, **kwargs)

  def setdefault(self, key, default=None):
    if key not in self:
      self._check_unlocked(f'set {key!r}')
    return super().setdefault(key, default)

  def pop(self, *args):
    self._check_unlocked('pop')
    return super().pop(*args)

  def popitem(self):
    self._check_unlocked('popitem')
    return super().popitem()

  def clear(self):
    self._check_unlocked('clear')
    super().clear()

  @property
  def locked(self):
    """Whether changes are refused."""
    return self._locked

  def lock(self):
    """Refuses changes from now on."""
    object.__setattr__(self, '_locked', True)

  def unlock(self):
    """Allows changes from now on."""
    object.__setattr__(self, '_locked', False)

  @contextlib.contextmanager
  def unlocked(self):
    """Allows changes inside a `with` block, restoring the previous state afterwards."""
    was_locked = self._locked
    self.unlock()
    try:
      yield self
    finally:
      if was_locked:
        self.lock()

  def copy(self, **overrides):
    """Returns a shallow copy with the same lock state, optionally with changed keys."""
    result = AttrDict(self, _unlocked=True)
    result.update(overrides)
    if self._locked:
      result.lock()
    return result

  def __reduce__(self):
    return (_rebuild, (dict(self), self._locked))

  def __repr__(self):
    return f'AttrDict({dict.__repr__(self)})'

  def _check_unlocked(self, what):
    if self._locked:
      raise LockedError(f'Cannot {what}: the AttrDict is locked; use `with d.unlocked():`.')


def _rebuild(items, locked):
  result = AttrDict(items, _unlocked=True)
  if locked:
    result.lock()
  return result
