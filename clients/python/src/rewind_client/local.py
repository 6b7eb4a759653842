"""Starting `rewind serve` for local use: a child process on a free loopback port, with the
token it writes read from the store (never passed on a command line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any, List, Optional


class ServerError(RuntimeError):
    """`rewind serve` could not be started (its message says why)."""


def find_rewind(rewind: Optional[str] = None) -> str:
    """The `rewind` binary: `rewind` if given, else `$REWIND_BIN`, else `rewind` on PATH."""
    candidate = rewind or os.environ.get("REWIND_BIN") or shutil.which("rewind")
    if not candidate:
        raise ServerError("no rewind binary: put it on PATH or set REWIND_BIN")
    return candidate


class LocalServer:
    """`rewind [--store STORE] serve --listen 127.0.0.1:0` as a child process. `url` and
    `token` say how to reach it; `stop()` (or leaving a `with` block) ends it.

    `options` become flags: `read_only=True` is `--read-only`, `lock_timeout="5s"` is
    `--lock-timeout 5s`."""

    def __init__(self, store: Optional[str] = None, rewind: Optional[str] = None,
                 cwd: Optional[str] = None, **options: Any):
        args: List[str] = [find_rewind(rewind), "--json"]
        if store:
            args += ["--store", str(store)]
        args += ["serve", "--listen", "127.0.0.1:0"]
        for k, v in options.items():
            flag = "--" + k.replace("_", "-")
            if v is True:
                args.append(flag)
            elif v not in (None, False):
                args += [flag, str(v)]
        self._proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
            self._proc.wait()
            raise ServerError(f"rewind serve exited ({self._proc.returncode}): {err.strip()}")
        try:
            hello = json.loads(line)
            self.url: str = hello["listening"]
        except (ValueError, KeyError) as e:
            self.stop()
            raise ServerError(f"unexpected first line from rewind serve: {line!r}") from e
        self.token: Optional[str] = None
        token_file = hello.get("token_file")
        if token_file:
            with open(token_file, encoding="utf-8") as f:
                self.token = f.read().strip()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._proc.pid

    def running(self) -> bool:
        """Whether the server process is still alive."""
        return self._proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the server (SIGTERM, then SIGKILL after `timeout` seconds)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for s in (self._proc.stdout, self._proc.stderr):
            if s is not None:
                s.close()

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
