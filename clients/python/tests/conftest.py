"""A real `rewind serve` for the tests: a fresh store and workspace in a temporary directory,
the server on a free loopback port, stopped at the end. The binary: $REWIND_BIN, else
`rewind` on PATH (CI builds it and sets REWIND_BIN)."""

import os
import pathlib
import shutil
import subprocess

import pytest

from rewind_client import Client, LocalServer


def rewind_bin():
    b = os.environ.get("REWIND_BIN") or shutil.which("rewind")
    if not b:
        if os.environ.get("CI"):
            pytest.fail("no rewind binary: set REWIND_BIN")
        pytest.skip("no rewind binary: set REWIND_BIN")
    return b


class Workspace:
    """A store and a workspace registered in it, with one snapshot of a.txt."""

    def __init__(self, root: pathlib.Path):
        self.bin = rewind_bin()
        self.store = root / "store"
        self.dir = root / "ws"
        self.dir.mkdir()
        (self.dir / "a.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
        self.cli("init")
        self.cli("snapshot", "-m", "base")

    def cli(self, *args):
        out = subprocess.run(
            [self.bin, "--store", str(self.store), *args],
            cwd=self.dir,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, f"rewind {args}: {out.stderr}"
        return out.stdout


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path)


@pytest.fixture
def server(ws):
    srv = LocalServer(store=str(ws.store), rewind=ws.bin)
    yield srv
    srv.stop()
    assert not srv.running()


@pytest.fixture
def client(server):
    c = Client(server.url, server.token)
    yield c
    c.close()


@pytest.fixture
def openapi():
    import json

    path = pathlib.Path(__file__).resolve().parents[3] / "serve" / "openapi.json"
    return json.loads(path.read_text())
