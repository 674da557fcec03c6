"""The MuJoCo tasks' plug-in: their slab (`MujocoVectorEnv`) for `environment.vector: true`.

Gymnasium's MuJoCo v5 specs have no vector entry point, and `gymnasium.make_vec` on them
keeps Gymnasium's own (autoresetting) `SyncVectorEnv`. Registered here, under each task's
Gymnasium id in `agents.plugins.VECTOR_ENVIRONMENTS`, a config that sets
`environment.vector: true` (BatchPPO's MuJoCo configs do) steps its environments as
`MujocoVectorEnv` slabs instead; everything else about the tasks stays generic.
"""

from agents import plugins

# The tasks `MujocoVectorEnv` steps (its `TASKS`), named here without importing MuJoCo.
TASK_IDS = ('HalfCheetah-v5', 'Hopper-v5', 'Walker2d-v5', 'Ant-v5')


def register():
  """Registers the MuJoCo tasks' slab; calling it again changes nothing."""
  for env_id in TASK_IDS:
    plugins.VECTOR_ENVIRONMENTS.register(env_id, 'agents.env.mujoco.vector:MujocoVectorEnv')
