"""Environments of the framework; importing this package registers them with Gymnasium."""

from agents.env.registration import register_all

register_all()
