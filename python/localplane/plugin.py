"""The pytest plugin (entry point `pytest11`): a `localplane` fixture, an `objstore` fixture, a marker, options, and
a "localplane" section in a failing test's report listing what the emulator saw.

One instance per session (per xdist worker: each worker is a session of its own), reset before each test that uses
it; `--localplane-url` uses a running instance instead.
"""

from __future__ import annotations

import os
from urllib.parse import urlencode
from typing import Any, Dict, Iterator, List, Optional

import pytest

from ._http import LocalplaneError
from .client import Localplane, connect
from .process import StartedLocalplane, start

MARKER = "localplane"
# A failing test's report lists this many of its requests at most (the newest), and as many near misses.
REPORTED_REQUESTS = 50
REPORTED_NEAR_MISSES = 20
# The instance a test's `localplane` fixture gave it, its journal emptied by the reset: what it holds is the test's.
_WATCHED = pytest.StashKey[Any]()

_SETTINGS = {
    "url": ("--localplane-url", "LOCALPLANE_URL", "a running localplane's API URL to use instead of starting one"),
    "bin": ("--localplane-bin", "LOCALPLANE_BIN", "the localplane command to start (default: npx localplane)"),
    "admin_token": (
        "--localplane-admin-token",
        "LOCALPLANE_ADMIN_TOKEN",
        "the admin token: the running instance's (with --localplane-url), or the one a started instance requires",
    ),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localplane", "localplane: the emulator for tests")
    for name, (flag, variable, help_text) in _SETTINGS.items():
        group.addoption(
            flag, dest=f"localplane_{name}", default=None, help=f"{help_text} (ini: localplane_{name}, env: {variable})"
        )
        parser.addini(f"localplane_{name}", help_text)


def pytest_configure(config: pytest.Config) -> None:
    _resolve_bin(config)
    workers = getattr(config.option, "numprocesses", None)
    if _setting(config, "url") is not None and workers not in (None, 0, 1):
        raise pytest.UsageError(
            "--localplane-url with pytest-xdist's workers: they would share one instance, each reset clearing what "
            "another's test made. Leave --localplane-url out and each worker starts an instance of its own"
        )
    config.addinivalue_line(
        "markers",
        f"{MARKER}(freeze_clock=None, fixtures=None, keep_clock=False): how the localplane fixture prepares this test: "
        "the clock frozen (True) or running (False) after the reset, an instance started with that fixtures "
        "directory, the emulator clock kept across the reset",
    )


def _resolve_bin(config: pytest.Config) -> None:
    """A relative --localplane-bin or LOCALPLANE_BIN is from the folder pytest started in, the ini key's from the ini
    file's: made absolute for tests that change folders, and in the environment for the processes they start (xdist's
    workers, pytester's runs)."""
    invoked = str(config.invocation_params.dir)
    ini_folder = str(config.inipath.parent) if config.inipath else invoked
    for value, base, from_environment in (
        (config.getoption("localplane_bin"), invoked, False),
        (config.getini("localplane_bin"), ini_folder, False),
        (os.environ.get("LOCALPLANE_BIN"), invoked, True),
    ):
        if not value:
            continue
        if os.sep in value:
            absolute = os.path.join(base, value)
            if from_environment:
                os.environ["LOCALPLANE_BIN"] = absolute
            else:
                config.option.localplane_bin = absolute
        return


def _setting(config: pytest.Config, name: str) -> Optional[str]:
    flag, variable, _ = _SETTINGS[name]
    return (
        config.getoption(f"localplane_{name}")
        or config.getini(f"localplane_{name}")
        or os.environ.get(variable)
        or None
    )


class Instances:
    """The session's instances: one per fixtures directory asked for (the shipped fixtures: None), started when first
    used and stopped at the session's end; or the running instance of --localplane-url."""

    def __init__(self, config: pytest.Config) -> None:
        self.url = _setting(config, "url")
        self.bin = _setting(config, "bin")
        self.admin_token = _setting(config, "admin_token")
        self.rootdir = str(config.rootpath)
        self.started: Dict[Optional[str], StartedLocalplane] = {}
        self.connected: Optional[Localplane] = None

    def get(self, fixtures: Optional[str]) -> Localplane:
        if self.url is not None:
            if fixtures is not None:
                raise pytest.UsageError(
                    f"@pytest.mark.{MARKER}(fixtures=...) starts an instance of its own: it cannot be used with "
                    "--localplane-url, whose instance has its fixtures already"
                )
            if self.connected is None:
                self.connected = connect(self.url, self.admin_token)
            return self.connected
        if fixtures not in self.started:
            self.started[fixtures] = start(
                bin=self.bin, fixtures=fixtures, admin_token=self.admin_token, cwd=self.rootdir
            )
        return self.started[fixtures]

    def stop_all(self) -> None:
        for instance in self.started.values():
            instance.stop()
        self.started.clear()


@pytest.fixture(scope="session")
def localplane_instances(pytestconfig: pytest.Config) -> Iterator[Instances]:
    instances = Instances(pytestconfig)
    yield instances
    instances.stop_all()


@pytest.fixture
def localplane(request: pytest.FixtureRequest, localplane_instances: Instances) -> Localplane:
    """The session's instance, reset (and its clock set as the test's `localplane` marker says)."""
    marker = request.node.get_closest_marker(MARKER)
    options: Dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    unknown = set(options) - {"freeze_clock", "fixtures", "keep_clock"}
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} takes freeze_clock, fixtures and keep_clock, not {sorted(unknown)}"
        )
    fixtures = options.get("fixtures")
    if fixtures is not None:
        fixtures = str(request.path.parent / fixtures) if not os.path.isabs(str(fixtures)) else str(fixtures)
    instance = localplane_instances.get(fixtures)
    instance.reset(keep_clock=bool(options.get("keep_clock")))
    freeze = options.get("freeze_clock")
    if freeze is True:
        instance.clock.freeze()
    elif freeze is False:
        instance.clock.unfreeze()
    request.node.stash[_WATCHED] = instance
    return instance


@pytest.fixture
def objstore(localplane: Localplane) -> Any:
    """A boto3 S3 client of the instance's objstore, signed with the fixture key pair of the most permissions."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        pytest.fail("the objstore fixture needs boto3 (pip install boto3, or Debian's python3-boto3)", pytrace=False)
    keys = localplane.fixtures()["objstore"]["keys"]
    key = max(keys, key=lambda candidate: len(candidate["permissions"]))
    return boto3.client(
        "s3",
        endpoint_url=localplane.objstore_url,
        aws_access_key_id=key["access_key_id"],
        aws_secret_access_key=key["secret_access_key"],
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}),
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    instance = item.stash.get(_WATCHED, None)
    if instance is None or not report.failed or report.when == "teardown":
        return
    try:
        report.sections.append(("localplane", seen_by(instance)))
    except (LocalplaneError, OSError) as error:
        report.sections.append(("localplane", f"(the instance could not be read: {error})"))


def seen_by(instance: Localplane) -> str:
    """What the emulator saw since the test's reset: the requests (newest last) and the near misses of rules that did
    not act on them."""
    requests = instance.requests.list(order="desc", limit=REPORTED_REQUESTS)[::-1]
    total = instance.requests.count()
    lines: List[str] = [f"{instance.api_url}: {total} request{'s' if total != 1 else ''} during this test"]
    if total > len(requests):
        lines.append(f"  (the newest {len(requests)} of them)")
    for entry in requests:
        rule = f"  fault rule {entry['fault_rule_id']}" if entry.get("fault_rule_id") else ""
        query = entry.get("query") or {}
        path = entry["path"] + (f"?{urlencode(query, doseq=True)}" if query else "")
        lines.append(f"  #{entry['id']} {entry['source']:8} {entry['method']:6} {path} -> {entry['status']}{rule}")
    fired = {entry.get("fault_rule_id") for entry in requests}
    misses = [
        miss
        for miss in instance.fault_rules.near_misses(limit=REPORTED_REQUESTS)["near_misses"]
        if miss["rule_id"] not in fired
    ][:REPORTED_NEAR_MISSES]
    if misses:
        lines.append("near misses (rules that did not act on a request of this test):")
        for miss in misses:
            request = miss["request"]
            why = (
                "; ".join(
                    f"{missed['field']} wanted {missed['wanted']!r}, got {missed['got']!r}" for missed in miss["missed"]
                )
                or "it matched but did not act (its probability, or it was spent)"
            )
            lines.append(f"  rule {miss['rule_id']} and #{request['id']} {request['method']} {request['path']}: {why}")
    return "\n".join(lines)
