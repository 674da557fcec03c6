"""The error of bad evaluation input: an unknown agent or suite, a shard out of range, ..."""


class EvaluationError(ValueError):
  """Bad input to an evaluation; the message names the culprit in one line.

  The command line prints it as one line and exits with code 2.
  """
