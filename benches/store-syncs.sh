#!/usr/bin/env bash
# Two rewind builds side by side, daemon running, in the same rounds: fdatasync/fsync count
# per command (strace -f, stable) and wall / CPU medians (noisy on a shared machine).
#
#   benches/store-syncs.sh OLD_BIN NEW_BIN [CORPUS] [RUNS]   (default /work/corpus/linux, 7)
#
# Copies CORPUS to a scratch directory, takes the cold snapshot, starts the daemon (NEW_BIN's)
# and then, each round (tree read first: the page cache drops data untouched for ~30 s), for
# each build: snapshot and status with nothing changed, `run -- true`, then 10 edits + 5 new
# files (../shared/bench/mutate.sh) and status, then snapshot. Needs strace and python3.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2
corpus=${3:-/work/corpus/linux}
runs=${4:-7}
mutate=${MUTATE:-$here/../shared/bench/mutate.sh}
[ -x "$mutate" ] || mutate=/work/shared/bench/mutate.sh
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-syncs.XXXXXX")
tree=$W/tree store=$W/store
cleanup() {
	"$new" --store "$store" daemon stop >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT
cp -a "$corpus" "$tree"
bash "$mutate" --list "$tree" >"$W/list"
"$new" --store "$store" -C "$tree" snapshot -q >/dev/null
"$new" --store "$store" -C "$tree" watch on >/dev/null
"$new" --store "$store" daemon start >/dev/null
sleep 2
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$old" "$new" "$store" "$tree" "$runs" "$mutate" "$W/list" <<'PY'
import os, statistics, subprocess, sys, time, resource
old, new, store, tree, runs, mutate, lst = sys.argv[1:8]
runs = int(runs)
steps = [("snapshot, nothing changed", ["snapshot", "-q"], False),
         ("status, nothing changed", ["status", "-q"], False),
         ("run -- true", ["run", "-q", "--", "true"], False),
         ("status, 10 edits + 5 new", ["status", "-q"], True),
         ("snapshot, 10 edits + 5 new", ["snapshot", "-q"], False)]
def cmd(b, args): return [b, "--store", store, "-C", tree] + args
def syncs(b, args):
    out = subprocess.run(["strace", "-f", "-qq", "-e", "trace=fdatasync,fsync", "-o", "/dev/stdout"] + cmd(b, args),
                         capture_output=True, text=True).stdout
    return out.count("sync(")
res = {}
rnd = 0
for r in range(runs):
    subprocess.run(f"tar -cf - -C {tree} . > /dev/null", shell=True)
    for name, b in (("old", old), ("new", new)):
        for label, args, edit in steps:
            if edit:
                rnd += 1
                subprocess.run(["bash", mutate, tree, lst, str(rnd)], check=True)
                time.sleep(0.3)  # let the daemon see the events
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd(b, args), check=True, stdout=subprocess.DEVNULL)
            wall = (time.perf_counter() - t0) * 1000
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = ((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)) * 1000
            res.setdefault((name, label), []).append((wall, cpu))
counts = {}
for name, b in (("old", old), ("new", new)):
    for label, args, edit in steps:
        if not edit and "edits" not in label:
            counts[(name, label)] = syncs(b, args)
print("| step | syncs old / new | wall median ms old / new | CPU median ms old / new |")
print("|---|---|---|---|")
for label, _, _ in steps:
    o, n = res[("old", label)], res[("new", label)]
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    sc = f"{counts.get(('old', label), '-')} / {counts.get(('new', label), '-')}"
    print(f"| {label} | {sc} | {med(o,0):.0f} / {med(n,0):.0f} | {med(o,1):.1f} / {med(n,1):.1f} |")
PY
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
