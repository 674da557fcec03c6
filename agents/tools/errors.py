"""Named errors of the environment tools, each saying which environment failed.

Callers catch these by type: a crashed worker (`WorkerDiedError`) may be
restarted, a worker's own exception (`WorkerError`) usually means a bug in the
environment, and `NonFiniteError` / `ActionError` point at bad data at the
boundary between the agent and the environment.
"""

from __future__ import annotations

from typing import Any


class WorkerError(RuntimeError):
  """An environment running in a worker process raised an exception.

  Attributes:
    index: Batch index of the first environment the worker hosts.
    num_envs: Number of environments the worker hosts (its slab size).
    remote_type: Name of the exception type raised in the worker.
    remote_traceback: The worker's formatted traceback, as text.
  """

  def __init__(self, message: str, index: int | None = None, num_envs: int = 1,
               remote_type: str | None = None, remote_traceback: str | None = None) -> None:
    self.index = index
    self.num_envs = num_envs
    self.remote_type = remote_type
    self.remote_traceback = remote_traceback
    text = f'{_describe(index, num_envs)}: {message}'
    if remote_traceback:
      text += '\n\nTraceback in the worker process:\n' + remote_traceback.rstrip()
    super().__init__(text)

  def __reduce__(self) -> tuple[Any, ...]:
    # The formatted message is not the first argument, so tell pickle how to rebuild.
    return (_rebuild, (type(self), self.__dict__, self.args))


class WorkerDiedError(WorkerError):
  """A worker process ended without being asked to (killed, segfault, os._exit).

  Attributes:
    exitcode: The process's exit code; negative numbers are signals (-9 is SIGKILL).
  """

  def __init__(self, message: str, index: int | None = None, num_envs: int = 1,
               exitcode: int | None = None) -> None:
    self.exitcode = exitcode
    super().__init__(f'{message} (exit code {exitcode})', index, num_envs)


class WorkerTimeoutError(WorkerDiedError):
  """A worker process did not answer within the allowed time, so it was killed.

  It derives from `WorkerDiedError` because the worker is gone afterwards and can be
  restarted like one that crashed.
  """


class ClusterLostError(WorkerError):
  """The Ray cluster's head (its GCS) stopped answering: no actor can be reached or
  restarted, so the run cannot go on (`agents.tools.ray_member`).

  Attributes:
    address: The head's GCS address.
    step: The run's step when it stopped, once the trainer has saved it (else None).
    checkpoint: The checkpoint the trainer saved then (else None).
  """

  def __init__(self, message: str, index: int | None = None, num_envs: int = 1,
               address: str | None = None) -> None:
    self.address = address
    self.step: int | None = None
    self.checkpoint: str | None = None
    super().__init__(message, index, num_envs)


class ClosedError(RuntimeError):
  """A request was made to an environment or batch that is already closed."""


class NonFiniteError(ValueError):
  """An observation or reward holds NaN or infinity.

  Attributes:
    field: Which value was not finite, e.g. 'observation' or 'reward'.
    index: Batch index of the environment, when known.
    step: Number of steps the environment had taken in its episode, when known.
  """

  def __init__(self, field: str, index: int | None = None, step: int | None = None,
               detail: str = '') -> None:
    self.field = field
    self.index = index
    self.step = step
    self.detail = detail
    where = 'environment' if index is None else f'environment {index}'
    when = '' if step is None else f' at episode step {step}'
    super().__init__(f'Non-finite {field} from {where}{when}{": " + detail if detail else ""}.')

  def __reduce__(self) -> tuple[Any, ...]:
    return (type(self), (self.field, self.index, self.step, self.detail))

  def with_index(self, index: int) -> NonFiniteError:
    """Returns a copy of this error that names the batch index of the environment."""
    return type(self)(self.field, index, self.step, self.detail)


class ActionError(ValueError):
  """An action does not fit the action space (shape, dtype or bounds).

  Attributes:
    index: Batch index of the environment the action was meant for, when known.
  """

  def __init__(self, message: str, index: int | None = None) -> None:
    self.index = index
    prefix = 'Actions' if index is None else f'Action for environment {index}'
    super().__init__(f'{prefix}: {message}')

  def __reduce__(self) -> tuple[Any, ...]:
    return (_rebuild, (type(self), self.__dict__, self.args))


class EpisodeEndedError(RuntimeError):
  """An environment was stepped after its episode ended (terminated or truncated) without a
  reset in between.

  A plain Gymnasium environment would go on stepping a finished episode silently, and a
  vector environment without autoreset fails with a bare assertion; the slab says this
  instead, in this process and in a worker alike. Environments that may step a finished
  episode (the balloon stays put) declare `steps_finished_episodes = True`.

  Attributes:
    positions: the positions of those environments within their slab.
  """

  def __init__(self, positions: Any, num_envs: int) -> None:
    self.positions = list(positions)
    where = (f'environment {self.positions[0]} of its slab' if num_envs > 1
             else 'the environment') if len(self.positions) == 1 else (
                 f'environments {self.positions} of their slab')
    super().__init__(f'{where[0].upper()}{where[1:]} stepped after its episode ended '
                     '(terminated or truncated) without a reset; reset it first '
                     '(BatchEnv.reset(indices)).')


class SpaceMismatchError(ValueError):
  """Environments combined into one batch disagree on their spaces."""


def name_environment(error: BaseException, start: int, size: int) -> BaseException:
  """Makes an in-process environment's error say which environments of a batch raised it.

  Args:
    error: The exception.
    start: Batch index of the first environment of the member that raised.
    size: Number of environments of that member.

  Returns:
    The error, with the index set (NonFiniteError of a single environment) or a note.
  """
  if isinstance(error, WorkerError) or getattr(error, '_environment_named', False):
    return error  # Already names its environments (an inner call named the exact one).
  if isinstance(error, NonFiniteError) and size == 1 and error.index is None:
    error = error.with_index(start)
  elif hasattr(error, 'add_note'):
    where = f'environment {start}' if size == 1 else f'environments {start}..{start + size - 1}'
    error.add_note(f'Raised by {where} of the batch.')
  try:
    error._environment_named = True  # type: ignore[attr-defined]  # a mark on any exception
  except AttributeError:  # An exception type with __slots__: a second note is harmless.
    pass
  return error


def _describe(index: int | None, num_envs: int) -> str:
  if index is None:
    return 'Worker'
  if num_envs == 1:
    return f'Environment {index}'
  return f'Environments {index}..{index + num_envs - 1} (one worker)'


def _rebuild(cls: type[BaseException], state: dict[str, Any],
             args: tuple[Any, ...]) -> BaseException:
  error = Exception.__new__(cls)
  error.args = args
  error.__dict__.update(state)
  return error
