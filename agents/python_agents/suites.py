"""BLE's `eval/suites.py` under its own name, so that its import line carries over.

`from balloon_learning_environment.eval import suites` becomes
`from agents.python_agents import suites`; `suites.get_eval_suite('small_eval')` is then
`eval_lib.get_eval_suite`, where the suites are defined.
"""

from agents.python_agents.eval_lib import EvaluationSuite, available_suites, get_eval_suite

__all__ = ['EvaluationSuite', 'available_suites', 'get_eval_suite']
