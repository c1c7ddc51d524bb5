"""Run from a checkout, the plugin is loaded here; installed (pip install ./python), its entry point loads it."""

from importlib.metadata import entry_points


def _installed() -> bool:
    points = entry_points()
    group = points.select(group="pytest11") if hasattr(points, "select") else points.get("pytest11", [])
    return any(point.value == "localplane.plugin" for point in group)


PLUGIN_INSTALLED = _installed()
pytest_plugins = ["pytester"] + ([] if PLUGIN_INSTALLED else ["localplane.plugin"])
