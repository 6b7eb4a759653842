"""The clients against a real `rewind serve` (see conftest.py)."""

import asyncio
import queue
import threading
import time

import pytest

from rewind_client import ApiError, AsyncClient, Client, LocalServer, models


def test_health_and_the_served_document(client, openapi):
    h = client.health()
    assert isinstance(h, models.Health) and h.ok
    assert client.openapi() == openapi


def test_snapshots_files_and_diffs_are_typed(client, ws):
    [w] = client.workspaces()
    assert isinstance(w, models.Workspace) and w.path == str(ws.dir.resolve())
    (ws.dir / "a.txt").write_text("1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n")
    taken = client.snapshot(w.id, message="via python", meta={"agent": "py"}, tags=["py"])
    assert isinstance(taken, models.SnapshotTaken) and taken.snapshot.message == "via python"
    assert taken.snapshot.meta == {"agent": "py"}
    log = client.snapshots(w.id)
    assert [s.message for s in log] == ["via python", "base"]
    assert isinstance(log[0], models.LogEntry) and log[0].restored is False
    shown = client.show(w.id, "@")
    assert isinstance(shown, models.SnapshotShown) and shown.short_id == taken.snapshot.short_id
    assert [c.path for c in shown.changes] == ["a.txt"]
    assert client.snapshots(w.id, meta={"agent": "py"})[0].id == taken.snapshot.id
    assert client.file(w.id, "@~1", "a.txt").startswith(b"1\n2\n")
    d = client.diff(w.id, "@~1", "@")
    assert isinstance(d, models.Changes) and d.old and d.files[0].path == "a.txt"
    hunk = d.files[0].hunks[0]
    assert isinstance(hunk, models.Hunk) and "+TWO\n" in hunk.lines
    assert "+TWO" in client.diff(w.id, "@~1", "@", format="patch")
    assert client.status(w.id).clean
    written = client.revert(w.id, "@~1", "@", hunks=[hunk.id])
    assert isinstance(written, models.Revert) and written.files[0].path == "a.txt"
    assert "TWO" not in (ws.dir / "a.txt").read_text()
    client.undo(w.id)
    assert "TWO" in (ws.dir / "a.txt").read_text()
    assert any(o.kind == "undo" for o in client.ops(w.id))


def test_errors_carry_the_api_code(client, server):
    with pytest.raises(ApiError) as e:
        client.workspace(9999)
    assert e.value.code == "not_found" and e.value.status == 404
    with pytest.raises(ApiError) as e:
        client.run(1, [])
    assert e.value.code == "bad_request" and "command" in e.value.message
    with Client(server.url, "wrong-token") as bad:
        with pytest.raises(ApiError) as e:
            bad.workspaces()
    assert e.value.code == "unauthorized"


def test_init_a_new_workspace(client, tmp_path):
    d = tmp_path / "other"
    d.mkdir()
    (d / "f.txt").write_text("f\n")
    w = client.init(str(d.resolve()))
    assert isinstance(w, models.WorkspaceRegistered) and w.newly_registered
    assert client.snapshot(w.id).snapshot.files == 1
    with pytest.raises(ApiError) as e:
        client.init("relative")
    assert e.value.code == "bad_request"


def test_runs_with_options_and_hunks(client, ws):
    [w] = client.workspaces()
    r = client.run(w.id, ["sh", "-c", "sed -i 's/^3$/THREE/' a.txt; echo l > x.log"],
                   hunks=True, ignore=["*.log"], contract={"forbid": ["secret/**"]})
    assert isinstance(r, models.RunResult) and r.success
    assert isinstance(r.diff, models.RunDiff)
    [f] = r.diff.files
    assert f.path == "a.txt" and isinstance(f.hunks[0], models.Hunk)
    started = client.run(w.id, ["sh", "-c", "echo later > later.txt"], wait=False)
    assert isinstance(started, models.RunStarted)
    for _ in range(200):
        state = client.run_state(started.run)
        if state.status != "running":
            break
        time.sleep(0.05)
    assert state.status == "finished" and isinstance(state.result, models.RunResult)
    assert (ws.dir / "later.txt").read_text() == "later\n"


def test_workspace_runs_are_reviewed_and_reverted_one_by_one(client, ws):
    [w] = client.workspaces()
    client.run(w.id, ["sed", "-i", "s/^3$/THREE/", "a.txt"])
    client.run(w.id, ["sed", "-i", "s/^4$/FOUR/", "a.txt"])
    by = client.runs(w.id, "@~4", "@")
    assert isinstance(by, models.RangeRuns) and [u.run for u in by.units] == [1, 2]
    assert [g.run for g in by.runs] == [1, 2]
    assert isinstance(by.runs[0].files[0], models.OverlayRunFile)
    client.revert(w.id, "@~4", "@", run=1)
    assert (ws.dir / "a.txt").read_text().splitlines()[2:4] == ["3", "FOUR"]


def test_overlay_review_split_and_checkpoint(client, ws):
    [w] = client.workspaces()
    ov = client.create_overlay(w.id, name="py", backend="copy")
    assert isinstance(ov, models.OverlayCreated) and ov.name == "py"
    client.overlay_run("py", ["sh", "-c", "sed -i -e 's/^2$/TWO/' -e 's/^5$/FIVE/' a.txt"])
    cp = client.overlay_snapshot("py", message="mid", meta={"turn": "1"})
    assert isinstance(cp, models.OverlaySnapshot) and cp.snapshot.meta["turn"] == "1"
    d = client.overlay_diff("py")
    [hunk] = d.files[0].hunks
    split = client.split("py", hunk.id)
    assert isinstance(split, models.OverlaySplit) and len(split.parts) == 2
    acc = client.accept("py", hunks=[split.parts[0].id])
    assert isinstance(acc, models.OverlayAccept) and acc.conflicts == []
    text = (ws.dir / "a.txt").read_text()
    assert "TWO" in text and "FIVE" not in text
    client.reject("py", hunks=[split.parts[1].id])
    assert client.overlay_diff("py").files == []
    assert isinstance(client.drop_overlay("py"), models.OverlayDropped)
    with pytest.raises(ApiError) as e:
        client.overlay("py")
    assert e.value.code == "not_found"


def test_artifacts(client):
    a = client.artifact_put("logs/run.txt", b"hello\n", meta={"kind": "log"})
    assert isinstance(a, models.ArtifactStored) and a.size == 6
    assert client.artifact_get("logs/run.txt") == b"hello\n"
    assert client.artifacts()[0].meta == {"kind": "log"}
    assert client.artifact_delete("logs/run.txt").removed == "logs/run.txt"
    with pytest.raises(ApiError) as e:
        client.artifact_get("logs/run.txt")
    assert e.value.code == "not_found"


def _collect(it, out):
    try:
        for e in it:
            out.put(e)
    except Exception as exc:  # the stream ends when the server stops
        out.put(exc)


def _wait(q, want, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            e = q.get(timeout=0.5)
        except queue.Empty:
            continue
        if not isinstance(e, Exception) and want(e):
            return e
    raise AssertionError("no such event")


def test_events_iterate_and_resume_with_last_event_id(client, ws):
    [w] = client.workspaces()
    q = queue.Queue()
    threading.Thread(target=_collect, args=(client.events(w.id, replay=True), q),
                     daemon=True).start()
    taken = client.snapshot(w.id, message="seen")
    e = _wait(q, lambda e: e.event == "snapshot" and e.data["id"] == taken.snapshot.id)
    assert e.id is not None
    missed = client.snapshot(w.id, message="missed")
    time.sleep(0.6)
    q2 = queue.Queue()
    threading.Thread(target=_collect, args=(client.events(w.id, last_event_id=e.id), q2),
                     daemon=True).start()
    got = _wait(q2, lambda x: x.event == "snapshot")
    assert got.data["id"] == missed.snapshot.id and got.id > e.id
    q3 = queue.Queue()
    threading.Thread(target=_collect, args=(client.events(w.id, last_event_id=1), q3),
                     daemon=True).start()
    gap = _wait(q3, lambda x: x.event == "gap")
    assert gap.id is None and gap.data["last_event_id"] == 1


def test_async_client(server, ws):
    async def main():
        async with AsyncClient(server.url, server.token) as c:
            assert (await c.health()).ok
            [w] = await c.workspaces()
            (ws.dir / "b.txt").write_text("b\n")
            taken = await c.snapshot(w.id, message="async")
            with pytest.raises(ApiError) as e:
                await c.workspace(4242)
            assert e.value.code == "not_found"
            r = await c.run(w.id, ["sh", "-c", "echo r > r.txt"], hunks=True)
            assert r.diff.files[0].path == "r.txt"

            async def first_snapshot():
                async for ev in c.events(w.id, replay=True):
                    if ev.event == "snapshot" and ev.data["id"] == taken.snapshot.id:
                        return ev

            ev = await asyncio.wait_for(first_snapshot(), 30)
            assert ev.id is not None

    asyncio.run(main())


def test_local_starts_and_stops_a_server(ws):
    c = Client.local(store=str(ws.store), rewind=ws.bin)
    srv = c._server
    assert srv.running() and srv.url.startswith("http://127.0.0.1:")
    assert c.health().ok
    c.close()
    assert not srv.running()
