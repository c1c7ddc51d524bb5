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


class JournalEntry(TypedDict, total=False):
    id: int
    time: str
    wall_time: str
    source: str
    method: str
    path: str
    query: Dict[str, Any]
    status: int
    workspace_id: Optional[str]
    fault_rule_id: Optional[str]
    duration_ms: float
    request_headers: Dict[str, str]
    response_headers: Dict[str, str]
    request_body: Any
    response_body: Any
    objstore: Optional[Dict[str, Any]]


class FaultRule(TypedDict):
    id: str
    match: Dict[str, Any]
    action: Dict[str, Any]
    probability: float
    count: Optional[int]
    remaining: Optional[int]
    checked: int
    fired: int


class NearMiss(TypedDict):
    request: Dict[str, Any]
    rule_id: str
    missed: List[Dict[str, Any]]


class NearMisses(TypedDict):
    near_misses: List[NearMiss]


class RequestStats(TypedDict, total=False):
    minutes: List[Dict[str, Any]]
    errors: List[Dict[str, Any]]


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
