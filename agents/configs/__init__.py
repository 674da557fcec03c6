"""Run configs: named configs, YAML files, overrides and validation.

    from agents import configs
    config = configs.resolve('cartpole', {'learning_rate': 1e-3, 'environment.num_agents': 4})
    configs.save_yaml(config, 'config.yaml'); configs.load_yaml('config.yaml')

A resolved config is a frozen `RunConfig` (`agents.configs.run_config`): each section a
typed dataclass (`config.loop.steps`), and also the nested mapping YAML holds
(`config['loop']['steps']`: `seed`, `environment`, `network`, `algorithm`, `loop`); see
`agents.configs.sections` for the layout and `agents.config_fields` for how each key is
declared once.
"""

from agents.config_fields import ConfigError
from agents.configs.named import CONFIGS, merge
from agents.configs.resolution import (
    apply_overrides,
    as_run_config,
    flatten,
    from_saved,
    import_modules,
    load_yaml,
    parse_override,
    resolve,
    resume_config,
    validate,
)
from agents.configs.run_config import RunConfig
from agents.configs.sections import SECTIONS, defaults_of, specs_for, specs_of
from agents.configs.yaml_io import dump_yaml, save_yaml

__all__ = [
    'CONFIGS', 'ConfigError', 'RunConfig', 'SECTIONS', 'apply_overrides', 'as_run_config',
    'defaults_of',
    'dump_yaml', 'flatten', 'from_saved', 'import_modules', 'load_yaml', 'merge',
    'parse_override', 'resolve', 'resume_config', 'save_yaml', 'specs_for', 'specs_of',
    'validate',
]
