"""Tests of agents/plugins.py: registries of names filled by plug-ins."""

import unittest

from agents import plugins


class RegistryTest(unittest.TestCase):

  def setUp(self):
    self.registry = plugins.Registry('widget', 'section.widget')

  def test_a_path_is_imported_at_the_first_get(self):
    self.registry.register('join', 'os.path:join')
    import os.path
    self.assertIs(self.registry.get('join'), os.path.join)
    self.assertIn('join', self.registry)
    self.assertEqual(self.registry.names(), ['join'])

  def test_an_object_is_returned_as_registered(self):
    marker = object()
    self.registry.register('marker', marker)
    self.assertIs(self.registry.get('marker'), marker)

  def test_an_unknown_name_names_the_config_key_and_the_known_names(self):
    self.registry.register('known', 'os:getcwd')
    with self.assertRaisesRegex(plugins.PluginError,
                                r"'section.widget' must be a registered widget, one of "
                                r"\['known'\]; got 'knwon'. Did you mean 'known'\?"):
      self.registry.get('knwon')
    self.assertIsNone(self.registry.find('missing'))

  def test_another_value_under_a_taken_name_is_refused_unless_replaced(self):
    self.registry.register('name', 'os:getcwd')
    self.registry.register('name', 'os:getcwd')  # the same value again is harmless
    with self.assertRaisesRegex(plugins.PluginError, "'name' is already registered"):
      self.registry.register('name', 'os:getpid')
    self.registry.register('name', 'os:getpid', replace=True)
    import os
    self.assertIs(self.registry.get('name'), os.getpid)

  def test_bad_paths_are_named(self):
    for path, message in (('no_colon', 'must be'), ('no_such_module_x:f', 'cannot import'),
                          ('os:no_such_attribute', 'has no')):
      with self.subTest(path=path):
        self.registry.register('bad', path, replace=True)
        with self.assertRaisesRegex(plugins.PluginError, message):
          self.registry.get('bad')

  def test_the_package_declares_the_balloon_plug_in(self):
    import importlib.metadata
    names = [entry.name for entry in importlib.metadata.entry_points(
        group=plugins.ENTRY_POINT_GROUP)]
    self.assertIn('balloon', names)


if __name__ == '__main__':
  unittest.main()
