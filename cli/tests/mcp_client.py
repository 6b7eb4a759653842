"""An independent MCP client (the `mcp` package from PyPI) driving `rewind mcp` over a real
stdio session, as an agent would. cli/tests/mcp.rs prepares the workspace and store and runs
this script; each step asserts what it got and the script exits non-zero on the first failure.

Usage: mcp_client.py REWIND_BIN STORE WORKSPACE
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "checkpoint", "list_checkpoints", "changes", "restore", "undo", "redo", "run",
    "overlay_create", "overlay_diff", "overlay_runs", "overlay_accept", "overlay_reject",
    "changes_by_run", "revert",
}


def read(ws, name):
    with open(os.path.join(ws, name)) as f:
        return f.read()


def write(ws, name, text):
    with open(os.path.join(ws, name), "w") as f:
        f.write(text)


def check(cond, what, got=None):
    if not cond:
        raise AssertionError(f"{what}: got {json.dumps(got, default=str)[:2000]}")


async def call(session, name, args=None):
    """A tool call that must succeed; returns its structured content (validated against the
    tool's output schema by the client) after checking the text rendering is there."""
    return (await call_text(session, name, args))[0]


async def call_text(session, name, args=None):
    """`call`, returning the text rendering too."""
    r = await session.call_tool(name, args or {})
    text = " ".join(c.text for c in r.content if getattr(c, "text", None))
    check(not r.is_error, f"{name} failed", text)
    check(r.structured_content is not None, f"{name}: no structuredContent", text)
    check(text.strip() != "", f"{name}: no text rendering", r.structured_content)
    return r.structured_content, text


async def main(binary, store, ws):
    params = StdioServerParameters(
        command=binary,
        args=["--store", store, "-C", ws, "mcp"],
        env={**os.environ, "NO_COLOR": "1"},
    )
    async with stdio_client(params) as (rd, wr):
        async with ClientSession(rd, wr) as s:
            await s.initialize()

            tools = (await s.list_tools()).tools
            names = {t.name for t in tools}
            check(TOOLS <= names, "tools missing", sorted(TOOLS - names))
            for t in tools:
                check(t.input_schema.get("type") == "object", f"{t.name}: input schema", t.input_schema)
                check(t.description, f"{t.name}: no description")
                check(t.output_schema and t.output_schema.get("type") == "object", f"{t.name}: output schema", t.output_schema)

            # A checkpoint with metadata, found again by that metadata.
            c1 = await call(s, "checkpoint", {"message": "first", "metadata": {"session": "s1", "turn": "1"}})
            check(c1["created"] and c1["snapshot"]["message"] == "first", "checkpoint", c1)
            check(c1["snapshot"]["meta"] == {"session": "s1", "turn": "1"}, "checkpoint meta", c1)
            # The paths passed over, listed as `snapshot --json` lists them (not a count).
            check(c1["skipped"] == [], "checkpoint: skipped is a list", c1)
            first = c1["snapshot"]["id"]
            # The Rust side compares these field names with `rewind log --json`'s.
            print("SNAPSHOT " + json.dumps(c1["snapshot"]))
            check(c1["snapshot"]["short_id"] and first.startswith(c1["snapshot"]["short_id"]), "short id", c1)

            write(ws, "a.txt", "one\nTWO\nthree\n")
            write(ws, "new.txt", "new file\n")
            os.remove(os.path.join(ws, "gone.txt"))

            st = await call(s, "changes", {})
            by = {f["path"]: f for f in st["files"]}
            check(st["old"] == first and st["new"] == "live", "changes: sides", st)
            check(by.get("a.txt", {}).get("status") == "modified", "changes: a.txt", st)
            check(by.get("new.txt", {}).get("status") == "added", "changes: new.txt", st)
            check(by.get("gone.txt", {}).get("status") == "deleted", "changes: gone.txt", st)
            check(by["a.txt"]["insertions"] == 1 and by["a.txt"]["deletions"] == 1, "changes: stat", st)
            check("hunks" not in by["a.txt"] and "patch" not in st, "stat has no hunks", st)

            p = await call(s, "changes", {"format": "patch", "paths": ["a.txt"]})
            check([f["path"] for f in p["files"]] == ["a.txt"], "changes: paths filter", p)
            hunks = p["files"][0]["hunks"]
            check(len(hunks) == 1 and "+TWO\n" in hunks[0]["lines"] and "-two\n" in hunks[0]["lines"], "changes: hunks", p)
            check("+TWO" in p["patch"] and "a/a.txt" in p["patch"], "changes: patch", p)

            c2 = await call(s, "checkpoint", {"message": "second", "metadata": {"session": "s1", "turn": "2"}})
            check(c2["files_changed"] == 3, "checkpoint: files changed vs previous", c2)
            check(sorted(c["path"] for c in c2["changes"]) == ["a.txt", "gone.txt", "new.txt"], "checkpoint: changes", c2)
            second = c2["snapshot"]["id"]
            check(c2["snapshot"]["parent"] == first, "checkpoint: parent", c2)

            lst = await call(s, "list_checkpoints", {"metadata": {"turn": "1"}})
            check([x["id"] for x in lst["snapshots"]] == [first], "list by metadata", lst)
            lst = await call(s, "list_checkpoints", {"limit": 1})
            check([x["id"] for x in lst["snapshots"]] == [second], "list limit", lst)
            lst = await call(s, "list_checkpoints", {"since": "1h"})
            check(len(lst["snapshots"]) == 2, "list since", lst)

            between = await call(s, "changes", {"from": first, "to": second})
            check(between["totals"]["files_changed"] == 3, "changes between snapshots", between)

            # Restore: the preview changes nothing and says what would be overwritten/deleted.
            write(ws, "a.txt", "scribbled\n")
            dry = await call(s, "restore", {"rev": first, "dry_run": True})
            acts = {e["path"]: e["action"] for e in dry["plan"]}
            check(dry["dry_run"] and acts.get("a.txt") == "overwrite", "dry run: a.txt", dry)
            check(acts.get("new.txt") == "delete" and acts.get("gone.txt") == "create", "dry run: plan", dry)
            check(dry["overwrites"] >= 1 and dry["deletes"] == 1 and dry["creates"] == 1, "dry run: counts", dry)
            check(read(ws, "a.txt") == "scribbled\n" and os.path.exists(os.path.join(ws, "new.txt")), "dry run changed files", None)

            rs = await call(s, "restore", {"rev": first})
            check(not rs["dry_run"] and rs["op"] is not None, "restore", rs)
            check(read(ws, "a.txt") == "one\ntwo\nthree\n", "restore: a.txt", read(ws, "a.txt"))
            check(not os.path.exists(os.path.join(ws, "new.txt")), "restore: new.txt left", None)
            check(read(ws, "gone.txt") == "bye\n", "restore: gone.txt", None)

            u = await call(s, "undo", {})
            check(u["undone"]["kind"] == "restore" and not u["redo"], "undo", u)
            check(read(ws, "a.txt") == "scribbled\n", "undo: a.txt back", read(ws, "a.txt"))
            r2 = await call(s, "redo", {})
            check(r2["redo"], "redo", r2)
            check(read(ws, "a.txt") == "one\ntwo\nthree\n", "redo: a.txt", read(ws, "a.txt"))

            # Restore by hunk: the ids of the diff from the live tree to the snapshot.
            back = await call(s, "changes", {"from": "live", "to": second, "paths": ["a.txt"], "format": "patch"})
            hid = back["files"][0]["hunks"][0]["id"]
            rh = await call(s, "restore", {"rev": second, "hunks": [hid]})
            check([f["path"] for f in rh["edited"]] == ["a.txt"] and rh["op"] is not None, "restore by hunk", rh)
            check(read(ws, "a.txt") == "one\nTWO\nthree\n", "restore by hunk: a.txt", read(ws, "a.txt"))

            # A command between two snapshots; what it prints must not reach the protocol.
            run = await call(s, "run", {
                "command": ["sh", "-c", "echo noise on stdout; echo noise >&2; read x; echo ran > ran.txt"],
                "message": "a run",
                "capture_patch": True,
            })
            check(run["version"] == 1 and run["before"] and run["after"], "run result", run)
            check(os.path.exists(os.path.join(ws, "ran.txt")), "run: file", run)
            check("ran.txt" in json.dumps(run["diff"]), "run: diff names ran.txt", run["diff"])
            check("+ran" in (run["patch"] or ""), "run: patch", run)

            # Overlay review: accept one of two hunks.
            write(ws, "long.txt", "".join(f"line {i}\n" for i in range(1, 41)))
            await call(s, "checkpoint", {"message": "long"})
            ov = await call(s, "overlay_create", {"name": "review"})
            check(ov["path"], "overlay path", ov)
            check("files_copied" in ov and "seconds" in ov, "overlay_create: the create object", ov)
            olong = os.path.join(ov["path"], "long.txt")
            with open(olong) as f:
                lines = f.read().splitlines(True)
            lines[1] = "line 2 CHANGED\n"
            lines[37] = "line 38 CHANGED\n"
            with open(olong, "w") as f:
                f.write("".join(lines))
            od = await call(s, "overlay_diff", {"overlay": "review"})
            hs = od["files"][0]["hunks"]
            _, runs_text = await call_text(s, "overlay_runs", {"overlay": "review"})
            check("outside any run (1 files, 2 hunks)" in runs_text, "overlay_runs text", runs_text)
            check(od["overlay"] == ov["id"] and len(hs) == 2, "overlay diff: two hunks", od)
            acc = await call(s, "overlay_accept", {"overlay": ov["id"], "hunks": [hs[0]["id"]]})
            check(acc["op"] is not None, "overlay accept", acc)
            live = read(ws, "long.txt")
            check("line 2 CHANGED" in live and "line 38 CHANGED" not in live, "accept by hunk", live)
            od2 = await call(s, "overlay_diff", {"overlay": ov["id"]})
            pending = [h for f in od2["files"] for h in (f.get("hunks") or []) if h["pending"]]
            check([h["id"] for h in pending] == [hs[1]["id"]], "one hunk pending", od2)
            rej = await call(s, "overlay_reject", {"overlay": ov["id"], "hunks": [hs[1]["id"]]})
            check(rej["overlay"] == ov["id"], "overlay reject", rej)
            with open(olong) as f:
                check("line 38 CHANGED" not in f.read(), "reject set the hunk back in the overlay")

            # Two runs edit neighbouring lines of one file: changes_by_run cuts the shared hunk
            # by run, and revert takes back only the first run's line.
            numbered = "".join(f"n{i}\n" for i in range(1, 21))
            write(ws, "runs.txt", numbered)
            start = (await call(s, "checkpoint", {"message": "before the runs"}))["snapshot"]["id"]
            await call(s, "run", {"command": ["sed", "-i", "10s/.*/FIRST/", "runs.txt"]})
            await call(s, "run", {"command": ["sed", "-i", "11s/.*/SECOND/", "runs.txt"]})
            by, by_text = await call_text(s, "changes_by_run", {"from": start})
            check(by_text.count("(1 files, 1 hunks)") == 2, "changes_by_run text", by_text)
            check([u["run"] for u in by["units"]] == [1, 2], "two runs", by)
            check([g["run"] for g in by["runs"]] == [1, 2], "one group per run", by)
            dry = await call(s, "revert", {"from": start, "run": 1, "dry_run": True})
            check(dry["dry_run"] and dry["op"] is None and "FIRST" in read(ws, "runs.txt"), "dry run", dry)
            rv = await call(s, "revert", {"from": start, "run": 1})
            lines = read(ws, "runs.txt").splitlines()
            check(rv["op"] is not None and lines[9] == "n10" and lines[10] == "SECOND", "revert run 1", lines)
            bad = await s.call_tool("revert", {"from": start, "run": 7})
            text = " ".join(c.text for c in bad.content if getattr(c, "text", None))
            check(bad.is_error and "no run 7" in text, "an unknown run is a tool error", text)

            # Resources: listed, a snapshot and a file in it.
            res = (await s.list_resources()).resources
            uris = [str(r.uri) for r in res]
            check(f"rewind://snapshot/{first}" in uris, "resources listed", uris)
            templates = (await s.list_resource_templates()).resource_templates
            check(any("/file/" in t.uri_template for t in templates), "templates", [t.uri_template for t in templates])
            snap = await s.read_resource(f"rewind://snapshot/{first}")
            body = json.loads(snap.contents[0].text)
            check(body["snapshot"]["id"] == first and any(e["path"] == "a.txt" for e in body["entries"]), "snapshot resource", body)
            # Its entries are the tree entries the CLI's ls and the API's tree route list, each
            # with the URI that reads it.
            a_txt = next(e for e in body["entries"] if e["path"] == "a.txt")
            check(body["path"] == "" and a_txt["name"] == "a.txt" and len(a_txt["id"]) == 64
                  and a_txt["uri"].endswith("/file/a.txt"), "snapshot resource entries", body)
            f = await s.read_resource(f"rewind://snapshot/{second}/file/a.txt")
            check(f.contents[0].text == "one\nTWO\nthree\n", "file resource", f.contents[0].text)

            # Errors are tool errors with the library's message, and the session goes on.
            bad = await s.call_tool("restore", {"rev": "no-such-rev"})
            text = " ".join(c.text for c in bad.content if getattr(c, "text", None))
            check(bad.is_error and "no-such-rev" in text, "bad revision is a tool error", text)
            bad = await s.call_tool("changes", {"paths": ["../outside"]})
            check(bad.is_error, "a path outside the workspace is a tool error", bad.content)
            bad = await s.call_tool("run", {"command": []})
            check(bad.is_error, "an empty command is a tool error", bad.content)
            bad = await s.call_tool("list_checkpoints", {"limit": "many"})
            text = " ".join(c.text for c in bad.content if getattr(c, "text", None))
            check(bad.is_error and "limit" in text, "a bad argument is a tool error naming it", text)
            bad = await s.call_tool("checkpoint", {"mesage": "typo"})
            text = " ".join(c.text for c in bad.content if getattr(c, "text", None))
            check(bad.is_error and "mesage" in text, "an unknown argument is a tool error naming it", text)
            again = await call(s, "list_checkpoints", {"limit": 1})
            check(len(again["snapshots"]) == 1, "the session survives errors", again)
    print("mcp_client: all steps passed")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
