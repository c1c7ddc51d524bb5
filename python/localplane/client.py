"""The harness of a running instance: a method for every admin route, named as the JavaScript client's (snake_case)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Union

from ._http import AdminHttp, LocalplaneError, segment
from .types import (
    ClockRun,
    ClockState,
    FaultRule,
    JournalEntry,
    NearMisses,
    ObjstoreKey,
    RequestStats,
    SavedSnapshot,
    SqlAnswer,
)

JsonObject = Dict[str, Any]


def _header_match(header: Any) -> Any:
    """A header match as a query's `Name:value` text (a dict {name, value} or the text itself)."""
    if isinstance(header, Mapping):
        return header["name"] if header.get("value") is None else f"{header['name']}:{header['value']}"
    return header


def _filter_query(filter: Mapping[str, Any]) -> JsonObject:
    query = dict(filter)
    for name in ("header", "response_header"):
        if name in query:
            query[name] = _header_match(query[name])
    return query


class Clock:
    """/clock: each change answers the clock after it (advance_to_next and run_until_idle the tasks that ran too)."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def get(self) -> ClockState:
        return self._http.json("GET", "/clock")

    def now(self) -> datetime:
        """The emulator's time, as an aware datetime."""
        return datetime.fromisoformat(self.get()["now"].replace("Z", "+00:00")).astimezone(timezone.utc)

    def freeze(self) -> ClockState:
        return self._http.json("POST", "/clock/freeze")

    def unfreeze(self) -> ClockState:
        return self._http.json("POST", "/clock/unfreeze")

    def set(self, time: Union[str, datetime]) -> ClockState:
        text = time.isoformat() if isinstance(time, datetime) else time
        return self._http.json("POST", "/clock/set", json_body={"time": text})

    def advance(self, seconds: float) -> ClockState:
        return self._http.json("POST", "/clock/advance", json_body={"seconds": seconds})

    def advance_to_next(self) -> ClockRun:
        return self._http.json("POST", "/clock/advance-to-next")

    def run_until_idle(self, within_seconds: Optional[float] = None) -> ClockRun:
        return self._http.json("POST", "/clock/run-until-idle", json_body={"within_seconds": within_seconds})


class Requests:
    """/requests: the journal. Filters take the fields of GET /_localplane/requests (`path` globs, `status` classes)."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def list(self, **filter: Any) -> List[JournalEntry]:
        return self._http.json("GET", "/requests", query=_filter_query(filter))["requests"]

    def find(self, **filter: Any) -> List[JournalEntry]:
        """POST /requests/find: the same filter as a JSON body (`since` an id or a time, `header` a dict or text)."""
        return self._http.json("POST", "/requests/find", json_body=filter)["requests"]

    def count(self, **filter: Any) -> int:
        return self._http.json("GET", "/requests/count", query=_filter_query(filter))["count"]

    def get(self, request_id: int) -> Optional[JournalEntry]:
        """None when the journal no longer holds it."""
        try:
            return self._http.json("GET", f"/requests/{int(request_id)}")
        except LocalplaneError as error:
            if error.status == 404:
                return None
            raise

    def stats(self, minutes: Optional[int] = None, errors: Optional[int] = None) -> RequestStats:
        return self._http.json("GET", "/requests/stats", query={"minutes": minutes, "errors": errors})

    def clear(self) -> None:
        self._http.send("DELETE", "/requests")


class FaultRules:
    """/fault-rules: answers the API gives instead of its own, by a match on the request."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def add(self, rule: Optional[Mapping[str, Any]] = None, **fields: Any) -> FaultRule:
        """A rule as POST /fault-rules takes it: a dict, or its fields as keywords (`match`, `action`, `count`...)."""
        return self._http.json("POST", "/fault-rules", json_body={**(rule or {}), **fields})

    def list(self) -> List[FaultRule]:
        return self._http.json("GET", "/fault-rules")["rules"]

    def remove(self, rule_id: str) -> bool:
        """False when there is no such rule."""
        try:
            self._http.send("DELETE", f"/fault-rules/{segment(rule_id)}")
            return True
        except LocalplaneError as error:
            if error.status == 404:
                return False
            raise

    def clear(self) -> None:
        self._http.send("DELETE", "/fault-rules")

    def near_misses(self, **options: Any) -> NearMisses:
        """Requests a rule almost matched, each with the fields it missed (`rule_id`, `limit` narrow them)."""
        return self._http.json("GET", "/fault-rules/near-misses", query=options)


class Faults:
    """/faults: the knobs that make the next destination validations, export runs or revisions fail."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def list(self) -> JsonObject:
        return self._http.json("GET", "/faults")

    def clear(self) -> JsonObject:
        return self._http.json("DELETE", "/faults")

    def destination_validations(self, **fault: Any) -> JsonObject:
        return self._http.json("POST", "/faults/destination-validations", json_body=fault)

    def export_runs(self, **fault: Any) -> JsonObject:
        return self._http.json("POST", "/faults/export-runs", json_body=fault)

    def revisions(self, **fault: Any) -> JsonObject:
        return self._http.json("POST", "/faults/revisions", json_body=fault)


class Config:
    """GET and PATCH /config: the limits in force, changed until a reset."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def get(self) -> JsonObject:
        return self._http.json("GET", "/config")

    def patch(self, changes: Optional[Mapping[str, Any]] = None, **fields: Any) -> JsonObject:
        return self._http.json("PATCH", "/config", json_body={**(changes or {}), **fields})


class Workspaces:
    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def set_tier(self, workspace_id: str, tier: str) -> JsonObject:
        """PUT /workspaces/{workspace_id}/tier"""
        return self._http.json("PUT", f"/workspaces/{segment(workspace_id)}/tier", json_body={"tier": tier})


class Sessions:
    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def add_runs(self, session_id: str, **runs: Any) -> JsonObject:
        """POST /sessions/{session_id}/runs: generated runs added to a tracing project (`count`, `start_time`...)."""
        return self._http.json("POST", f"/sessions/{segment(session_id)}/runs", json_body=runs)


class Deployments:
    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def set_status(self, deployment_id: str, status: str) -> JsonObject:
        """PUT /deployments/{deployment_id}/status"""
        return self._http.json("PUT", f"/deployments/{segment(deployment_id)}/status", json_body={"status": status})

    def revision_history(self, deployment_id: str, revision_id: str) -> JsonObject:
        """GET /deployments/{deployment_id}/revisions/{revision_id}/history"""
        return self._http.json("GET", f"{self._revision(deployment_id, revision_id)}/history")

    def set_revision_status(self, deployment_id: str, revision_id: str, status: str) -> JsonObject:
        """PUT /deployments/{deployment_id}/revisions/{revision_id}/status"""
        return self._http.json(
            "PUT", f"{self._revision(deployment_id, revision_id)}/status", json_body={"status": status}
        )

    @staticmethod
    def _revision(deployment_id: str, revision_id: str) -> str:
        return f"/deployments/{segment(deployment_id)}/revisions/{segment(revision_id)}"


class ObjstoreKeys:
    """/objstore/keys: key pairs, never with their secrets."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def list(self) -> List[ObjstoreKey]:
        return self._http.json("GET", "/objstore/keys")

    def add(self, key: Optional[Mapping[str, Any]] = None, **fields: Any) -> ObjstoreKey:
        return self._http.json("POST", "/objstore/keys", json_body={**(key or {}), **fields})

    def remove(self, access_key_id: str) -> None:
        self._http.send("DELETE", f"/objstore/keys/{segment(access_key_id)}")


class Objstore:
    """The embedded objstore's buckets and objects, as the admin API browses them."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http
        self.keys = ObjstoreKeys(http)

    def buckets(self) -> JsonObject:
        return self._http.json("GET", "/objstore/buckets")

    def objects(self, bucket: str, **options: Any) -> JsonObject:
        """A page of keys (`prefix`, `delimiter`, `search`, `limit`, `cursor` as the route takes them)."""
        return self._http.json("GET", f"{self._bucket(bucket)}/objects", query=options)

    def object(self, bucket: str, key: str) -> JsonObject:
        return self._http.json("GET", f"{self._bucket(bucket)}/object", query={"key": key})

    def content(self, bucket: str, key: str) -> bytes:
        return self._http.send("GET", f"{self._bucket(bucket)}/object/content", query={"key": key})

    def put_object(self, bucket: str, key: str, content: bytes, content_type: Optional[str] = None) -> JsonObject:
        """Stored as S3 PutObject stores it (application/octet-stream unless given)."""
        return self._http.json(
            "PUT", f"{self._bucket(bucket)}/object", query={"key": key}, data=bytes(content), content_type=content_type
        )

    def delete_object(self, bucket: str, key: str) -> None:
        self._http.send("DELETE", f"{self._bucket(bucket)}/object", query={"key": key})

    def preview(self, bucket: str, key: str, rows: Optional[int] = None) -> JsonObject:
        return self._http.json("GET", "/objstore/preview", query={"bucket": bucket, "key": key, "rows": rows})

    @staticmethod
    def _bucket(bucket: str) -> str:
        return f"/objstore/buckets/{segment(bucket)}"


class Snapshots:
    """Snapshot files of the instance's snapshots folder, each named by a plain file name."""

    def __init__(self, http: AdminHttp) -> None:
        self._http = http

    def save(self, name: str) -> SavedSnapshot:
        return self._http.json("POST", "/snapshot", json_body={"name": name})

    def restore(self, name: str) -> JsonObject:
        return self._http.json("POST", "/restore", json_body={"name": name})

    def list(self) -> JsonObject:
        return self._http.json("GET", "/snapshots")

    def download(self, name: str) -> bytes:
        return self._http.send("GET", f"/snapshots/{segment(name)}")

    def upload(self, name: str, file: bytes) -> SavedSnapshot:
        return self._http.json("PUT", f"/snapshots/{segment(name)}", data=bytes(file))

    def delete(self, name: str) -> None:
        self._http.send("DELETE", f"/snapshots/{segment(name)}")


class Localplane:
    """A running instance's admin API (`connect(url)`), or one this process started (`start()`)."""

    def __init__(self, url: str, admin_token: Optional[str] = None, objstore_url: Optional[str] = None) -> None:
        self._http = AdminHttp(url, admin_token)
        self.api_url = self._http.url
        self.objstore_url = objstore_url
        self.clock = Clock(self._http)
        self.requests = Requests(self._http)
        self.fault_rules = FaultRules(self._http)
        self.faults = Faults(self._http)
        self.config = Config(self._http)
        self.workspaces = Workspaces(self._http)
        self.sessions = Sessions(self._http)
        self.deployments = Deployments(self._http)
        self.objstore = Objstore(self._http)
        self.snapshots = Snapshots(self._http)

    def reset(self, workspace_id: Optional[str] = None, keep_clock: bool = False) -> None:
        """POST /reset: the seeded fixtures again (one workspace's only, with `workspace_id`)."""
        self._http.send("POST", "/reset", json_body={"workspace_id": workspace_id, "keep_clock": keep_clock or None})

    def health(self) -> JsonObject:
        return self._http.json("GET", "/health")

    def fixtures(self) -> JsonObject:
        return self._http.json("GET", "/fixtures")

    def tasks(self) -> List[JsonObject]:
        return self._http.json("GET", "/tasks")

    def state(self, workspace_id: Optional[str] = None) -> JsonObject:
        return self._http.json("GET", "/state", query={"workspace_id": workspace_id})

    def sql(self, sql: str, export_id: str) -> SqlAnswer:
        """POST /sql: a read-only query over an export's Parquet files (its `runs` view)."""
        return self._http.json("POST", "/sql", json_body={"sql": sql, "export_id": export_id})

    def __repr__(self) -> str:
        return f"Localplane({self.api_url!r})"


def connect(url: str, admin_token: Optional[str] = None) -> Localplane:
    """A client of a running instance, by its API URL (the ready line's `api=`)."""
    client = Localplane(url, admin_token)
    if client.objstore_url is None:
        try:
            client.objstore_url = client.health().get("objstore_url")
        except LocalplaneError:
            pass  # a token the instance wants and was not given: the first call says so
        except OSError as error:
            raise LocalplaneError(
                0, f"no localplane answers at {url}: {error}", f"GET {url}/_localplane/health"
            ) from None
    return client
