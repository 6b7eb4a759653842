#!/usr/bin/env bash
# A Claude Code PostToolUse hook round trip (process start to exit) with the watch daemon,
# against what shadow-git checkpointers do (`git add -A && git commit` in a separate git dir
# whose work tree is the workspace), after the same one-file edit, in one run. Wall time and
# CPU time (user + system of the process and its children) per call; medians at the end.
#
# usage: benches/hook.sh CORPUS_DIR [RUNS]   (e.g. /work/corpus/linux; release build first:
#        cargo build --release -p rewind-cli). The corpus is copied; the copy is removed at
#        the end (KEEP=1 keeps it).
set -euo pipefail
export LC_ALL=C
SRC=$1 RUNS=${2:-10}
BIN=${REWIND_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/rewind}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hookbench.XXXXXX")
ws=$tmp/ws store=$tmp/store gitdir=$tmp/git
cleanup() {
	"$BIN" --store "$store" daemon stop >/dev/null 2>&1 || true
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
cp -a "$SRC" "$ws"
"$BIN" --store "$store" -C "$ws" init >/dev/null
"$BIN" --store "$store" -C "$ws" snapshot -q >/dev/null
"$BIN" --store "$store" -C "$ws" watch on >/dev/null
"$BIN" --store "$store" daemon start >/dev/null
sleep 2
"$BIN" --store "$store" -C "$ws" snapshot -q >/dev/null
git --git-dir="$gitdir" --work-tree="$ws" init -q
git --git-dir="$gitdir" --work-tree="$ws" add -A
git --git-dir="$gitdir" --work-tree="$ws" -c user.name=b -c user.email=b@b commit -qm base
f=$(cd "$ws" && find . -name '*.c' | sort | sed -n 1p)
[ -n "$f" ] || f=$(cd "$ws" && find . -type f -not -path './.git/*' | sort | sed -n 1p)
f=${f#./}
event() { printf '{"session_id":"bench","transcript_path":"/dev/null","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/%s"}}' "$ws" "$ws" "$f"; }
# The page cache here drops data untouched for ~30 s: read the tree before each timed call.
warm() { tar -cf - -C "$ws" . >/dev/null; }
# Timed from Python: wall from fork to exit, CPU (user + system) from the child's rusage
# (wait4), which has microsecond resolution where /usr/bin/time has 10 ms.
python3 - "$BIN" "$store" "$ws" "$gitdir" "$f" "$RUNS" <<'PY'
import json, os, statistics, subprocess, sys, time
bin_, store, ws, gitdir, f, runs = sys.argv[1:7]
def run(args, stdin=b""):
    t = time.perf_counter()
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.stdin.write(stdin); p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    assert p.returncode == 0, args
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000
def warm():
    subprocess.run(f"tar -cf - -C {ws} . > /dev/null", shell=True, check=True)
event = json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": ws,
                    "hook_event_name": "PostToolUse", "tool_name": "Edit",
                    "tool_input": {"file_path": f"{ws}/{f}"}}).encode()
git = ["git", f"--git-dir={gitdir}", f"--work-tree={ws}", "-c", "user.name=b", "-c", "user.email=b@b"]
rows = {}
for i in range(1, int(runs) + 1):
    with open(f"{ws}/{f}", "a") as fh: fh.write(f"// edit {i}\n")
    warm(); time.sleep(0.3)
    rows.setdefault("rewind hook", []).append(run([bin_, "--store", store, "hook", "claude"], event))
    with open(f"{ws}/{f}", "a") as fh: fh.write(f"// git {i}\n")
    warm()
    a = run(git + ["add", "-A"]); c = run(git + ["commit", "-qm", f"turn {i}"])
    rows.setdefault("git add+commit", []).append((a[0] + c[0], a[1] + c[1]))
for name, v in rows.items():
    wall = [w for w, _ in v]; cpu = [c for _, c in v]
    print(f"{name:16s} wall median {statistics.median(wall):7.1f} ms (min {min(wall):.1f}, max {max(wall):.1f})"
          f"  cpu median {statistics.median(cpu):6.1f} ms  n={len(v)}")
PY
# The hook recorded its snapshots (not a silent no-op).
n=$("$BIN" --store "$store" -C "$ws" log --session bench --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
echo "snapshots recorded by the hook: $n of $RUNS"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
