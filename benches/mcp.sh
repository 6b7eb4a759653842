#!/usr/bin/env bash
# `rewind mcp` on a large tree with the watch daemon, beside shadow-git checkpoints, in one run.
#
#   benches/mcp.sh [CORPUS] [RUNS]     (default /work/corpus/linux, 7 runs)
#   benches/mcp.sh gen [RUNS]          a generated tree of the Linux tree's shape instead (78,600
#                                      files of ~2 KB in 5,000 directories: less disk)
#
# Copies CORPUS to a scratch directory, takes the first snapshot, turns the daemon on
# (`rewind watch on`, `rewind daemon start`), then starts ONE `rewind mcp` session with a small
# client (the `mcp` package from PyPI) and times, RUNS times each, medians:
#   - the `checkpoint` call with nothing changed, and after 10 edits + 5 new files
#     (../shared/bench/mutate.sh: 15 edits);
#   - the `changes` call (status, format stat) after those 15 edits;
#   - beside them, in the same rounds, what shadow-git checkpointers do: `git add -A && git
#     commit` in a separate git dir whose work tree is the workspace, and `git status`.
# Each call is timed in the client from request to response (the client's own cost included).
# The tree is read (tar > /dev/null) right before each round: the page cache on these machines
# drops data untouched for ~30 s. Needs: git, python3 with `mcp`.
# Env: REWIND_BIN (default target/release/rewind), MUTATE (default ../shared/bench/mutate.sh).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-/work/corpus/linux}
runs=${2:-7}
rewind=${REWIND_BIN:-$here/target/release/rewind}
mutate=${MUTATE:-$here/../shared/bench/mutate.sh}
[ -x "$mutate" ] || mutate=/work/shared/bench/mutate.sh

W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-mcp-bench.XXXXXX")
tree=$W/tree
store=$W/store
cleanup() {
	"$rewind" --store "$store" daemon stop >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$corpus" = gen ]; then
	python3 - "$tree" <<'PY'
import os, sys
root = sys.argv[1]
line = "static int value_%d = %d; /* a line of generated source text */\n"
for d in range(5000):
    top = os.path.join(root, f"d{d // 100:02d}", f"s{d % 100:02d}")
    os.makedirs(top, exist_ok=True)
    for f in range(16 if d < 3600 else 15):
        with open(os.path.join(top, f"f{f:02d}.c"), "w") as out:
            out.write("".join(line % (i, d * 100 + f) for i in range(30)))
PY
else
	cp -a "$corpus" "$tree"
fi
bash "$mutate" --list "$tree" >"$W/list"
R() { "$rewind" --store "$store" -C "$tree" "$@"; }
R init >/dev/null
R snapshot -q -m cold >/dev/null
# The shadow git: its own git dir, the workspace as its work tree.
export GIT_DIR=$W/shadow.git GIT_WORK_TREE=$tree
git init -q
git config user.email bench@example.com
git config user.name bench
git add -A && git commit -q -m cold
R watch on >/dev/null
R daemon start >/dev/null
sleep 2

cat >"$W/client.py" <<'PY'
import asyncio, json, os, subprocess, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

rewind, store, tree, mutate, listf, runs, W = sys.argv[1:8]
runs = int(runs)
samples = {}

def rec(name, s):
    samples.setdefault(name, []).append(s)

def warm():
    subprocess.run(f"tar -cf - -C {tree} . > /dev/null", shell=True, check=True)

def timed_sh(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

async def call(s, name, args):
    t = time.perf_counter()
    r = await s.call_tool(name, args)
    dt = time.perf_counter() - t
    if r.is_error:
        raise SystemExit(f"{name}: {r.content}")
    return dt, r.structured_content

async def main():
    p = StdioServerParameters(command=rewind, args=["--store", store, "-C", tree, "mcp"])
    async with stdio_client(p) as (rd, wr):
        async with ClientSession(rd, wr) as s:
            await s.initialize()
            await s.list_tools()
            await call(s, "checkpoint", {"message": "first"})
            for rnd in range(1, runs + 1):
                warm()
                dt, _ = await call(s, "checkpoint", {"message": "unchanged", "metadata": {"turn": str(rnd)}})
                rec("mcp checkpoint, nothing changed", dt)
                rec("git status, nothing changed", timed_sh("git status --porcelain"))
                subprocess.run(["bash", mutate, tree, listf, str(rnd)], check=True)
                warm()
                dt, c = await call(s, "changes", {})
                assert c["totals"]["files_changed"] == 15, c["totals"]
                rec("mcp changes (stat), 15 edits", dt)
                rec("git status, 15 edits", timed_sh("git status --porcelain"))
                warm()
                dt, c = await call(s, "checkpoint", {"message": "edits", "metadata": {"turn": str(rnd)}})
                assert c["files_changed"] == 15, c["files_changed"]
                rec("mcp checkpoint, 15 edits", dt)
                rec("git add -A && git commit, 15 edits",
                    timed_sh(f"git add -A && git commit -q -m r{rnd}"))
                warm()
                rec("git add -A && git commit, nothing changed",
                    timed_sh("git add -A && git commit -q --allow-empty -m e"))
    import statistics
    for k, v in samples.items():
        print(f"{k:45s} median {statistics.median(v)*1000:8.1f} ms  "
              f"(min {min(v)*1000:.1f}, max {max(v)*1000:.1f}, n={len(v)})")

asyncio.run(main())
PY
python3 "$W/client.py" "$rewind" "$store" "$tree" "$mutate" "$W/list" "$runs" "$W"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
