"""localplane for Python test suites: a client of the whole harness, and a pytest plugin (localplane.plugin)."""

from ._http import LocalplaneError
from .client import Localplane, connect
from .process import LocalplaneStartError, StartedLocalplane, start

__all__ = ["Localplane", "LocalplaneError", "LocalplaneStartError", "StartedLocalplane", "connect", "start"]
