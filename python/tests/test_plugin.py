"""The pytest plugin, through pytester: inner test runs against real instances."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from localplane import Localplane, start

ACME_KEY = {"X-API-Key": "lp_test_acme_plus_0001"}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def plugin_args(request: pytest.FixtureRequest) -> list:
    """What an inner run needs to load the plugin: nothing when it is installed (its entry point loads it)."""
    installed = request.config.pluginmanager.has_plugin("localplane")
    return [] if installed else ["-p", "localplane.plugin"]


def test_a_failing_test_reports_its_requests_and_near_misses(pytester, localplane: Localplane, plugin_args):
    pytester.makepyfile(
        f"""
        import urllib.request

        def test_deployments(localplane):
            localplane.fault_rules.add(
                match={{"method": "POST", "path": "/v2/deployments"}}, action={{"status": 503}}
            )
            request = urllib.request.Request(localplane.api_url + "/v2/deployments?limit=2", headers={ACME_KEY!r})
            urllib.request.urlopen(request).read()
            assert False, "the test's own failure"
        """
    )
    result = pytester.runpytest(*plugin_args, "--localplane-url", localplane.api_url)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- localplane -*",
            f"{localplane.api_url}: 1 request during this test",
            "  #* api      GET    /v2/deployments?limit=2 -> 200",
            "near misses (rules that did not act on a request of this test):",
            "  rule * and #* GET /v2/deployments: method wanted 'POST', got 'GET'",
        ]
    )


def test_a_passing_test_reports_nothing(pytester, localplane: Localplane, plugin_args):
    pytester.makepyfile("def test_ok(localplane):\n    assert localplane.health()['status'] == 'ok'\n")
    result = pytester.runpytest(*plugin_args, "--localplane-url", localplane.api_url, "-rA")
    result.assert_outcomes(passed=1)
    assert "- localplane -" not in result.stdout.str()


def test_the_marker_freezes_the_clock_and_keeps_it_across_the_reset(pytester, localplane: Localplane, plugin_args):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.localplane(freeze_clock=True)
        def test_frozen(localplane):
            assert localplane.clock.get()["frozen"] is True
            localplane.clock.set("2030-01-01T00:00:00Z")

        @pytest.mark.localplane(freeze_clock=True, keep_clock=True)
        def test_kept(localplane):
            assert localplane.clock.get()["now"].startswith("2030-01-01T00:00:00")

        @pytest.mark.localplane(freeze_clock=False)
        def test_reset_and_running(localplane):
            assert localplane.clock.get()["frozen"] is False
            assert not localplane.clock.get()["now"].startswith("2030")
        """
    )
    result = pytester.runpytest(*plugin_args, "--localplane-url", localplane.api_url, "-p", "no:randomly")
    result.assert_outcomes(passed=3)


def test_the_marker_starts_an_instance_with_other_fixtures(pytester, plugin_args, tmp_path):
    fixtures = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", fixtures)
    workspaces_file = next(path for path in fixtures.rglob("*.json") if '"lp_test_acme_plus_0001"' in path.read_text())
    workspaces_file.write_text(workspaces_file.read_text().replace('"Acme', '"Renamed Acme', 1))
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.localplane(fixtures={str(fixtures)!r})
        def test_renamed(localplane):
            names = [workspace["name"] for workspace in localplane.fixtures()["workspaces"]]
            assert any(name.startswith("Renamed Acme") for name in names), names

        def test_shipped(localplane):
            names = [workspace["name"] for workspace in localplane.fixtures()["workspaces"]]
            assert not any(name.startswith("Renamed") for name in names), names
        """
    )
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(passed=2)


def test_two_xdist_workers_each_have_an_instance_of_their_own(pytester, plugin_args, tmp_path, monkeypatch):
    # The workers are processes of their own: they import the package as this one does.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")]))
    )
    seen = tmp_path / "seen"
    seen.mkdir()
    pytester.makepyfile(
        f"""
        import json, os, urllib.request

        def write(localplane, name):
            localplane.fault_rules.add(match={{"path": "/" + name}}, action={{"status": 418}})
            rules = localplane.fault_rules.list()
            # Each worker's instance holds only its own rule: the other worker's never shows.
            assert [rule["match"]["path"] for rule in rules] == ["/" + name]
            worker = os.environ["PYTEST_XDIST_WORKER"]
            with open(os.path.join({str(seen)!r}, name), "w") as file:
                json.dump({{"worker": worker, "api_url": localplane.api_url}}, file)

        def test_one(localplane):
            write(localplane, "one")

        def test_two(localplane):
            write(localplane, "two")
        """
    )
    result = pytester.runpytest_subprocess(*plugin_args, "-n", "2")
    result.assert_outcomes(passed=2)
    runs = [json.loads((seen / name).read_text()) for name in ("one", "two")]
    assert runs[0]["worker"] != runs[1]["worker"]
    assert runs[0]["api_url"] != runs[1]["api_url"]


def test_a_running_instance_is_not_shared_by_xdist_workers(pytester, localplane: Localplane, plugin_args):
    pytester.makepyfile("def test_any(localplane):\n    pass\n")
    result = pytester.runpytest(*plugin_args, "--localplane-url", localplane.api_url, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--localplane-url with pytest-xdist's workers: they would share one instance*"])


def test_an_admin_token_and_an_ini_url(pytester, plugin_args):
    with start(admin_token="python-plugin-token-0001") as guarded:
        pytester.makeini(f"[pytest]\nlocalplane_url = {guarded.api_url}\n")
        pytester.makepyfile("def test_guarded(localplane):\n    assert localplane.health()['status'] == 'ok'\n")
        refused = pytester.runpytest(*plugin_args)
        refused.assert_outcomes(errors=1)
        refused.stdout.fnmatch_lines(["*answered 401*"])
        allowed = pytester.runpytest(*plugin_args, "--localplane-admin-token", "python-plugin-token-0001")
        allowed.assert_outcomes(passed=1)


def test_the_objstore_fixture_is_a_boto3_client_of_the_instance(objstore, localplane: Localplane):
    objstore.put_object(Bucket="exports", Key="from-python/hello.txt", Body=b"hello")
    assert objstore.get_object(Bucket="exports", Key="from-python/hello.txt")["Body"].read() == b"hello"
    assert localplane.objstore.content("exports", "from-python/hello.txt") == b"hello"
    listed = urllib.request.urlopen(
        urllib.request.Request(localplane.api_url + "/_localplane/objstore/buckets/exports/objects?prefix=from-python/")
    ).read()
    assert "from-python/hello.txt" in listed.decode()


def test_a_relative_bin_is_from_the_folder_pytest_started_in(pytester, plugin_args, monkeypatch):
    (pytester.path / "tools").mkdir()
    (pytester.path / "tools" / "localplane.js").symlink_to(REPO / "bin" / "localplane.js")
    monkeypatch.delenv("LOCALPLANE_BIN", raising=False)
    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def elsewhere(tmp_path, monkeypatch):
            monkeypatch.chdir(tmp_path)

        def test_elsewhere(elsewhere, localplane):
            assert localplane.health()["status"] == "ok"
        """
    )
    result = pytester.runpytest(*plugin_args, "--localplane-bin", "tools/localplane.js")
    result.assert_outcomes(passed=1)
