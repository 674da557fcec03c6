"""Reads TensorBoard event files, for the tests that check what a run wrote there."""

import tensorflow as tf


def events(path):
  """The `tf.compat.v1.Event` records of one event file, in order.

  `tf.data.TFRecordDataset` reads them as TensorFlow 2 does (the v1
  `summary_iterator` is deprecated).
  """
  for record in tf.data.TFRecordDataset(path):
    yield tf.compat.v1.Event.FromString(record.numpy())
