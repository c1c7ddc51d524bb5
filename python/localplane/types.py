"""What the admin API answers, as typed dictionaries (the JSON as sent: its field names)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict


class ClockState(TypedDict):
    now: str
    frozen: bool


class ClockRun(TypedDict):
    """The clock after it ran what was due, and the tasks that ran, as GET /tasks shows them."""

    now: str
    frozen: bool
    ran: List[Dict[str, Any]]


class JournalBody(TypedDict):
    text: Optional[str]
    size: Optional[int]
    content_type: Optional[str]
    truncated: bool


class JournalMessage(TypedDict):
    """A journalled request's or response's headers and body, secrets masked."""

    headers: Dict[str, str]
    body: JournalBody


class JournalEntry(TypedDict):
    id: int
    time: str
    wall_time: str
    source: str
    method: str
    path: str
    query: Dict[str, Any]
    status: int
    workspace_id: Optional[str]
    request: JournalMessage
    response: JournalMessage
    objstore: Optional[Dict[str, Any]]
    duration_ms: float
    fault_rule_id: Optional[str]


class FaultRule(TypedDict):
    """A rule as added, with how often it was checked and fired, and the times it has left (None: no count)."""

    id: str
    match: Dict[str, Any]
    action: Dict[str, Any]
    probability: float
    count: Optional[int]
    checked: int
    fired: int
    remaining: Optional[int]


class NearMiss(TypedDict):
    request: Dict[str, Any]
    rule_id: str
    missed: List[Dict[str, Any]]


class NearMisses(TypedDict):
    near_misses: List[NearMiss]


class RequestStats(TypedDict):
    """Requests per minute of the wall clock up to `now`, and the latest errors as whole journal entries."""

    now: str
    minutes: List[Dict[str, Any]]
    latest_errors: List[JournalEntry]


class SavedSnapshot(TypedDict):
    name: str
    bytes: int
    modified_at: str


class ObjstoreKey(TypedDict):
    access_key_id: str
    permissions: List[str]
    workspace_id: Optional[str]


class SqlAnswer(TypedDict):
    export_id: str
    columns: List[Dict[str, Any]]
    rows: List[List[Any]]
    row_count: int
    truncated: bool
    row_limit: int
    elapsed_ms: float
