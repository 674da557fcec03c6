"""Per-seed results for the tests: BLE's EvaluationResult fields, as the balloon writes them."""

from agents.evaluation.results import SeedResult


def balloon_result(seed, cumulative_reward, time_within_radius, twr50, out_of_power=False,
                   envelope_burst=False, zeropressure=False, final_timestep=960):
  """A balloon result, the arguments in BLE's EvaluationResult order."""
  return SeedResult(seed, cumulative_reward, final_timestep, metrics=dict(
      time_within_radius=time_within_radius, twr50=twr50, out_of_power=out_of_power,
      envelope_burst=envelope_burst, zeropressure=zeropressure))
