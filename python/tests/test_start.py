"""start() and connect(): a failed start says why in the CLI's words, a stop leaves no process, a token is named."""

from __future__ import annotations

import os
import socket
import urllib.error
from typing import Iterator

import pytest

import localplane
from localplane import LocalplaneError, LocalplaneStartError
from public_api import call

BIN = os.environ.get("LOCALPLANE_BIN")
TOKEN = "a-token-of-16-chars"
TOKEN_REQUIRED = (
    "the admin API and the dashboard require the token localplane was started with: send Authorization: Bearer "
    "<token>, or open /ui?token=<token> in a browser"
)


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_port_in_use_is_named_with_the_exit_code(busy_port: int) -> None:
    # The last --port wins: this one after start()'s own `--port 0`.
    with pytest.raises(LocalplaneStartError) as failed:
        localplane.start(bin=BIN, args=["--port", str(busy_port)])
    said = f"localplane: the API port {busy_port} on 127.0.0.1 is already in use"
    assert failed.value.exit_code == 2
    assert said in failed.value.stderr_lines
    assert "exit code 2" in str(failed.value)
    assert said in str(failed.value)
    assert "it ended before its ready line" in str(failed.value)


def test_a_bad_flag_is_named_with_the_exit_code() -> None:
    with pytest.raises(LocalplaneStartError) as failed:
        localplane.start(bin=BIN, args=["--no-such-flag"])
    said = "localplane: Unknown option '--no-such-flag' (see localplane --help)"
    assert failed.value.exit_code == 2
    assert failed.value.stderr_lines[-1] == said
    assert "exit code 2" in str(failed.value) and said in str(failed.value)
    assert isinstance(failed.value, LocalplaneError)


def test_a_binary_that_cannot_run_is_a_start_error(tmp_path) -> None:
    missing = str(tmp_path / "no-localplane")
    with pytest.raises(LocalplaneStartError) as failed:
        localplane.start(bin=missing)
    assert failed.value.exit_code is None
    assert f"{missing} could not run" in str(failed.value)


def test_stop_ends_the_process() -> None:
    started = localplane.start(bin=BIN)
    assert started.health()["status"] == "ok"
    assert started.process.poll() is None
    started.stop()
    assert started.process.returncode is not None
    with pytest.raises(urllib.error.URLError):
        started.health()
    started.stop()  # a second stop does nothing


def test_the_with_form_stops_it() -> None:
    with localplane.start(bin=BIN, freeze_clock=True) as started:
        assert started.clock.get()["frozen"] is True
        assert started.objstore_url == started.health()["objstore_url"]
    assert started.process.returncode is not None
    with pytest.raises(urllib.error.URLError):
        started.health()


@pytest.fixture(scope="module")
def guarded() -> Iterator[localplane.StartedLocalplane]:
    with localplane.start(bin=BIN, freeze_clock=True, admin_token=TOKEN) as started:
        yield started


def test_connect_without_the_token_names_it(guarded: localplane.StartedLocalplane) -> None:
    client = localplane.connect(guarded.api_url)
    assert client.objstore_url is None  # its health was refused too
    with pytest.raises(LocalplaneError) as refused:
        client.clock.get()
    assert refused.value.status == 401
    assert refused.value.detail == TOKEN_REQUIRED
    assert str(refused.value) == f"GET /_localplane/clock answered 401: {TOKEN_REQUIRED}"
    assert call(guarded.api_url, "GET", "/_localplane/clock") == (401, {"detail": TOKEN_REQUIRED})

    with pytest.raises(LocalplaneError) as refused:
        localplane.connect(guarded.api_url, admin_token="another-token-16ch").fixtures()
    assert (refused.value.status, refused.value.detail) == (401, TOKEN_REQUIRED)


def test_connect_with_the_token_works(guarded: localplane.StartedLocalplane) -> None:
    client = localplane.connect(guarded.api_url, admin_token=TOKEN)
    assert client.objstore_url == guarded.objstore_url
    assert client.clock.get() == guarded.clock.get()
    assert client.health()["status"] == "ok"


def test_connect_to_nothing_says_so() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(LocalplaneError) as refused:
        localplane.connect(f"http://127.0.0.1:{port}")
    assert refused.value.status == 0
    assert f"no localplane answers at http://127.0.0.1:{port}" in str(refused.value)
