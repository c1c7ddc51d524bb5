"""Requests to an instance's admin API: JSON in and out, refusals raised as LocalplaneError."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping, Optional

ADMIN_PREFIX = "/_localplane"


class LocalplaneError(Exception):
    """An answer of the admin API other than a success: its status and its `detail` (a string, or a 422's list)."""

    def __init__(self, status: int, detail: Any, request: str) -> None:
        super().__init__(f"{request} answered {status}: {describe_detail(detail)}")
        self.status = status
        self.detail = detail


def describe_detail(detail: Any) -> str:
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        return "; ".join(
            ".".join(str(part) for part in item.get("loc", [])) + f": {item.get('msg')}"
            if isinstance(item, dict)
            else str(item)
            for item in detail
        )
    return json.dumps(detail)


def query_text(query: Optional[Mapping[str, Any]]) -> str:
    """A query string of the fields given (None left out; booleans as true/false)."""
    if not query:
        return ""
    pairs = []
    for name, value in query.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((name, str(value)))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def segment(text: str) -> str:
    """A path segment, escaped."""
    return urllib.parse.quote(str(text), safe="")


class AdminHttp:
    """Requests to `<url>/_localplane/...`, with the admin token when there is one."""

    def __init__(self, url: str, admin_token: Optional[str] = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.headers = {} if admin_token is None else {"Authorization": f"Bearer {admin_token}"}

    def send(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json_body: Any = None,
        data: Optional[bytes] = None,
        content_type: Optional[str] = None,
    ) -> bytes:
        """The answer's body; a refusal raises LocalplaneError."""
        target = f"{ADMIN_PREFIX}{path}{query_text(query)}"
        headers = dict(self.headers)
        body = data
        if json_body is not None:
            body = json.dumps(_without_none(json_body)).encode()
            headers["Content-Type"] = "application/json"
        elif data is not None:
            headers["Content-Type"] = content_type or "application/octet-stream"
        request = urllib.request.Request(self.url + target, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                detail = json.loads(text).get("detail", text.decode(errors="replace"))
            except (ValueError, AttributeError):
                detail = text.decode(errors="replace")
            raise LocalplaneError(error.code, detail, f"{method} {target}") from None

    def json(self, method: str, path: str, **options: Any) -> Any:
        return json.loads(self.send(method, path, **options) or b"null")


def _without_none(value: Any) -> Any:
    """A body as the JavaScript client sends it: fields left undefined are not sent."""
    if isinstance(value, dict):
        return {name: _without_none(field) for name, field in value.items() if field is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value
