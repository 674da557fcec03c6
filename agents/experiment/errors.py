"""The experiment package's error for bad arguments, shared by the manager and its helpers."""


class ExperimentError(ValueError):
  """An experiment's arguments are invalid or do not match the experiment on disk."""
