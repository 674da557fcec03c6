"""Progress bars of running fits, fed by tailing each fit's `metrics.jsonl`.

The fits run in other processes (or on Ray workers sharing the file system);
the rows they log are the only progress report they need to send. One tqdm bar
per fit and one for the total show steps, with each fit's last mean score.
"""

import os

import tqdm

from agents.run import metrics_writer


class _Tail:
  """Reads the complete lines appended to a file since the last read."""

  def __init__(self, path):
    self._path = path
    self._offset = 0

  def new_rows(self):
    """Returns the JSON rows completed since the previous call (none if no file yet)."""
    try:
      with open(self._path, 'rb') as file:
        size = os.fstat(file.fileno()).st_size
        if size < self._offset:  # A resumed run truncated the file to its checkpoint.
          self._offset = 0
        file.seek(self._offset)
        data = file.read()
    except FileNotFoundError:
      return []
    end = data.rfind(b'\n') + 1  # A line still being written waits for the next call.
    self._offset += end
    return metrics_writer.parse_rows(data[:end].splitlines())


class FitProgress:
  """Per-fit and total progress bars for fits writing `metrics.jsonl` in their run dirs."""

  def __init__(self, fits, budget, quiet=False):
    """Creates the bars.

    Args:
      fits: list of (index, run_dir) of the fits to follow.
      budget: training steps each fit runs to.
      quiet: show nothing, bars or lines (the counts are still kept; a failed fit is
        still logged by the manager).
    """
    self._budget = budget
    self._quiet = quiet
    self._tails = {index: _Tail(os.path.join(run_dir, 'metrics.jsonl')) for index, run_dir in fits}
    self.steps = {index: 0 for index, _ in fits}
    self.scores = {index: None for index, _ in fits}
    self._total = tqdm.tqdm(total=budget * len(fits), desc='total', unit='step', position=0,
                            dynamic_ncols=True, disable=quiet, leave=True)
    self._bars = {
        index: tqdm.tqdm(total=budget, desc=f'fit {index}', unit='step', position=number + 1,
                         dynamic_ncols=True, disable=quiet, leave=False)
        for number, (index, _) in enumerate(fits)}
    self.poll()

  def poll(self):
    """Reads new rows of every fit and updates the bars."""
    for index, tail in self._tails.items():
      for row in tail.new_rows():
        if row.get('phase') != 'train' or not isinstance(row.get('step'), (int, float)):
          continue
        self.steps[index] = min(int(row['step']), self._budget)
        if row.get('mean_score') is not None:
          self.scores[index] = row['mean_score']
      bar = self._bars[index]
      bar.update(self.steps[index] - bar.n)
      if self.scores[index] is not None:
        bar.set_postfix(score=f'{self.scores[index]:.1f}', refresh=False)
    self._total.update(sum(self.steps.values()) - self._total.n)

  def finish(self, index, step):
    """Marks a fit as stopped at `step` (its last rows may predate the end)."""
    self.poll()
    self.steps[index] = min(int(step), self._budget)
    self._bars[index].update(self.steps[index] - self._bars[index].n)
    self._total.update(sum(self.steps.values()) - self._total.n)

  def write(self, message):
    """Prints a line above the bars, unless quiet."""
    if not self._quiet:
      self._total.write(message)

  def close(self):
    """Closes every bar."""
    for bar in self._bars.values():
      bar.close()
    self._total.close()
