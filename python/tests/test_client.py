"""Every method of the client once, its answer checked against the same admin route fetched over plain HTTP.

Each test names the methods it covers (`@covers`); the client it gets records its calls, and the test fails unless it
called each of them. `test_every_public_method_is_covered` fails when the client has a method no test names.
"""

from __future__ import annotations

import functools
import inspect
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Set

import pytest

import localplane
from localplane import Localplane, LocalplaneError
from localplane.types import (
    ClockRun,
    ClockState,
    FaultRule,
    JournalEntry,
    NearMiss,
    NearMisses,
    ObjstoreKey,
    RequestStats,
    SavedSnapshot,
    SqlAnswer,
)
from public_api import ACME, ACME_ID, STAGING_SESSION_ID, admin, call, call_bytes, create_export

NO_SUCH_ID = "00000000-0000-4000-8000-000000000000"
COVERED: Dict[str, str] = {}  # method -> the test that covers it


def covers(*methods: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """The test calls these methods (`group.method`): it fails if it passes without calling each."""

    def mark(test: Callable[[Any], None]) -> Callable[[Any], None]:
        for method in methods:
            assert method not in COVERED, f"{method} is covered by {COVERED[method]} already"
            COVERED[method] = test.__name__

        @functools.wraps(test)
        def checked(lp: Recording) -> None:
            test(lp)
            missed = set(methods) - lp.called
            assert not missed, f"{test.__name__} names methods it never called: {sorted(missed)}"

        return checked

    return mark


def is_group(value: Any) -> bool:
    return type(value).__module__ == "localplane.client" and not callable(value)


def public_methods(client: Any, prefix: str = "") -> Set[str]:
    """The client's public methods, a group's as `group.method` (`objstore.keys.add`)."""
    found: Set[str] = set()
    for name in dir(client):
        if name.startswith("_"):
            continue
        value = getattr(client, name)
        if inspect.ismethod(value):
            found.add(prefix + name)
        elif is_group(value):
            found |= public_methods(value, f"{prefix}{name}.")
    return found


class Recording:
    """The client, or one of its groups, writing down each method called on it."""

    def __init__(self, target: Any, called: Set[str], prefix: str = "") -> None:
        self._target = target
        self.called = called
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if is_group(value):
            return Recording(value, self.called, f"{self._prefix}{name}.")
        if inspect.ismethod(value):
            self.called.add(self._prefix + name)
        return value


@pytest.fixture
def lp(instance: localplane.Localplane) -> Recording:
    return Recording(instance, set())


def test_every_public_method_is_covered() -> None:
    methods = public_methods(Localplane("http://127.0.0.1:9"))
    assert "objstore.keys.add" in methods and "clock.run_until_idle" in methods
    assert sorted(methods - set(COVERED)) == [], "client methods no test calls"
    assert sorted(set(COVERED) - methods) == [], "tests name methods the client does not have"


def refusal(url: str, method: str, path: str, body: Any = None) -> Any:
    """The detail of a refused admin request, sent over plain HTTP."""
    status, answer = call(url, method, "/_localplane" + path, body)
    assert status >= 400, (method, path, status, answer)
    return status, answer["detail"]


def fields_of(typed: Any) -> Set[str]:
    """The keys a TypedDict of localplane.types declares, to compare with an answer's."""
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@covers("clock.get", "clock.now", "clock.freeze", "clock.unfreeze", "clock.set", "clock.advance")
def test_clock(lp: Any) -> None:
    url = lp.api_url
    assert lp.clock.get() == admin(url, "GET", "/clock")
    assert lp.clock.get()["frozen"] is True
    assert fields_of(ClockState) == set(lp.clock.get())
    assert lp.clock.now() == parse_time(admin(url, "GET", "/clock")["now"])
    assert lp.clock.now().tzinfo is not None

    assert lp.clock.set("2026-12-01T00:00:00Z") == admin(url, "GET", "/clock")
    assert parse_time(admin(url, "GET", "/clock")["now"]) == datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert lp.clock.set(datetime(2026, 12, 2, tzinfo=timezone.utc)) == admin(url, "GET", "/clock")
    assert parse_time(admin(url, "GET", "/clock")["now"]) == datetime(2026, 12, 2, tzinfo=timezone.utc)

    advanced = lp.clock.advance(60)
    assert advanced == admin(url, "GET", "/clock")
    assert parse_time(advanced["now"]) == datetime(2026, 12, 2, 0, 1, tzinfo=timezone.utc)

    assert lp.clock.unfreeze()["frozen"] is False
    assert admin(url, "GET", "/clock")["frozen"] is False
    assert lp.clock.freeze()["frozen"] is True
    assert admin(url, "GET", "/clock")["frozen"] is True

    with pytest.raises(LocalplaneError) as refused:
        lp.clock.advance(-1)
    assert (refused.value.status, refused.value.detail) == refusal(url, "POST", "/clock/advance", {"seconds": -1})
    assert isinstance(refused.value.detail, list) and refused.value.detail[0]["loc"] == ["body", "seconds"]


@covers("clock.advance_to_next", "clock.run_until_idle", "tasks")
def test_clock_runs_the_tasks(lp: Any) -> None:
    url = lp.api_url
    queued = lp.tasks()
    assert queued == admin(url, "GET", "/tasks")
    assert queued, "the seeded revisions in progress have steps queued"
    soonest = min(parse_time(task["due_at"]) for task in queued)

    ran = lp.clock.advance_to_next()
    assert parse_time(ran["now"]) == soonest
    assert {key: ran[key] for key in ("now", "frozen")} == admin(url, "GET", "/clock")
    assert fields_of(ClockRun) == set(ran)
    assert ran["ran"] and all(parse_time(task["due_at"]) == soonest for task in ran["ran"])
    assert not any(task in lp.tasks() for task in ran["ran"])

    start = lp.clock.now()
    idle = lp.clock.run_until_idle(within_seconds=3600)
    assert idle["ran"]
    assert {key: idle[key] for key in ("now", "frozen")} == admin(url, "GET", "/clock")
    assert all(parse_time(task["due_at"]) > start + timedelta(hours=1) for task in admin(url, "GET", "/tasks"))


DESTINATIONS = "/api/v1/bulk-exports/destinations"


def api_requests(url: str) -> None:
    """Three requests for the journal: two listings with the acme key, one with an unknown key (a 401)."""
    for headers in (ACME, ACME, {"X-API-Key": "lp_test_nobody"}):
        call(url, "GET", DESTINATIONS, headers=headers)


@covers("requests.list", "requests.find", "requests.count", "requests.get", "requests.clear")
def test_requests(lp: Any) -> None:
    url = lp.api_url
    api_requests(url)
    listed = lp.requests.list(path="/api/v1/**")
    assert listed == admin(url, "GET", "/requests?path=/api/v1/**")["requests"]
    assert [entry["status"] for entry in listed] == [200, 200, 401]
    assert fields_of(JournalEntry) == set(listed[0])

    by_header = lp.requests.list(header={"name": "X-Tenant-Id", "value": ACME_ID})
    assert by_header == admin(url, "GET", f"/requests?header=X-Tenant-Id:{ACME_ID}")["requests"]
    assert len(by_header) == 2

    found = lp.requests.find(status="4xx", limit=5)
    assert found == admin(url, "POST", "/requests/find", {"status": "4xx", "limit": 5})["requests"]
    assert [entry["status"] for entry in found] == [401]

    counted = lp.requests.count(workspace_id=ACME_ID)
    assert counted == admin(url, "GET", f"/requests/count?workspace_id={ACME_ID}")["count"]
    assert counted == 2

    first = listed[0]
    assert lp.requests.get(first["id"]) == admin(url, "GET", f"/requests/{first['id']}")
    missing = first["id"] + 1000
    assert lp.requests.get(missing) is None
    assert call(url, "GET", f"/_localplane/requests/{missing}")[0] == 404

    with pytest.raises(LocalplaneError) as refused:
        lp.requests.list(limit=20000)
    assert (refused.value.status, refused.value.detail) == refusal(url, "GET", "/requests?limit=20000")
    assert refused.value.status == 422

    assert lp.requests.clear() is None
    assert admin(url, "GET", "/requests")["total"] == 0


@covers("requests.stats")
def test_request_stats(lp: Any) -> None:
    url = lp.api_url
    api_requests(url)
    stats = lp.requests.stats(minutes=5, errors=10)
    over_http = admin(url, "GET", "/requests/stats?minutes=5&errors=10")
    assert len(stats["minutes"]) == len(over_http["minutes"]) == 5
    assert sum(minute["total"] for minute in stats["minutes"]) == 3
    assert sum(minute["total"] for minute in over_http["minutes"]) == 3
    assert stats["latest_errors"] == over_http["latest_errors"]
    assert fields_of(RequestStats) == set(stats)
    assert [error["status"] for error in stats["latest_errors"]] == [401]


@covers("fault_rules.add", "fault_rules.list", "fault_rules.remove", "fault_rules.clear", "fault_rules.near_misses")
def test_fault_rules(lp: Any) -> None:
    url = lp.api_url
    rule = lp.fault_rules.add(match={"method": "GET", "path": DESTINATIONS}, action={"status": 503}, count=1)
    near = lp.fault_rules.add({"match": {"method": "POST", "path": "/api/v1/bulk-exports"}, "action": {"status": 500}})
    assert lp.fault_rules.list() == admin(url, "GET", "/fault-rules")["rules"]
    assert [listed["id"] for listed in lp.fault_rules.list()] == [rule["id"], near["id"]]
    assert fields_of(FaultRule) == set(rule)

    assert call(url, "GET", DESTINATIONS, headers=ACME)[0] == 503
    assert call(url, "GET", DESTINATIONS, headers=ACME)[0] == 200  # its one time is spent

    misses = lp.fault_rules.near_misses(limit=10)
    assert misses == admin(url, "GET", "/fault-rules/near-misses?limit=10")
    assert fields_of(NearMisses) == set(misses)
    # The second request: the spent rule matched it without acting, so it is the closest, with nothing missed.
    assert [(miss["rule_id"], miss["request"]["status"], miss["missed"]) for miss in misses["near_misses"]] == [
        (rule["id"], 200, [])
    ]
    assert fields_of(NearMiss) == set(misses["near_misses"][0])

    unfaultable = {"match": {"path": "/_localplane/clock"}, "action": {"status": 503}}
    with pytest.raises(LocalplaneError) as refused:
        lp.fault_rules.add(unfaultable)
    over_http = refusal(url, "POST", "/fault-rules", unfaultable)
    assert (refused.value.status, refused.value.detail) == over_http
    assert refused.value.status == 422 and isinstance(refused.value.detail, list)

    assert lp.fault_rules.remove(rule["id"]) is True
    assert [listed["id"] for listed in admin(url, "GET", "/fault-rules")["rules"]] == [near["id"]]
    assert lp.fault_rules.remove(rule["id"]) is False
    assert call(url, "DELETE", f"/_localplane/fault-rules/{rule['id']}")[0] == 404

    assert lp.fault_rules.clear() is None
    assert admin(url, "GET", "/fault-rules")["rules"] == []


@covers("faults.list", "faults.clear", "faults.destination_validations", "faults.export_runs", "faults.revisions")
def test_faults(lp: Any) -> None:
    url = lp.api_url
    validations = lp.faults.destination_validations(error="access_denied", count=2)
    runs = lp.faults.export_runs(mode="fail", count=1, message="disk full")
    revisions = lp.faults.revisions(stage="build", count=1)
    armed = lp.faults.list()
    assert armed == admin(url, "GET", "/faults")
    assert revisions == armed  # each answers the knobs armed after it
    assert validations["destination_validations"] == [{"error": "access_denied", "count": 2, "remaining": 2}]
    assert runs["export_runs"] == [{"mode": "fail", "count": 1, "message": "disk full", "remaining": 1}]
    assert armed["revisions"] == [{"stage": "build", "count": 1, "remaining": 1}]

    with pytest.raises(LocalplaneError) as refused:
        lp.faults.revisions(stage="lunch")
    assert (refused.value.status, refused.value.detail) == refusal(url, "POST", "/faults/revisions", {"stage": "lunch"})
    assert refused.value.status == 422

    cleared = lp.faults.clear()
    assert cleared == admin(url, "GET", "/faults")
    assert cleared == {"destination_validations": [], "export_runs": [], "revisions": []}


@covers("config.get", "config.patch")
def test_config(lp: Any) -> None:
    url = lp.api_url
    assert lp.config.get() == admin(url, "GET", "/config")
    patched = lp.config.patch({"export_rows_per_file": 1000}, deployment_deletion_seconds=60)
    assert patched == admin(url, "GET", "/config")
    assert (patched["export_rows_per_file"], patched["deployment_deletion_seconds"]) == (1000, 60)

    with pytest.raises(LocalplaneError) as refused:
        lp.config.patch(export_rows_per_file=-1)
    over_http = refusal(url, "PATCH", "/config", {"export_rows_per_file": -1})
    assert (refused.value.status, refused.value.detail) == over_http
    assert refused.value.status == 422
    assert refused.value.detail[0]["loc"] == ["body", "export_rows_per_file"]
    assert "export_rows_per_file" in str(refused.value)


def acme_state(url: str) -> Dict[str, Any]:
    return admin(url, "GET", f"/state?workspace_id={ACME_ID}")["workspaces"][0]


@covers("workspaces.set_tier", "sessions.add_runs")
def test_workspaces_and_sessions(lp: Any) -> None:
    url = lp.api_url
    assert lp.workspaces.set_tier(ACME_ID, "enterprise") == {"id": ACME_ID, "tier": "enterprise"}
    assert acme_state(url)["tier"] == "enterprise"

    added = lp.sessions.add_runs(STAGING_SESSION_ID, count=10, start_time="2026-10-05T00:00:00Z", days=1)
    staging = [session for session in acme_state(url)["sessions"] if session["id"] == STAGING_SESSION_ID]
    assert added == {"added": 10, "session": staging[0]}
    assert staging[0]["run_count"] == 1510

    with pytest.raises(LocalplaneError) as refused:
        lp.sessions.add_runs(STAGING_SESSION_ID, count=1, days=0)
    over_http = refusal(url, "POST", f"/sessions/{STAGING_SESSION_ID}/runs", {"count": 1, "days": 0})
    assert (refused.value.status, refused.value.detail) == over_http
    assert refused.value.detail[0]["type"] == "greater_than"

    with pytest.raises(LocalplaneError) as refused:
        lp.workspaces.set_tier(NO_SUCH_ID, "plus")
    assert refused.value.status == 404


@covers("deployments.set_status", "deployments.revision_history", "deployments.set_revision_status")
def test_deployments(lp: Any) -> None:
    url = lp.api_url
    step = next(task for task in lp.tasks() if task["kind"] == "revision_step")
    deployment_id, revision_id = step["deployment_id"], step["revision_id"]
    revision_path = f"/deployments/{deployment_id}/revisions/{revision_id}"

    deployment = lp.deployments.set_status(deployment_id, "UNUSED")
    assert (deployment["id"], deployment["status"]) == (deployment_id, "UNUSED")

    history = lp.deployments.revision_history(deployment_id, revision_id)
    assert history == admin(url, "GET", f"{revision_path}/history")

    revision = lp.deployments.set_revision_status(deployment_id, revision_id, "DEPLOYED")
    assert (revision["id"], revision["status"]) == (revision_id, "DEPLOYED")
    assert admin(url, "GET", f"{revision_path}/history") == lp.deployments.revision_history(deployment_id, revision_id)
    assert admin(url, "GET", f"{revision_path}/history")[-1]["status"] == "DEPLOYED"

    with pytest.raises(LocalplaneError) as refused:
        lp.deployments.set_status(NO_SUCH_ID, "READY")
    assert (refused.value.status, refused.value.detail) == refusal(
        url, "PUT", f"/deployments/{NO_SUCH_ID}/status", {"status": "READY"}
    )
    assert refused.value.status == 404


@covers(
    "objstore.buckets",
    "objstore.objects",
    "objstore.object",
    "objstore.content",
    "objstore.put_object",
    "objstore.delete_object",
    "objstore.preview",
)
def test_objstore(lp: Any) -> None:
    url = lp.api_url
    key = "python/a b.json"
    stored = lp.objstore.put_object("exports", key, b'{"rows": [1, 2]}', content_type="application/json")
    meta = lp.objstore.object("exports", key)
    assert meta == admin(url, "GET", "/objstore/buckets/exports/object?key=python/a%20b.json")
    assert stored == meta
    assert meta["content_type"] == "application/json"

    assert lp.objstore.content("exports", key) == b'{"rows": [1, 2]}'
    assert call_bytes(url, "GET", "/_localplane/objstore/buckets/exports/object/content?key=python/a%20b.json") == (
        200,
        b'{"rows": [1, 2]}',
    )
    page = lp.objstore.objects("exports", prefix="python/", limit=10)
    assert page == admin(url, "GET", "/objstore/buckets/exports/objects?prefix=python/&limit=10")
    buckets = lp.objstore.buckets()
    assert buckets == admin(url, "GET", "/objstore/buckets")
    exports = [bucket for bucket in buckets["buckets"] if bucket["name"] == "exports"]
    assert exports[0]["object_count"] == 1

    preview = lp.objstore.preview("exports", key, rows=5)
    assert preview == admin(url, "GET", "/objstore/preview?bucket=exports&key=python/a%20b.json&rows=5")

    assert lp.objstore.delete_object("exports", key) is None
    assert call(url, "GET", "/_localplane/objstore/buckets/exports/object?key=python/a%20b.json")[0] == 404
    with pytest.raises(LocalplaneError) as refused:
        lp.objstore.object("exports", key)
    assert refused.value.status == 404


@covers("objstore.keys.list", "objstore.keys.add", "objstore.keys.remove")
def test_objstore_keys(lp: Any) -> None:
    url = lp.api_url
    assert lp.objstore.keys.list() == admin(url, "GET", "/objstore/keys")
    added = lp.objstore.keys.add(
        access_key_id="LPTESTPYTHON00000005", secret_access_key="lp-test-secret-python-0005", permissions=["get"]
    )
    assert fields_of(ObjstoreKey) == set(added)
    assert added == {"access_key_id": "LPTESTPYTHON00000005", "permissions": ["get"], "workspace_id": None}
    assert added in admin(url, "GET", "/objstore/keys")
    assert lp.objstore.keys.remove("LPTESTPYTHON00000005") is None
    assert "LPTESTPYTHON00000005" not in [key["access_key_id"] for key in admin(url, "GET", "/objstore/keys")]

    with pytest.raises(LocalplaneError) as refused:
        lp.objstore.keys.add(
            access_key_id="LPTESTPYTHON00000006",
            secret_access_key="lp-test-secret-python-0006",
            permissions=["get"],
            workspace_id=NO_SUCH_ID,
        )
    assert refused.value.status == 404


@covers(
    "snapshots.save",
    "snapshots.restore",
    "snapshots.list",
    "snapshots.download",
    "snapshots.upload",
    "snapshots.delete",
)
def test_snapshots(lp: Any) -> None:
    url = lp.api_url
    saved = lp.snapshots.save("python-one")
    assert saved["name"] == "python-one" and saved["bytes"] > 0
    assert fields_of(SavedSnapshot) == set(saved)
    assert lp.snapshots.list() == admin(url, "GET", "/snapshots")

    file = lp.snapshots.download("python-one")
    assert file == call_bytes(url, "GET", "/_localplane/snapshots/python-one")[1]
    uploaded = lp.snapshots.upload("python-two", file)
    assert (uploaded["name"], uploaded["bytes"]) == ("python-two", len(file))
    assert sorted(item["name"] for item in admin(url, "GET", "/snapshots")["snapshots"]) == ["python-one", "python-two"]

    lp.config.patch(export_rows_per_file=1000)
    assert lp.snapshots.restore("python-two") == {"status": "restored", "name": "python-two"}
    assert admin(url, "GET", "/config")["export_rows_per_file"] == 5000

    assert lp.snapshots.delete("python-one") is None
    assert [item["name"] for item in admin(url, "GET", "/snapshots")["snapshots"]] == ["python-two"]
    with pytest.raises(LocalplaneError) as refused:
        lp.snapshots.delete("python-one")
    assert refused.value.status == 404
    lp.snapshots.delete("python-two")


LANDING = {
    "display_name": "landing",
    "config": {"bucket_name": "exports", "prefix": "reset"},
    "credentials": {"access_key_id": "LPTESTFULLACCESS0001", "secret_access_key": "lp-test-secret-full-access-0001"},
}


@covers("reset")
def test_reset(lp: Any) -> None:
    url = lp.api_url
    status, _ = call(url, "POST", DESTINATIONS, LANDING, ACME)
    assert status == 200
    lp.clock.advance(3600)
    moved = admin(url, "GET", "/clock")

    assert lp.reset(workspace_id=ACME_ID, keep_clock=True) is None
    assert call(url, "GET", DESTINATIONS, headers=ACME) == (200, [])
    assert admin(url, "GET", "/clock") == moved

    lp.config.patch(export_rows_per_file=1000)
    lp.reset()
    assert admin(url, "GET", "/clock") != moved
    assert admin(url, "GET", "/config")["export_rows_per_file"] == 5000


@covers("health", "fixtures", "state")
def test_health_fixtures_and_state(lp: Any) -> None:
    url = lp.api_url
    health = lp.health()
    assert health["status"] == "ok"
    assert health["objstore_url"] == lp.objstore_url == admin(url, "GET", "/health")["objstore_url"]

    fixtures = lp.fixtures()
    assert fixtures == admin(url, "GET", "/fixtures")
    assert ACME_ID in [workspace["id"] for workspace in fixtures["workspaces"]]

    assert lp.state() == admin(url, "GET", "/state")
    one = lp.state(workspace_id=ACME_ID)
    assert one == admin(url, "GET", f"/state?workspace_id={ACME_ID}")
    assert [workspace["id"] for workspace in one["workspaces"]] == [ACME_ID]


def without_elapsed(answer: Dict[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in answer.items() if name != "elapsed_ms"}


@covers("sql")
def test_sql(lp: Any) -> None:
    url = lp.api_url
    export = create_export(url, "sql")
    lp.clock.advance(0)
    query = "select count(*) as runs from runs"
    answer = lp.sql(query, export_id=export["id"])
    over_http = admin(url, "POST", "/sql", {"sql": query, "export_id": export["id"]})
    assert without_elapsed(answer) == without_elapsed(over_http)
    assert answer["export_id"] == export["id"]
    assert fields_of(SqlAnswer) == set(answer)
    assert answer["columns"] == [{"name": "runs", "type": "BIGINT"}]
    assert int(answer["rows"][0][0]) > 0  # a BIGINT comes as text

    with pytest.raises(LocalplaneError) as refused:
        lp.sql("delete from runs", export_id=export["id"])
    assert (refused.value.status, refused.value.detail) == refusal(
        url, "POST", "/sql", {"sql": "delete from runs", "export_id": export["id"]}
    )
    assert refused.value.status == 400
