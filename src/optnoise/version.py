"""The version of optnoise: on the ground floor, so that nothing imports the package face for it."""

__version__ = "0.1.0"
