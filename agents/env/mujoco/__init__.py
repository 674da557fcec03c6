"""Gymnasium's MuJoCo tasks stepped as slabs (`vector.MujocoVectorEnv`), and their plug-in."""
