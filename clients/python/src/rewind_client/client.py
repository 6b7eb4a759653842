"""Sync and async clients for `rewind serve`'s HTTP API (serve/openapi.json), over httpx.

Both clients have the same methods, built once in `_Api`: each method describes its request
and how to decode the answer; `Client` sends it and returns the result, `AsyncClient` returns
an awaitable of it. Errors are `ApiError`s carrying the API's stable `code`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Sequence
from urllib.parse import quote

import httpx

from . import models as m


class ApiError(Exception):
    """An error answer of the API: `status` (HTTP), `code` (stable, e.g. `not_found`,
    `conflict`, `bad_request`, `locked`, `unauthorized`) and the server's `message`."""

    def __init__(self, status: int, code: str, message: str, body: Any = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.body = body


@dataclass
class Event:
    """One server-sent event: its id (None for a `gap` event, which has none), its kind
    (`changed`, `snapshot`, `operation`, `run`, `daemon`, `gap`...) and its JSON object
    (`ServerEvent` in the document). Reconnect with `last_event_id=event.id` to get what
    was missed (or a `gap` event)."""

    id: Optional[int]
    event: str
    data: Dict[str, Any] = field(default_factory=dict)


@dataclass
class _Req:
    method: str
    path: str
    params: Optional[Dict[str, Any]] = None
    json: Any = None
    content: Optional[bytes] = None
    headers: Optional[Dict[str, str]] = None
    decode: Callable[[httpx.Response], Any] = lambda r: r.json()


def _raise_for(r: httpx.Response) -> None:
    if r.status_code < 400:
        return
    try:
        body = r.json()
        code, message = body.get("code", "error"), body.get("error", r.text)
        for cause in body.get("causes") or []:
            message += f": {cause}"
    except ValueError:
        body, code, message = r.text, "error", r.text
    raise ApiError(r.status_code, code, message, body)


def _json_of(cls):
    return lambda r: cls.from_json(r.json())


def _list_of(cls):
    return lambda r: [cls.from_json(x) for x in r.json()]


def _raw(r: httpx.Response) -> bytes:
    return r.content


def _seg(s: Any) -> str:
    return quote(str(s), safe="")


def _path(p: str) -> str:
    return quote(p, safe="/")


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class _SseParser:
    """Server-sent events, fed one line at a time (comments and keep-alives skipped)."""

    def __init__(self) -> None:
        self.kind: Optional[str] = None
        self.data: List[str] = []
        self.ident: Optional[int] = None

    def feed(self, line: str) -> Optional[Event]:
        line = line.rstrip("\r\n")
        if not line:
            event = None
            if self.data:
                text = "\n".join(self.data)
                try:
                    obj = json.loads(text)
                except ValueError:
                    obj = {"text": text}
                kind = self.kind or (obj.get("event") if isinstance(obj, dict) else None)
                event = Event(self.ident, kind or "message", obj)
            self.kind, self.data, self.ident = None, [], None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self.kind = value
        elif name == "data":
            self.data.append(value)
        elif name == "id":
            self.ident = int(value) if value.isdigit() else None
        return None


class _Api:
    """The routes, as request descriptions; `_do` sends them."""

    def _do(self, req: _Req):  # pragma: no cover - overridden
        raise NotImplementedError

    # Server
    def health(self):
        """`GET /v1/health`."""
        return self._do(_Req("GET", "/v1/health", decode=_json_of(m.Health)))

    def openapi(self):
        """`GET /v1/openapi.json`: the document this server implements."""
        return self._do(_Req("GET", "/v1/openapi.json"))

    # Workspaces and snapshots
    def workspaces(self):
        """`GET /v1/workspaces`."""
        return self._do(_Req("GET", "/v1/workspaces", decode=_list_of(m.Workspace)))

    def init(self, path: str, force: bool = False):
        """`POST /v1/workspaces`: registers a directory (an absolute path) as a workspace."""
        return self._do(
            _Req("POST", "/v1/workspaces", json={"path": str(path), "force": force},
                 decode=_json_of(m.WorkspaceRegistered))
        )

    def workspace(self, ws: int):
        """`GET /v1/workspaces/{ws}`."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}", decode=_json_of(m.Workspace)))

    def snapshots(self, ws: int, *, limit: Optional[int] = None, path: Optional[str] = None,
                  meta: Optional[Dict[str, str]] = None, **filters: Any):
        """`GET /v1/workspaces/{ws}/snapshots`, newest first."""
        params: Dict[str, Any] = _drop_none({"limit": limit, "path": path, **filters})
        if meta:
            params["meta"] = [f"{k}={v}" for k, v in meta.items()]
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/snapshots", params=params,
                             decode=_list_of(m.LogEntry)))

    def snapshot(self, ws: int, message: Optional[str] = None,
                 meta: Optional[Dict[str, str]] = None, tags: Sequence[str] = ()):
        """`POST /v1/workspaces/{ws}/snapshots`: takes a snapshot."""
        body = _drop_none({"message": message, "meta": meta, "tags": list(tags) or None})
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/snapshots", json=body,
                             decode=_json_of(m.SnapshotTaken)))

    def show(self, ws: int, rev: str = "@"):
        """`GET /v1/workspaces/{ws}/snapshots/{rev}`: a snapshot with its changes."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/snapshots/{_seg(rev)}",
                             decode=_json_of(m.SnapshotShown)))

    def tree(self, ws: int, rev: str = "@", path: Optional[str] = None):
        """`GET /v1/workspaces/{ws}/tree/{rev}`."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/tree/{_seg(rev)}",
                             params=_drop_none({"path": path}), decode=_json_of(m.Tree)))

    def file(self, ws: int, rev: str, path: str) -> Any:
        """`GET /v1/workspaces/{ws}/files/{rev}/{path}`: the bytes (`live`: the working tree)."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/files/{_seg(rev)}/{_path(path)}",
                             decode=_raw))

    def status(self, ws: int):
        """`GET /v1/workspaces/{ws}/status`."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/status", decode=_json_of(m.Status)))

    def diff(self, ws: int, from_: Optional[str] = None, to: Optional[str] = None,
             paths: Sequence[str] = (), **options: Any):
        """`GET /v1/workspaces/{ws}/diff` (JSON; `format="patch"` returns the patch text)."""
        params: Dict[str, Any] = _drop_none({"from": from_, "to": to, **options})
        if paths:
            params["path"] = list(paths)
        decode = (lambda r: r.text) if options.get("format") == "patch" else _json_of(m.Changes)
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/diff", params=params, decode=decode))

    def runs(self, ws: int, from_: str, to: str):
        """`GET /v1/workspaces/{ws}/runs`: from..to grouped by the run or tool call that made
        each line; `revert(ws, from_, to, run=N)` takes one back."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/runs",
                             params={"from": from_, "to": to}, decode=_json_of(m.RangeRuns)))

    def restore(self, ws: int, rev: str = "@", paths: Sequence[str] = (),
                hunks: Sequence[str] = (), **options: Any):
        """`POST /v1/workspaces/{ws}/restore`."""
        body = {"rev": rev, "paths": list(paths), "hunks": list(hunks), **options}
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/restore", json=body,
                             decode=_json_of(m.Restore)))

    def revert(self, ws: int, from_: Optional[str] = None, to: Optional[str] = None,
               paths: Sequence[str] = (), hunks: Sequence[str] = (), **options: Any):
        """`POST /v1/workspaces/{ws}/revert`."""
        body = _drop_none({"from": from_, "to": to, **options})
        body.update({"paths": list(paths), "hunks": list(hunks)})
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/revert", json=body,
                             decode=_json_of(m.Revert)))

    def apply(self, ws: int, patch: Any, check: bool = False):
        """`POST /v1/workspaces/{ws}/apply`: a unified or git patch (text or bytes)."""
        data = patch.encode() if isinstance(patch, str) else bytes(patch)
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/apply",
                             params={"check": "true"} if check else None, content=data,
                             headers={"Content-Type": "text/x-diff"},
                             decode=_json_of(m.Applied)))

    def undo(self, ws: int):
        """`POST /v1/workspaces/{ws}/undo`."""
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/undo", json={},
                             decode=_json_of(m.Undo)))

    def redo(self, ws: int):
        """`POST /v1/workspaces/{ws}/redo`."""
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/redo", json={},
                             decode=_json_of(m.Undo)))

    def ops(self, ws: int, limit: Optional[int] = None):
        """`GET /v1/workspaces/{ws}/ops`: the operation log, newest first."""
        return self._do(_Req("GET", f"/v1/workspaces/{ws}/ops",
                             params=_drop_none({"limit": limit}), decode=_list_of(m.Op)))

    # Runs
    def run(self, ws: int, command: Sequence[str], **options: Any):
        """`POST /v1/workspaces/{ws}/run`: a command between two snapshots. Options by the
        names of `rewind run`'s flags (`contract`, `on_violation`, `max_patch_bytes`,
        `ignore`, `scratch`, `hunks`, `isolate`...). With `wait=False`, a `RunStarted`."""
        return self._do(self._run_req(f"/v1/workspaces/{ws}/run", command, options))

    def run_state(self, run: int):
        """`GET /v1/runs/{run}`."""
        return self._do(_Req("GET", f"/v1/runs/{run}", decode=_json_of(m.RunState)))

    @staticmethod
    def _run_req(path: str, command: Sequence[str], options: Dict[str, Any]) -> _Req:
        body = {"command": list(command), **options}

        def decode(r: httpx.Response):
            if r.status_code == 202:
                return m.RunStarted.from_json(r.json())
            return m.RunResult.from_json(r.json())

        return _Req("POST", path, json=body, decode=decode)

    # Overlays
    def overlays(self, ws: Optional[int] = None):
        """`GET /v1/overlays` (or a workspace's)."""
        path = "/v1/overlays" if ws is None else f"/v1/workspaces/{ws}/overlays"
        return self._do(_Req("GET", path, decode=_list_of(m.Overlay)))

    def create_overlay(self, ws: int, name: Optional[str] = None,
                       backend: Optional[str] = None, rev: Optional[str] = None):
        """`POST /v1/workspaces/{ws}/overlays`."""
        body = _drop_none({"name": name, "backend": backend, "rev": rev})
        return self._do(_Req("POST", f"/v1/workspaces/{ws}/overlays", json=body,
                             decode=_json_of(m.OverlayCreated)))

    def overlay(self, ov: Any):
        """`GET /v1/overlays/{ov}` (id or name)."""
        return self._do(_Req("GET", f"/v1/overlays/{_seg(ov)}", decode=_json_of(m.Overlay)))

    def drop_overlay(self, ov: Any):
        """`DELETE /v1/overlays/{ov}`."""
        return self._do(_Req("DELETE", f"/v1/overlays/{_seg(ov)}",
                             decode=_json_of(m.OverlayDropped)))

    def overlay_diff(self, ov: Any):
        """`GET /v1/overlays/{ov}/diff`: the pending changes with hunk ids."""
        return self._do(_Req("GET", f"/v1/overlays/{_seg(ov)}/diff", decode=_json_of(m.OverlayDiff)))

    def overlay_run(self, ov: Any, command: Sequence[str], **options: Any):
        """`POST /v1/overlays/{ov}/run`: a command inside the overlay."""
        return self._do(self._run_req(f"/v1/overlays/{_seg(ov)}/run", command, options))

    def accept(self, ov: Any, paths: Sequence[str] = (), hunks: Sequence[str] = (),
               policy: Optional[str] = None, include_ignored: bool = False):
        """`POST /v1/overlays/{ov}/accept`: conflicts come back in `conflicts`."""
        body = _drop_none({"paths": list(paths), "hunks": list(hunks), "policy": policy,
                           "include_ignored": include_ignored})
        return self._do(_Req("POST", f"/v1/overlays/{_seg(ov)}/accept", json=body,
                             decode=_json_of(m.OverlayAccept)))

    def reject(self, ov: Any, paths: Sequence[str] = (), hunks: Sequence[str] = ()):
        """`POST /v1/overlays/{ov}/reject`."""
        return self._do(_Req("POST", f"/v1/overlays/{_seg(ov)}/reject",
                             json={"paths": list(paths), "hunks": list(hunks)},
                             decode=_json_of(m.OverlayReject)))

    def split(self, ov: Any, hunk: str):
        """`POST /v1/overlays/{ov}/split`: the parts of a hunk, each accepted on its own."""
        return self._do(_Req("POST", f"/v1/overlays/{_seg(ov)}/split", json={"hunk": hunk},
                             decode=_json_of(m.OverlaySplit)))

    def overlay_snapshot(self, ov: Any, message: Optional[str] = None,
                         meta: Optional[Dict[str, str]] = None):
        """`POST /v1/overlays/{ov}/snapshots`: a checkpoint of the overlay's state."""
        body = _drop_none({"message": message, "meta": meta})
        return self._do(_Req("POST", f"/v1/overlays/{_seg(ov)}/snapshots", json=body,
                             decode=_json_of(m.OverlaySnapshot)))

    # Artifacts
    def artifacts(self):
        """`GET /v1/artifacts`."""
        return self._do(_Req("GET", "/v1/artifacts", decode=_list_of(m.Artifact)))

    def artifact_put(self, key: str, data: bytes, meta: Optional[Dict[str, str]] = None):
        """`PUT /v1/artifacts/{key}`."""
        params = {"meta": [f"{k}={v}" for k, v in (meta or {}).items()]} if meta else None
        return self._do(_Req("PUT", f"/v1/artifacts/{_path(key)}", params=params,
                             content=bytes(data),
                             headers={"Content-Type": "application/octet-stream"},
                             decode=_json_of(m.ArtifactStored)))

    def artifact_get(self, key: str):
        """`GET /v1/artifacts/{key}`: the bytes."""
        return self._do(_Req("GET", f"/v1/artifacts/{_path(key)}", decode=_raw))

    def artifact_delete(self, key: str):
        """`DELETE /v1/artifacts/{key}`."""
        return self._do(_Req("DELETE", f"/v1/artifacts/{_path(key)}",
                             decode=_json_of(m.ArtifactRemoved)))

    def _events_req(self, workspace: Optional[int], last_event_id: Optional[int],
                    replay: bool) -> Dict[str, Any]:
        params: Dict[str, Any] = {}
        if workspace is not None:
            params["workspace"] = workspace
        if replay:
            params["replay"] = "true"
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        return {"params": params, "headers": headers}


def _headers(token: Optional[str]) -> Dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Client(_Api):
    """A client of a running `rewind serve` (`base_url` like `http://127.0.0.1:7420`, and the
    token from the store's `serve.token`). `Client.local()` starts a server for you."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 300.0,
                 server: Any = None):
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=_headers(token),
                                  timeout=timeout)
        self._server = server

    @classmethod
    def local(cls, store: Optional[str] = None, rewind: Optional[str] = None,
              **serve_options: Any) -> "Client":
        """Starts `rewind serve` on a free loopback port (see `LocalServer`) and returns a
        client of it; `close()` stops the server."""
        from .local import LocalServer

        srv = LocalServer(store=store, rewind=rewind, **serve_options)
        return cls(srv.url, srv.token, server=srv)

    def _do(self, req: _Req):
        r = self._http.request(req.method, req.path, params=req.params, json=req.json,
                               content=req.content, headers=req.headers)
        _raise_for(r)
        return req.decode(r)

    def events(self, workspace: Optional[int] = None, last_event_id: Optional[int] = None,
               replay: bool = False) -> Iterator[Event]:
        """`GET /v1/events` as an iterator of `Event`s (blocks until the next one; ends when
        the server closes the stream)."""
        opts = self._events_req(workspace, last_event_id, replay)
        with self._http.stream("GET", "/v1/events", timeout=httpx.Timeout(None, connect=10),
                               **opts) as r:
            if r.status_code >= 400:
                r.read()
                _raise_for(r)
            parser = _SseParser()
            for line in r.iter_lines():
                event = parser.feed(line)
                if event is not None:
                    yield event

    def close(self) -> None:
        """Closes the connections (and stops the server `local()` started)."""
        self._http.close()
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncClient(_Api):
    """`Client` for asyncio: every method returns an awaitable; `events` is an async
    iterator."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 300.0,
                 server: Any = None):
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=_headers(token),
                                       timeout=timeout)
        self._server = server

    @classmethod
    def local(cls, store: Optional[str] = None, rewind: Optional[str] = None,
              **serve_options: Any) -> "AsyncClient":
        """As `Client.local`."""
        from .local import LocalServer

        srv = LocalServer(store=store, rewind=rewind, **serve_options)
        return cls(srv.url, srv.token, server=srv)

    async def _do(self, req: _Req):
        r = await self._http.request(req.method, req.path, params=req.params, json=req.json,
                                     content=req.content, headers=req.headers)
        _raise_for(r)
        return req.decode(r)

    async def events(self, workspace: Optional[int] = None,
                     last_event_id: Optional[int] = None,
                     replay: bool = False) -> AsyncIterator[Event]:
        """`GET /v1/events` as an async iterator of `Event`s."""
        opts = self._events_req(workspace, last_event_id, replay)
        async with self._http.stream("GET", "/v1/events",
                                     timeout=httpx.Timeout(None, connect=10), **opts) as r:
            if r.status_code >= 400:
                await r.aread()
                _raise_for(r)
            parser = _SseParser()
            async for line in r.aiter_lines():
                event = parser.feed(line)
                if event is not None:
                    yield event

    async def aclose(self) -> None:
        """Closes the connections (and stops the server `local()` started)."""
        await self._http.aclose()
        if self._server is not None:
            self._server.stop()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
