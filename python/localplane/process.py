"""An instance of this process's own: `localplane start` on free ports, stopped cleanly."""

from __future__ import annotations

import collections
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
from typing import Deque, Dict, List, Optional, Sequence

from ._http import LocalplaneError
from .client import Localplane

READY_LINE = re.compile(r"^localplane ready api=(\S+) objstore=(\S+)$")
STDERR_LINES_KEPT = 20


class LocalplaneStartError(LocalplaneError):
    """`localplane start` ended, or never printed its ready line: its exit code and the last lines of its stderr."""

    def __init__(self, command: Sequence[str], exit_code: Optional[int], stderr_lines: List[str], why: str) -> None:
        self.command = list(command)
        self.exit_code = exit_code
        self.stderr_lines = stderr_lines
        said = "\n".join(f"  {line}" for line in stderr_lines) or "  (nothing)"
        Exception.__init__(
            self,
            f"localplane did not start ({why}; exit code {exit_code}): {' '.join(self.command)}\nits stderr:\n{said}",
        )
        self.status = 0
        self.detail = why


def command_for(bin: Optional[str]) -> List[str]:
    """How to run localplane: `bin` (a bin/localplane.js is run with node), else $LOCALPLANE_BIN, else npx."""
    chosen = bin or os.environ.get("LOCALPLANE_BIN")
    if not chosen:
        return ["npx", "--no-install", "localplane"]
    if os.sep in chosen:
        chosen = os.path.abspath(chosen)
    if chosen.endswith((".js", ".cjs", ".mjs")):
        return [shutil.which("node") or "node", chosen]
    return [chosen]


class StartedLocalplane(Localplane):
    """A client of the instance it started; `stop()` (or leaving its `with` block) stops it."""

    def __init__(self, process: subprocess.Popen, api_url: str, objstore_url: str, admin_token: Optional[str]) -> None:
        super().__init__(api_url, admin_token, objstore_url)
        self.process = process

    def stop(self, timeout: float = 30) -> None:
        """Stops the instance (its temp dir removed) and waits until it has."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
            # npx ends at once; localplane, which watches the process that launched it, then stops and closes stdout.
            if self.process.stdout is not None and not self.process.stdout.closed:  # not stopped before
                self.process.stdout.read()
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        finally:
            if self.process.stdout is not None:
                self.process.stdout.close()

    def __enter__(self) -> "StartedLocalplane":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def start(
    *,
    bin: Optional[str] = None,
    freeze_clock: bool = False,
    fixtures: Optional[str] = None,
    seed: Optional[int] = None,
    admin_token: Optional[str] = None,
    quiet: bool = True,
    args: Sequence[str] = (),
    cwd: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    timeout: float = 120,
) -> StartedLocalplane:
    """Starts `localplane start` on port 0 for the API and the objstore and waits for its ready line.

    `args` are more flags as the CLI takes them. The admin token goes in the environment, not on the command line
    (where every user of the machine reads it). A start that fails raises LocalplaneStartError.
    """
    command = command_for(bin) + ["start", "--port", "0", "--objstore-port", "0", *args]
    if freeze_clock:
        command.append("--freeze-clock")
    if fixtures is not None:
        command += ["--fixtures", str(fixtures)]
    if seed is not None:
        command += ["--seed", str(seed)]
    if quiet:
        command.append("--quiet")
    environment = {**os.environ, **(env or {})}
    if admin_token is not None:
        environment["LOCALPLANE_ADMIN_TOKEN"] = admin_token
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    except OSError as error:
        raise LocalplaneStartError(command, None, [], f"{command[0]} could not run: {error}") from None
    stderr_lines: Deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
    # The request log and warnings are read as they come: a full pipe would stop the instance.
    stderr_reader = threading.Thread(target=_keep_lines, args=(process.stderr, stderr_lines), daemon=True)
    stderr_reader.start()
    first_line: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: first_line.put(process.stdout.readline()), daemon=True).start()
    try:
        line = first_line.get(timeout=timeout).strip()
    except queue.Empty:
        process.kill()
        process.wait()
        raise LocalplaneStartError(
            command, process.returncode, list(stderr_lines), f"no ready line in {timeout} s"
        ) from None
    ready = READY_LINE.match(line)
    if ready is None:
        try:
            exit_code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            exit_code = process.wait()
        stderr_reader.join(timeout=5)  # the rest of stderr, which ends with the process
        why = f"it printed {line!r}" if line else "it ended before its ready line"
        raise LocalplaneStartError(command, exit_code, list(stderr_lines), why)
    return StartedLocalplane(process, ready.group(1), ready.group(2), admin_token)


def _keep_lines(stream, lines: Deque[str]) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))
