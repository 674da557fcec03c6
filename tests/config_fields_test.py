"""Tests of agents/config_fields.py: declarations, messages and value checks."""

import dataclasses
import math
import unittest

from agents import config_fields
from agents.config_fields import ConfigError, param


@dataclasses.dataclass(frozen=True)
class _Example:
  rate: float = param(0.5, 'a rate', low=0, high=1, low_open=True)
  count: int = param(1, 'a count', low=1)
  limit: int | None = param(None, 'a limit', low=1)
  sizes: tuple[int, ...] = param((4, 4), 'sizes', low=1)
  kind: str = param('a', 'a kind', choices=('a', 'b'))
  flag: bool = param(True, 'a flag')
  options: dict = param({}, 'free options')
  mode: bool | str = param('auto', 'a mode', choices=(True, False, 'auto'))


class ConfigFieldsTest(unittest.TestCase):

  def test_specs_come_from_the_annotations(self):
    specs = config_fields.specs(_Example)
    self.assertEqual((specs['rate'].kind, specs['limit'].nullable, specs['sizes'].is_list),
                     (float, True, True))
    self.assertEqual(config_fields.defaults(_Example)['sizes'], [4, 4])
    self.assertEqual(config_fields.from_mapping(_Example, {'sizes': [2]}).sizes, (2,))

  def test_a_field_of_two_types_takes_each_of_its_choices(self):
    spec = config_fields.specs(_Example)['mode']
    self.assertEqual(spec.kind, (bool, str))
    for value in (True, False, 'auto'):
      self.assertEqual(config_fields.check_value('mode', value, spec), value)
    for value in ('sometimes', 1, 0.0):
      with self.assertRaisesRegex(
          ConfigError, r"'mode' \(a mode\) must be one of true, false, 'auto', got"):
        config_fields.check_value('mode', value, spec)

  def test_good_values_pass_and_ints_become_floats(self):
    specs = config_fields.specs(_Example)
    self.assertEqual(config_fields.check_value('rate', 1, specs['rate']), 1.0)
    self.assertIsInstance(config_fields.check_value('rate', 1, specs['rate']), float)
    self.assertIsNone(config_fields.check_value('limit', None, specs['limit']))
    self.assertEqual(config_fields.check_value('sizes', (3,), specs['sizes']), [3])

  def test_bad_values_name_key_value_and_range(self):
    specs = config_fields.specs(_Example)
    cases = [('rate', 0.0, r'a float in \(0, 1\], got 0.0'),
             ('rate', math.nan, 'got nan'),
             ('rate', math.inf, 'got inf'),
             ('rate', True, 'got True'),
             ('count', 0, 'an int >= 1, got 0'),
             ('count', 1.5, 'got 1.5'),
             ('limit', 0, 'or null, got 0'),
             ('sizes', [0], r'a list, each an int >= 1, got \[0\]'),
             ('sizes', 'big', "got 'big'"),
             ('kind', 'c', "one of 'a', 'b', got 'c'"),
             ('flag', 1, 'a bool, got 1'),
             ('options', [1], 'a dict')]
    for key, value, message in cases:
      with self.assertRaisesRegex(ConfigError, f"'{key}' .*{message}"):
        config_fields.check_value(key, value, specs[key])


if __name__ == '__main__':
  unittest.main()
