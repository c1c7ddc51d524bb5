"""One localplane for the whole pytest run, reset before each test.

Starts `npx localplane start` in the folder localplane is installed in (here, this
repository's root), reads its ready line, and stops it after the last test.
"""

import json
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[3]
READY_LINE = re.compile(r"^localplane ready api=(\S+) objstore=(\S+)$")


@dataclass(frozen=True)
class Localplane:
    api_url: str
    objstore_url: str

    def call(self, method, path, body=None, headers=None):
        """A JSON request to the API; returns (status, parsed body), errors included."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.api_url + path, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


@pytest.fixture(scope="session")
def localplane():
    # Frozen clock: an export runs when a test advances the clock, not before.
    process = subprocess.Popen(
        ["npx", "localplane", "start", "--port", "0", "--objstore-port", "0", "--freeze-clock", "--quiet"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline().strip()
        ready = READY_LINE.match(line)
        if not ready:
            raise RuntimeError(f"localplane did not start (exit code {process.poll()}, first line {line!r}); its stderr says why")
        yield Localplane(api_url=ready.group(1), objstore_url=ready.group(2))
    finally:
        process.terminate()
        process.wait(timeout=30)
        # npx ends at once; localplane, which watches the process that launched it, then stops
        # cleanly (its temp dir removed), and its stdout ends when it has.
        process.stdout.read()
        process.stdout.close()


@pytest.fixture(autouse=True)
def reset_localplane(localplane):
    status, _ = localplane.call("POST", "/_localplane/reset")
    assert status == 200
