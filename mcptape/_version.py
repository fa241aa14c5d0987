"""The package version, in a leaf module: what writes cassettes stamps it without importing the package facade."""

__version__ = "0.1.0"
