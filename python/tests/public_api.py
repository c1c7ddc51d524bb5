"""Plain HTTP for the tests: the admin routes as the client's answers are checked against, and the service API."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

# A seeded workspace on the plus plan (bulk exports), its API key, and its tracing project of 1,500 runs.
ACME_ID = "6e81f035-1834-4208-8f34-e3a9482cde15"
ACME = {"X-API-Key": "lp_test_acme_plus_0001", "X-Tenant-Id": ACME_ID}
STAGING_SESSION_ID = "b473474a-d1dd-4781-b84d-264ef5770f98"


def call(
    url: str, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None
) -> Tuple[int, Any]:
    """A JSON request; (status, parsed body), refusals included."""
    status, raw = call_bytes(url, method, path, None if body is None else json.dumps(body).encode(), headers)
    return status, json.loads(raw or b"null")


def call_bytes(
    url: str, method: str, path: str, data: Optional[bytes] = None, headers: Optional[Mapping[str, str]] = None
) -> Tuple[int, bytes]:
    request = urllib.request.Request(url + path, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def admin(url: str, method: str, path: str, body: Any = None) -> Any:
    """An admin route's answer; anything but a 2xx fails the test."""
    status, answer = call(url, method, "/_localplane" + path, body)
    assert 200 <= status < 300, (method, path, status, answer)
    return answer


def create_export(url: str, prefix: str) -> Dict[str, Any]:
    """A destination in the `exports` bucket under `prefix` and an export of a day of the staging project to it."""
    status, destination = call(
        url,
        "POST",
        "/api/v1/bulk-exports/destinations",
        {
            "display_name": "landing",
            "config": {"bucket_name": "exports", "prefix": prefix},
            "credentials": {
                "access_key_id": "LPTESTFULLACCESS0001",
                "secret_access_key": "lp-test-secret-full-access-0001",
            },
        },
        ACME,
    )
    assert status == 200, destination
    status, export = call(
        url,
        "POST",
        "/api/v1/bulk-exports",
        {
            "bulk_export_destination_id": destination["id"],
            "session_id": STAGING_SESSION_ID,
            "start_time": "2026-10-01T00:00:00Z",
            "end_time": "2026-10-02T00:00:00Z",
            "format_version": "v2_beta",
            "compression": "snappy",
        },
        ACME,
    )
    assert status == 200, export
    return export
