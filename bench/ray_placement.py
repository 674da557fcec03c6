"""Ray actors against worker processes for the balloon, and a model of a cluster. Prints JSON.

    python -m bench.ray_placement [--rounds=2] [--check-steps=6]

1. Placement (`placement`): the `balloon` config's training step (the fused step:
   environments, policy, memory, and the PPO update at the end of each segment) over
   one batch of 2 slabs of 128 and 2 of 256 balloons, once in worker processes and once
   in Ray actors on a local instance; both batches live side by side and take turns
   (A, B, A, B, ...), one segment (`algorithm.segment_length` steps, one update) a turn,
   so the machine's load hits both alike. Reported: balloon steps per second of each
   turn, the Ray / processes ratio of each pair and their median (target >= 0.8).
2. The parts of the model (`parts`): a slab's step time in this process (128 balloons),
   the learner's inference (policy on the batch, value on two batches) and update time
   per balloon step, and Ray's round trip and transfer per MB between the two nodes of a
   local `ray.cluster_utils.Cluster` (loopback, so a LAN is slower; see `lan`).
3. The model (`model`): a synchronous step of B balloons over n nodes of c cores, one
   slab of 128 per core (B = 128 n c), costs
       slab step (128 balloons) + round trip + B x obs bytes / bandwidth
       + learner inference(B) + update(B) / segment_length,
   and the learner's part grows with B while the slabs' does not: the table says where
   it passes the slabs' part, and the ceiling it sets.
4. The check (`check`): stepping 128 balloons (no learner) in one slab on one node of one
   CPU against two slabs of 64 on two nodes of one CPU each, on one local Cluster of three
   nodes, interleaved; measured against the model's prediction for both.
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
os.environ.setdefault('RAY_worker_niceness', '0')

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLABS = (128, 128, 256, 256)
NODE_COUNTS = (1, 2, 4, 8, 16)
CORES = (2, 32)
SLAB_PER_CORE = 128
# A LAN between the learner and the actors' nodes (the issue's figure, and 10 GbE).
LAN = {'round_trip_ms': 0.5, 'ms_per_mb': 0.8}


def _config(overrides=None):
  from agents.configs import resolution
  return resolution.resolve('balloon', dict(overrides or {}))


def _batch(config, sizes, processes, **options):
  import functools

  from agents.tools import batch_env
  from agents.training import builders
  return batch_env.BatchEnv.from_slab_constructors(
      [functools.partial(builders.make_vector_env, config, size) for size in sizes],
      processes=processes, **options)


def measure_placement(rounds):
  """Part 1: the fused training step of the balloon config, processes against Ray."""
  import tensorflow as tf

  from agents.tools import in_graph_batch_env, ray_cluster, simulate
  from agents.training import builders, trainer
  config = _config({'environment.num_agents': sum(SLABS)})
  trainer.configure_threads(config['loop']['tf_threads'])
  segment = config['algorithm']['segment_length']
  ray_cluster.init(num_cpus=len(SLABS))  # One CPU per slab, as the processes get cores.
  runs, batches = {}, []
  try:
    for name in ('processes', 'ray'):
      tf.random.set_seed(0)
      batch = _batch(config, SLABS, True if name == 'processes' else 'ray')
      batches.append(batch)
      env = in_graph_batch_env.InGraphBatchEnv(batch, seed=0)
      algorithm = builders.build_algorithm(config, batch.observation_space,
                                           batch.action_space, is_training=tf.Variable(True))
      fused = simulate.FusedStep(env, algorithm)
      fused(reset=True, steps=segment)  # Traces, fills the memory once, updates.
      runs[name] = dict(fused=fused, algorithm=algorithm, turns=[], stepping=[], update=[])
    for _ in range(rounds):
      for run in runs.values():
        start = time.perf_counter()
        run['fused'](steps=segment - 1)
        middle = time.perf_counter()
        run['fused'](steps=1)  # The segment's last step, and the update.
        end = time.perf_counter()
        run['turns'].append(sum(SLABS) * segment / (end - start))
        run['stepping'].append((middle - start) / (segment - 1))
        run['update'].append(end - middle - (middle - start) / (segment - 1))
    learner = _learner_inference(runs['processes']['algorithm'], batches[0])
  finally:
    for batch in batches:
      batch.close()
  ratios = [ray / processes for processes, ray in zip(runs['processes']['turns'],
                                                       runs['ray']['turns'])]
  result = {name: {'steps_per_second': [round(value, 1) for value in run['turns']],
                   'step_ms': round(1e3 * statistics.median(run['stepping']), 1),
                   'update_s': round(statistics.median(run['update']), 3)}
            for name, run in runs.items()}
  result.update(slabs=list(SLABS), segment_length=segment,
                ratios=[round(ratio, 3) for ratio in ratios],
                median_ratio=round(statistics.median(ratios), 3))
  update_s = statistics.median(runs['processes']['update'])
  parts = dict(learner_inference_us_per_balloon=round(1e6 * learner / sum(SLABS), 2),
               learner_update_us_per_balloon_step=round(1e6 * update_s / segment
                                                        / sum(SLABS), 2))
  return result, parts


def _learner_inference(algorithm, batch):
  """Seconds of the policy on one batch of observations and the value on two."""
  import tensorflow as tf
  network = algorithm.network
  size = len(batch)
  observ = tf.random.uniform([size, int(np.prod(batch.observation_space.shape))])
  state = tf.zeros([size, network.state_size])
  policy = tf.function(lambda o, s: network.policy(o, s))
  value = tf.function(network.value)
  both = tf.concat([observ, observ], 0)
  policy(observ, state)
  value(both)
  times = []
  for _ in range(20):
    start = time.perf_counter()
    policy(observ, state)
    value(both)
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def measure_slab_step(sizes=(64, 128), steps=5):
  """Seconds of one step of a slab of each size, in this process (median of `steps`)."""
  from agents.training import builders
  config = _config()
  seconds = {}
  for size in sizes:
    slab = builders.make_vector_env(config, size)
    try:
      slab.reset(seed=list(range(size)))
      times = []
      for step in range(steps):
        start = time.perf_counter()
        slab.step(np.full(size, step % 3, np.int64))
        times.append(time.perf_counter() - start)
      seconds[size] = statistics.median(times)
    finally:
      slab.close()
  return seconds


class _Echo:
  """An actor that returns an array of the size asked for (the transfer probe)."""

  def make(self, megabytes):
    return np.ones(int(megabytes * 2**20 / 4), np.float32)


def measure_transfer(ray, repeats=15):
  """Round trip (ms) and ms per MB of a reply from an actor on another node."""
  here = ray.get_runtime_context().get_node_id()
  other = next(node['NodeID'] for node in ray.nodes() if node['Alive'] and node['NodeID'] != here)
  from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
  echo = ray.remote(num_cpus=0)(_Echo).options(
      scheduling_strategy=NodeAffinitySchedulingStrategy(other, soft=False)).remote()
  try:
    timings = {}
    for megabytes in (0.0, 1.1, 4.4):
      ray.get(echo.make.remote(megabytes))
      times = []
      for _ in range(repeats):
        start = time.perf_counter()
        ray.get(echo.make.remote(megabytes))
        times.append(time.perf_counter() - start)
      timings[megabytes] = statistics.median(times)
  finally:
    ray.kill(echo)
  per_mb = (timings[4.4] - timings[0.0]) / 4.4
  return {'round_trip_ms': round(1e3 * timings[0.0], 3), 'ms_per_mb': round(1e3 * per_mb, 3),
          'reply_ms': {str(size): round(1e3 * value, 2) for size, value in timings.items()}}


def predict(parts, nodes, cores, balloons=None, slab=SLAB_PER_CORE, transfer=LAN,
            slab_seconds=None):
  """Balloon steps per second of a synchronous step, and its split, from the parts."""
  balloons = balloons or slab * nodes * cores
  slab_s = slab_seconds if slab_seconds is not None else parts['slab_step_ms'][str(slab)] / 1e3
  megabytes = balloons * parts['observation_bytes'] / 2**20
  transfer_s = (transfer['round_trip_ms'] + megabytes * transfer['ms_per_mb']) / 1e3
  learner_s = balloons * (parts['learner_inference_us_per_balloon']
                          + parts['learner_update_us_per_balloon_step']) / 1e6
  total = slab_s + transfer_s + learner_s
  return {'nodes': nodes, 'cores': cores, 'balloons': balloons,
          'steps_per_second': round(balloons / total, 0),
          'slab_ms': round(1e3 * slab_s, 2), 'transfer_ms': round(1e3 * transfer_s, 2),
          'learner_ms': round(1e3 * learner_s, 2),
          'learner_bound': learner_s > slab_s}


def check_two_nodes(parts, rounds, steps):
  """Part 4: one slab of 128 on one node against two slabs of 64 on two, on one Cluster."""
  from ray import cluster_utils

  from agents.tools import ray_cluster
  os.environ['PYTHONPATH'] = os.pathsep.join(
      [ROOT] + [path for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path])
  cluster = cluster_utils.Cluster(
      initialize_head=True, head_node_args={'num_cpus': 1, 'include_dashboard': False})
  for _ in range(2):
    cluster.add_node(num_cpus=1)
  cluster.wait_for_nodes()
  ray = ray_cluster.init(cluster.address)
  config = _config()
  batches = {}
  try:
    transfer = measure_transfer(ray)
    # One CPU per node: the first batch's actor takes one node, the second's two spread
    # over the other two.
    batches['one_node'] = _batch(config, (128,), 'ray', address=cluster.address)
    batches['two_nodes'] = _batch(config, (64, 64), 'ray', address=cluster.address)
    nodes = {name: sorted({member.node for member in batch.members})
             for name, batch in batches.items()}
    measured = {name: [] for name in batches}
    for batch in batches.values():
      batch.reset(seeds=list(range(len(batch))))
    for turn in range(rounds * steps):
      for name, batch in batches.items():
        start = time.perf_counter()
        batch.step(np.full(len(batch), turn % 3, np.int64))
        measured[name].append(len(batch) / (time.perf_counter() - start))
  finally:
    for batch in batches.values():
      batch.close()
    ray.shutdown()
    cluster.shutdown()
  # The learner is not in this loop: only the slabs and the transfer are predicted.
  stepping = dict(parts, learner_inference_us_per_balloon=0.0,
                  learner_update_us_per_balloon_step=0.0)
  local = {'round_trip_ms': transfer['round_trip_ms'], 'ms_per_mb': transfer['ms_per_mb']}
  predicted = {
      'one_node': predict(stepping, 1, 1, slab=128, transfer=local)['steps_per_second'],
      'two_nodes': predict(stepping, 2, 1, slab=64, transfer=local)['steps_per_second']}
  median = {name: round(statistics.median(values), 0) for name, values in measured.items()}
  return {'nodes': nodes, 'transfer': transfer, 'measured_steps_per_second': median,
          'predicted_steps_per_second': predicted,
          'measured_speedup': round(median['two_nodes'] / median['one_node'], 3),
          'predicted_speedup': round(predicted['two_nodes'] / predicted['one_node'], 3)}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rounds', type=int, default=2, help='Turns of each placement.')
  parser.add_argument('--check-steps', type=int, default=6,
                      help='Batch steps per round of the two-node check.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  started, load = time.time(), os.getloadavg()[0]
  slab_seconds = measure_slab_step()
  placement, learner = measure_placement(args.rounds)
  import ray
  ray.shutdown()
  parts = dict(learner, slab_step_ms={str(size): round(1e3 * value, 2)
                                      for size, value in slab_seconds.items()},
               observation_bytes=1099 * 4)
  check = check_two_nodes(parts, args.rounds, args.check_steps)
  parts['ray_between_nodes_local'] = check['transfer']
  model = [predict(parts, nodes, cores) for cores in CORES for nodes in NODE_COUNTS]
  learner_us = (parts['learner_inference_us_per_balloon']
                + parts['learner_update_us_per_balloon_step'])
  print(json.dumps({
      'placement': placement, 'parts': parts, 'lan': LAN, 'model': model,
      'learner_ceiling_steps_per_second': round(1e6 / learner_us, 0),
      'check': check, 'cpus': os.cpu_count(), 'load_before': round(load, 2),
      'load_after': round(os.getloadavg()[0], 2),
      'wall_seconds': round(time.time() - started, 1)}, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
