"""Gymnasium's MuJoCo locomotion tasks (v5) stepped as one slab, exact to Gymnasium's.

`MujocoVectorEnv('HalfCheetah-v5', num_envs=30)` holds `num_envs` of Gymnasium's own
environments (built by `gymnasium.make`, so every keyword argument of the task means
what it means there) and steps them without Gymnasium's per-environment Python: for each
environment it sets the controls and calls MuJoCo's `mj_step`, and then computes every
observation, reward, termination and info of the slab at once in NumPy, with the
formulas of Gymnasium's v5 tasks. Resets call each environment's own `reset`, so the
reset noise comes from the same generator as Gymnasium's for the same seed. MuJoCo lets
go of Python's lock while it steps, so the slab steps its environments in `num_threads`
threads (one per core unless told), each a contiguous share of the slab. The result is
the same to the bit as Gymnasium's environments stepped one by one, whatever the threads
(the tests hold it there).

It is a `VectorEnv` with autoreset disabled: the batch resets each finished environment
itself (`reset(seed=[...], options={'reset_mask': mask})`). Truncation at
`max_episode_steps` (the spec's 1000 unless given) is its own, as `TimeLimit` would.

Tasks: `TASKS` (HalfCheetah, Hopper, Walker2d and Ant). Training uses it through the
MuJoCo plug-in (`agents.env.mujoco.plugin`) when a config sets `environment.vector: true`.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from typing import Any

import gymnasium
import mujoco
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space


@dataclasses.dataclass(frozen=True)
class Task:
  """What differs between the tasks: the displacement rewarded, what health means, and
  whether the observation clips velocities or reads contact forces."""
  forward: str  # 'qpos_x': qpos[0]; 'body_xy': the main body's (x, y) position (Ant).
  health: str | None  # None (never ends), 'hopper', 'walker' or 'ant'.
  clip_velocity: bool = False  # Observed qvel clipped to [-10, 10] (Hopper, Walker2d).
  contact_forces: bool = False  # Reads cfrc_ext (Ant): needs mj_rnePostConstraint.


TASKS = {
    'HalfCheetah-v5': Task(forward='qpos_x', health=None),
    'Hopper-v5': Task(forward='qpos_x', health='hopper', clip_velocity=True),
    'Walker2d-v5': Task(forward='qpos_x', health='walker', clip_velocity=True),
    'Ant-v5': Task(forward='body_xy', health='ant', contact_forces=True),
}


class MujocoVectorEnv(VectorEnv):
  """`num_envs` of one of Gymnasium's MuJoCo v5 tasks, stepped together (see the module)."""

  metadata = {'autoreset_mode': AutoresetMode.DISABLED}

  def __init__(self, env_id: str, num_envs: int, max_episode_steps: int | None = None,
               num_threads: int | None = None, **kwargs: Any) -> None:
    """Builds the slab.

    Args:
      env_id: one of `TASKS`.
      num_envs: environments in the slab.
      max_episode_steps: truncation; None takes the spec's.
      num_threads: threads that step the physics; None: one per core this process may
        use, at most one per environment.
      **kwargs: the task's keyword arguments, as `gymnasium.make` takes them.

    Raises:
      ValueError: a task not in `TASKS`, a `render_mode` (this slab does not render), or
        fewer than one thread.
    """
    if env_id not in TASKS:
      raise ValueError(f'MujocoVectorEnv steps {sorted(TASKS)}, not {env_id!r}.')
    if num_threads is None:
      num_threads = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') \
          else (os.cpu_count() or 1)
    if num_threads < 1:
      raise ValueError(f'MujocoVectorEnv: num_threads must be at least 1, got {num_threads}.')
    if kwargs.get('render_mode') is not None:
      raise ValueError('MujocoVectorEnv does not render; build the task with gymnasium.make '
                       'to render it.')
    self.task = TASKS[env_id]
    self.envs: list[Any] = [gymnasium.make(env_id, **kwargs).unwrapped
                            for _ in range(num_envs)]
    first: Any = self.envs[0]
    self.num_envs = num_envs
    # None (a spec without a time limit): episodes end only by the task's own ends.
    self.max_episode_steps: int | None = (gymnasium.spec(env_id).max_episode_steps
                                          if max_episode_steps is None else max_episode_steps)
    self.single_observation_space = first.observation_space
    self.single_action_space = first.action_space
    self.observation_space = batch_space(self.single_observation_space, num_envs)
    self.action_space = batch_space(self.single_action_space, num_envs)
    self.spec = None
    self._models = [env.model for env in self.envs]
    self._datas = [env.data for env in self.envs]
    self._frame_skip = first.frame_skip
    self._dt = first.dt
    self._options = _task_options(first)
    self._body = (first.data.body(first._main_body).id  # pylint: disable=protected-access
                  if self.task.forward == 'body_xy' else None)
    model = first.model
    self._qpos = np.zeros((num_envs, model.nq))
    self._qvel = np.zeros((num_envs, model.nv))
    self._cfrc = np.zeros((num_envs, model.nbody, 6)) if self.task.contact_forces else None
    self._steps = np.zeros(num_envs, np.int64)
    # Contiguous shares of the slab, one per thread; the first runs in the caller's.
    bounds = np.linspace(0, num_envs, min(num_threads, num_envs) + 1).astype(int)
    self._shares = [range(start, stop) for start, stop in zip(bounds[:-1], bounds[1:])]
    self._pool = (concurrent.futures.ThreadPoolExecutor(len(self._shares) - 1)
                  if len(self._shares) > 1 else None)

  def reset(self, *, seed: int | list[int | None] | None = None,
            options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Resets the environments of `options['reset_mask']` (all without one), environment i
    with `seed[i]` (a list), or `seed + i` (an int), as Gymnasium's vector environments."""
    mask = np.ones(self.num_envs, bool) if not options or options.get('reset_mask') is None \
        else np.asarray(options['reset_mask'], bool)
    seeds: list[int | None]
    if seed is None or isinstance(seed, (list, tuple)):
      seeds = list(seed) if seed is not None else [None] * self.num_envs
    else:
      seeds = [int(seed) + index for index in range(self.num_envs)]
    infos: list[dict[str, Any]] = []
    for index in np.flatnonzero(mask):
      _, info = self.envs[index].reset(seed=seeds[index])
      infos.append(info)
      self._read_state(int(index))
      self._steps[index] = 0
    return self._observe(), _vector_infos(infos, mask)

  def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                        dict[str, Any]]:
    actions = np.asarray(actions)
    expected = (self.num_envs, *(self.single_action_space.shape or ()))
    if actions.shape != expected:
      raise ValueError(f'MujocoVectorEnv: expected actions of shape {expected}, got '
                       f'{actions.shape}.')
    before = self._position()
    if self._pool is None:
      self._simulate(actions, self._shares[0])
    else:
      pending = [self._pool.submit(self._simulate, actions, share)
                 for share in self._shares[1:]]
      self._simulate(actions, self._shares[0])
      for future in pending:
        future.result()
    self._steps += 1
    velocity = (self._position() - before) / self._dt
    options = self._options
    # Clipped once: the contact cost and the observation both read them (Ant).
    contact_forces = self._contact_forces() if self.task.contact_forces else None
    # Gymnasium's `ctrl_cost_weight * np.sum(np.square(action))`, in the action's dtype.
    ctrl_cost = options['ctrl_cost_weight'] * np.sum(np.square(actions), axis=1)
    forward_reward = options['forward_reward_weight'] * velocity[:, 0]
    infos = {'x_position': self._qpos[:, 0].copy()}
    if self.task.health is None:
      reward = forward_reward - ctrl_cost
      terminated = np.zeros(self.num_envs, bool)
      infos.update(x_velocity=velocity[:, 0], reward_forward=forward_reward,
                   reward_ctrl=-ctrl_cost)
    else:
      healthy = self._healthy()
      healthy_reward = healthy * options['healthy_reward']
      costs = ctrl_cost
      if contact_forces is not None:
        # Summed as Gymnasium sums one environment's [bodies, 6] array: flat, contiguous.
        contact_cost = options['contact_cost_weight'] * np.sum(
            np.square(contact_forces).reshape(self.num_envs, -1), axis=1)
        costs = ctrl_cost + contact_cost
      reward = forward_reward + healthy_reward - costs
      terminated = ~healthy & bool(options['terminate_when_unhealthy'])
      if self.task.forward == 'body_xy':
        infos.update(y_position=self._qpos[:, 1].copy(),
                     distance_from_origin=np.linalg.norm(self._qpos[:, 0:2], ord=2, axis=1),
                     x_velocity=velocity[:, 0], y_velocity=velocity[:, 1],
                     reward_forward=forward_reward, reward_ctrl=-ctrl_cost,
                     reward_contact=-contact_cost, reward_survive=healthy_reward)
      else:
        infos.update(z_distance_from_origin=self._qpos[:, 1] - options['init_z'],
                     x_velocity=velocity[:, 0], reward_forward=forward_reward,
                     reward_ctrl=-ctrl_cost, reward_survive=healthy_reward)
    truncated = (self._steps >= self.max_episode_steps if self.max_episode_steps is not None
                 else np.zeros(self.num_envs, bool))
    every = np.ones(self.num_envs, bool)
    infos.update({f'_{key}': every for key in list(infos)})
    return (self._observe(contact_forces), np.asarray(reward, np.float64), terminated,
            truncated, infos)

  def close_extras(self, **kwargs: Any) -> None:
    del kwargs
    if self._pool is not None:
      self._pool.shutdown()
    for env in self.envs:
      env.close()

  def _simulate(self, actions: np.ndarray, share: range) -> None:
    """Steps the physics of the environments of `share` (MuJoCo releases the lock)."""
    rne = self.task.contact_forces
    for index in share:
      model, data = self._models[index], self._datas[index]
      data.ctrl[:] = actions[index]
      mujoco.mj_step(model, data, nstep=self._frame_skip)
      if rne:  # Contact forces (cfrc_ext) are computed by this call only.
        mujoco.mj_rnePostConstraint(model, data)
      self._read_state(index)

  def _read_state(self, index: int) -> None:
    data = self._datas[index]
    self._qpos[index] = data.qpos
    self._qvel[index] = data.qvel
    if self._cfrc is not None:
      self._cfrc[index] = data.cfrc_ext

  def _position(self) -> np.ndarray:
    """[N, 1] x (qpos[0]), or [N, 2] the main body's (x, y), as the task reads it."""
    if self._body is None:
      return self._qpos[:, :1].copy()
    return np.stack([data.xpos[self._body, :2] for data in self._datas])

  def _contact_forces(self) -> np.ndarray:
    assert self._cfrc is not None, 'a task that reads contact forces'
    low, high = self._options['contact_force_range']
    return np.clip(self._cfrc, low, high)

  def _healthy(self) -> np.ndarray:
    options, qpos = self._options, self._qpos
    if self.task.health == 'ant':
      low, high = options['healthy_z_range']
      finite = np.isfinite(qpos).all(1) & np.isfinite(self._qvel).all(1)
      return finite & (low <= qpos[:, 2]) & (qpos[:, 2] <= high)
    z, angle = qpos[:, 1], qpos[:, 2]
    healthy = _inside(z, options['healthy_z_range'])
    healthy &= _inside(angle, options['healthy_angle_range'])
    if self.task.health == 'hopper':
      state = np.concatenate([qpos, self._qvel], 1)[:, 2:]
      healthy &= _inside(state, options['healthy_state_range']).all(1)
    return healthy

  def _observe(self, contact_forces: np.ndarray | None = None) -> np.ndarray:
    """The slab's observations; `contact_forces`: the clipped forces, if already at hand."""
    skip = self._options['skipped_qpos']
    parts = [self._qpos[:, skip:],
             np.clip(self._qvel, -10, 10) if self.task.clip_velocity else self._qvel]
    if self.task.contact_forces and self._options['include_cfrc_ext_in_observation']:
      if contact_forces is None:
        contact_forces = self._contact_forces()
      parts.append(contact_forces[:, 1:].reshape(self.num_envs, -1))
    return np.concatenate(parts, 1)


def _inside(value: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
  low, high = bounds
  return (low < value) & (value < high)


def _task_options(env: Any) -> dict[str, Any]:
  """The task's options as Gymnasium's environment holds them (its private attributes,
  the same in every v5 task that has them)."""
  options = {}
  for name in ('forward_reward_weight', 'ctrl_cost_weight', 'healthy_reward',
               'terminate_when_unhealthy', 'healthy_z_range', 'healthy_angle_range',
               'healthy_state_range', 'contact_cost_weight', 'contact_force_range',
               'include_cfrc_ext_in_observation'):
    if hasattr(env, f'_{name}'):
      options[name] = getattr(env, f'_{name}')
  options['skipped_qpos'] = env.observation_structure['skipped_qpos']
  options['init_z'] = env.init_qpos[1]
  return options


def _vector_infos(infos: list[dict[str, Any]], mask: np.ndarray) -> dict[str, Any]:
  """Per-environment reset infos in Gymnasium's vector format (key, '_key' mask)."""
  out: dict[str, Any] = {}
  rows = np.flatnonzero(mask)
  for key in (infos[0] if infos else {}):
    values = np.zeros(len(mask))
    values[rows] = [info[key] for info in infos]
    out[key], out[f'_{key}'] = values, mask.copy()
  return out
