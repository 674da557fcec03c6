"""rlberry's `read_writer_data` and `evaluate_agents`: the managers' logs and evaluations as tables.

    from agents.experiment import evaluate_agents, read_writer_data

    data = read_writer_data([manager_a, manager_b], tag='episode_rewards')
    data = read_writer_data('experiments')   # the latest manager of each agent name saved there
    scores = evaluate_agents([manager_a, manager_b], n_simulations=10, show=False)

A data source is rlberry's: a manager, a list of managers, the `output_dir` that managers
were saved in (the latest manager of each agent name is read), or a list of manager
folders (`manager.output_dir_`). A folder is read from its `experiment.yaml` and its fits'
`writer_data.csv`: plain files, nothing unpickled (docs/trust.md).
"""

import logging
import os
import pathlib

import numpy as np
import pandas as pd

from agents.experiment import manifest, writer_data

_LOG = logging.getLogger(__name__)


def _is_manager(value):
  return callable(getattr(value, 'get_writer_data', None)) and hasattr(value, 'agent_name')


def _fits_of_folder(folder):
  """(name, {fit index: DataFrame}) of a saved manager's folder."""
  data = manifest.read(folder)
  fits = [(fit['index'], os.path.join(folder, fit['run_dir'])) for fit in data['fits']]
  frame = writer_data.read_writer_rows(data['name'], fits)
  return data['name'], _by_fit(frame)


def _by_fit(frame):
  columns = list(writer_data.WRITER_COLUMNS[:-1])
  return {int(index): rows[columns].reset_index(drop=True)
          for index, rows in frame.groupby('n_simu', sort=True)}


def _latest_folders(root):
  """The folder of the latest manager of each agent name under `<root>/manager_data`."""
  base = pathlib.Path(root) / 'manager_data'
  if not base.is_dir():
    raise ValueError(f'{root} holds no manager_data folder: give the output_dir the managers '
                     'were saved in, or a list of manager folders.')
  latest = {}
  for folder in sorted(base.iterdir()):
    if not manifest.exists(folder):
      continue
    data = manifest.read(folder)
    key = (data.get('timestamp_id') or '', folder.stat().st_mtime)
    if data['name'] not in latest or key > latest[data['name']][0]:
      latest[data['name']] = (key, folder)
  if not latest:
    raise ValueError(f'{base} holds no saved manager (no experiment.yaml in its folders).')
  return [folder for _, folder in latest.values()]


def writer_data_sources(data_source):
  """[(agent name, {fit index: DataFrame})] of an rlberry data source (see the module)."""
  if _is_manager(data_source) or isinstance(data_source, (str, os.PathLike)):
    data_source = [data_source]
  data_source = list(data_source)
  if not data_source:
    raise ValueError('data_source is empty: give managers or folders.')
  sources = []
  for item in data_source:
    if _is_manager(item):
      frames = item.get_writer_data()
      if isinstance(frames, pd.DataFrame):  # A config's experiment: one long table.
        frames = _config_frames(frames)
      sources.append((item.agent_name, frames))
    elif isinstance(item, (str, os.PathLike)):
      if manifest.exists(item):
        sources.append(_fits_of_folder(item))
      elif len(data_source) == 1:
        sources.extend(_fits_of_folder(folder) for folder in _latest_folders(item))
      else:
        raise ValueError(f'{item} is not a saved manager folder (no experiment.yaml).')
    else:
      raise TypeError(f'data_source: {item!r} is neither a manager nor a folder.')
  return sources


def _config_frames(frame):
  """A config experiment's `name, fit, step, phase, tag, value` rows in rlberry's columns
  (a tag of another phase than 'train' is named `<phase>/<tag>`)."""
  if 'n_simu' in frame.columns:
    return _by_fit(frame)
  tags = np.where(frame['phase'] == 'train', frame['tag'], frame['phase'] + '/' + frame['tag'])
  converted = pd.DataFrame(dict(name=frame['name'], tag=tags, value=frame['value'],
                                dw_time_elapsed=np.nan, global_step=frame['step'],
                                n_simu=frame['fit']))
  return _by_fit(converted)


def read_writer_data(data_source, tag=None, preprocess_func=None, id_agent=None):
  """What the agents' writers logged, as one DataFrame (rlberry's `read_writer_data`).

  Args:
    data_source: a manager, a list of managers, the `output_dir` managers were saved in
      (the latest manager of each agent name), or a list of manager folders.
    tag: a tag or a list of tags to keep (None: all).
    preprocess_func: a function of a fit's values of the tag (e.g. `np.cumsum`), or one
      per tag when `tag` is a list; None leaves them.
    id_agent: keep only this fit's rows (None: every fit).

  Returns:
    DataFrame with columns `name, tag, value, dw_time_elapsed, global_step, n_simu`.

  Raises:
    ValueError: a folder holds no saved manager, or `preprocess_func` does not match `tag`.
  """
  tags = [tag] if isinstance(tag, str) else (list(tag) if tag is not None else None)
  if isinstance(preprocess_func, (list, tuple)):
    if tags is None or len(preprocess_func) != len(tags):
      raise ValueError('preprocess_func: give one function per tag of the tag list.')
    functions = list(preprocess_func)
  else:
    functions = None
  parts = []
  for name, frames in writer_data_sources(data_source):
    for index, frame in frames.items():
      if id_agent is not None and int(index) != int(id_agent):
        continue
      for number, one_tag in enumerate(tags if tags is not None else frame['tag'].unique()):
        rows = frame[frame['tag'] == one_tag].copy()
        function = functions[number] if functions else preprocess_func
        if function is not None and len(rows):
          rows['value'] = function(rows['value'].to_numpy())
        parts.append(rows.assign(name=name, n_simu=int(index)))
  if not parts:
    return pd.DataFrame(columns=list(writer_data.WRITER_COLUMNS))
  return pd.concat(parts, ignore_index=True)[list(writer_data.WRITER_COLUMNS)]


def evaluate_agents(experiment_manager_list, n_simulations=5, choose_random_agents=True,
                    fignum=None, show=True, plot=True):
  """Evaluates each manager's agents and draws a box plot (rlberry's `evaluate_agents`).

  Args:
    experiment_manager_list: fitted managers.
    n_simulations: `eval` calls per manager (per agent when not `choose_random_agents`).
    choose_random_agents: each call evaluates a random agent of the manager; False
      evaluates every agent `n_simulations` times.
    fignum: the matplotlib figure's number or name.
    show: call `plt.show()`.
    plot: draw the box plot.

  Returns:
    DataFrame with one column per manager (its `agent_name`, with a `*` more for each
    earlier manager of the same name) and one row per evaluation.
  """
  outputs = {}
  for manager in experiment_manager_list:
    name = manager.agent_name
    while name in outputs:
      name += '*'
    if choose_random_agents:
      values = manager.eval_agents(n_simulations, verbose=False)
    else:
      values = [value for index in range(manager.n_fit)
                for value in manager.eval_agents(n_simulations, agent_id=index, verbose=False)]
    outputs[name] = values
  output = pd.DataFrame(outputs)
  if plot:
    import matplotlib.pyplot as plt
    plt.figure(fignum)
    plt.boxplot(output.to_numpy(), tick_labels=list(output.columns))
    plt.xlabel('agent')
    plt.ylabel('evaluation output')
    if show:
      plt.show()
  return output
