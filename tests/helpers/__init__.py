"""What the tests share: fake and mock environments, a mock algorithm, tiny runs and
experiments, user policies, process helpers, and the evaluate command line run in-process.

These are importable modules, not test files, because worker processes import them by
module path (cloudpickle ships an environment's constructor by reference) and commands
name them as strings (`--agent=tests.helpers.fake_agents:...`, `environment.imports`).
No test module imports another test module: what two of them share lives here.
"""
