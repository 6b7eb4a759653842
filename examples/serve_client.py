#!/usr/bin/env python3
"""A small client of `rewind serve`, with the standard library only.

    python3 examples/serve_client.py http://127.0.0.1:7878 [TOKEN]

TOKEN is the content of serve.token in the store directory (read from there when not given,
with the store at REWIND_STORE or ~/.local/share/rewind); the server requires it on every
request.

It lists the workspaces, takes a snapshot of the first one, shows what changed since the
snapshot before, stores and reads back an artifact, and prints one line per step. Errors come
back as JSON with a stable "code" (see serve/openapi.json); this client raises them as
RewindError.
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


class RewindError(Exception):
    """An API error: the HTTP status, the stable code and the message."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class Rewind:
    def __init__(self, base, token=None):
        self.base = base.rstrip("/")
        self.token = token

    def request(self, method, path, body=None, query=None, raw=False):
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode(query, doseq=True)
        data = None
        headers = {}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                payload = r.read()
        except urllib.error.HTTPError as e:
            err = json.loads(e.read() or b"{}")
            raise RewindError(e.code, err.get("code"), err.get("error")) from None
        return payload if raw else json.loads(payload)

    def workspaces(self):
        return self.request("GET", "/v1/workspaces")

    def snapshot(self, ws, message=None, meta=None):
        return self.request("POST", f"/v1/workspaces/{ws}/snapshots",
                            {"message": message, "meta": meta or {}})

    def diff(self, ws, frm="@", to="live"):
        return self.request("GET", f"/v1/workspaces/{ws}/diff", query={"from": frm, "to": to})

    def put_artifact(self, key, data):
        return self.request("PUT", "/v1/artifacts/" + urllib.parse.quote(key), data,
                            query={"force": "true"})

    def get_artifact(self, key):
        return self.request("GET", "/v1/artifacts/" + urllib.parse.quote(key), raw=True)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    token = argv[2] if len(argv) > 2 else None
    if token is None:
        store = os.environ.get("REWIND_STORE") or os.path.expanduser("~/.local/share/rewind")
        try:
            with open(os.path.join(store, "serve.token")) as f:
                token = f.read().strip()
        except OSError:
            pass
    api = Rewind(argv[1], token)
    wss = api.workspaces()
    print(f"workspaces: {len(wss)}")
    if not wss:
        return 0
    ws = wss[0]["id"]
    taken = api.snapshot(ws, message="from the example client", meta={"client": "python"})
    snap = taken["snapshot"]
    print(f"snapshot: {snap['short_id']} unchanged={taken['unchanged']}")
    if snap["parent"]:
        d = api.diff(ws, frm=snap["parent"], to=snap["id"])
        for f in d["files"]:
            hunks = len(f["hunks"] or [])
            print(f"changed: {f['status']} {f['path']} +{f['insertions']} -{f['deletions']} hunks={hunks}")
    api.put_artifact("examples/hello.txt", b"hello from python\n")
    print("artifact: " + api.get_artifact("examples/hello.txt").decode().strip())
    try:
        api.request("GET", "/v1/workspaces/999999")
    except RewindError as e:
        print(f"error code: {e.code}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
