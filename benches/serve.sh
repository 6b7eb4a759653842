#!/usr/bin/env bash
# rewind serve on a real tree: a diff of 15 changed files over HTTP, a warm status through the
# API against the CLI's, sustained small reads (rate and p99) and the server's memory.
#
# usage: benches/serve.sh [CORPUS]    (default /work/corpus/linux; copied, never modified)
# Builds the release binary. Needs python3 and curl; ab (apache2-utils) for the per-route
# reads. Prints medians; the machine is shared, so each comparison is timed in the same loop
# (API and CLI alternating).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${1:-/work/corpus/linux}
(cd "$HERE" && cargo build --release --quiet -p rewind-cli)
R=$HERE/target/release/rewind
WORK=$(mktemp -d "${TMPDIR:-/tmp}/serve-bench.XXXXXX")
SERVER=
cleanup() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
export REWIND_STORE=$WORK/store NO_COLOR=1
# Hard links (the disk is shared and short); every edit below writes a new file and renames it
# over the old name, so the corpus itself is never modified.
cp -al "$CORPUS" "$WORK/ws"
$R -C "$WORK/ws" init -q
$R -C "$WORK/ws" snapshot -q >/dev/null
# 15 changed files: a line appended to each, as a new file renamed over the linked one.
mapfile -t CHANGED < <(find "$WORK/ws" -name '*.c' | sort | head -15 || true)
for f in "${CHANGED[@]}"; do
	{ cat "$f"; printf '/* changed */\n'; } > "$f.new" && mv "$f.new" "$f"
done

"$R" --json serve --listen 127.0.0.1:0 > "$WORK/serve.out" &
SERVER=$!
for _ in $(seq 100); do [ -s "$WORK/serve.out" ] && break; sleep 0.1; done
URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listening"])' "$WORK/serve.out")
TOKEN=$(cat "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token_file"])' "$WORK/serve.out")")
echo "server: $URL pid $SERVER"
echo "idle server memory (VmRSS after start): $(grep VmRSS /proc/$SERVER/status | awk '{print $2, $3}')"
tar -cf - -C "$WORK" ws > /dev/null   # warm the tree

python3 - "$URL" "$R" "$WORK/ws" "$SERVER" "$TOKEN" <<'PY'
import http.client, json, os, statistics, subprocess, sys, threading, time, urllib.parse
url, rewind, ws, pid, token = sys.argv[1:]
host = urllib.parse.urlparse(url).netloc

def conn():
    return http.client.HTTPConnection(host, timeout=120)

def get(c, path):
    c.request("GET", path, headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body[:200])
    return body

c = conn()
# The diff between the two snapshots' trees (15 files, JSON with hunks), after a snapshot of the
# edits: GET /diff?from=@~1&to=@.
subprocess.run([rewind, "-C", ws, "snapshot", "-q"], check=True, stdout=subprocess.DEVNULL)
times = []
for _ in range(30):
    t = time.perf_counter(); b = get(c, "/v1/workspaces/1/diff?from=%40~1&to=%40"); times.append(time.perf_counter() - t)
d = json.loads(b)
print(f"GET diff @~1..@ ({d['totals']['files_changed']} files, with hunks): median {statistics.median(times)*1e3:.1f} ms, min {min(times)*1e3:.1f} ms")
# Live diff: the 15 files against the workspace as it is (a walk of the whole tree, warm).
for f in subprocess.run(["sh", "-c", f"find {ws} -name '*.c' | sort | head -15"], capture_output=True, text=True).stdout.split():
    data = open(f, "rb").read() + b"/* again */\n"
    open(f + ".new", "wb").write(data); os.replace(f + ".new", f)
api, cli = [], []
for _ in range(7):
    t = time.perf_counter(); b = get(c, "/v1/workspaces/1/status"); api.append(time.perf_counter() - t)
    t = time.perf_counter(); subprocess.run([rewind, "-C", ws, "status", "--json"], check=True, stdout=subprocess.DEVNULL); cli.append(time.perf_counter() - t)
print(f"warm status: API median {statistics.median(api)*1e3:.0f} ms, CLI median {statistics.median(cli)*1e3:.0f} ms ({len(json.loads(b)['changes'])} changes)")
times = []
for _ in range(7):
    t = time.perf_counter(); b = get(c, "/v1/workspaces/1/diff"); times.append(time.perf_counter() - t)
print(f"GET diff @..live (15 files, with hunks, walks the tree): median {statistics.median(times)*1e3:.0f} ms")

# Sustained small reads: 4 client threads on kept-alive connections for 10 s, mixing a file at
# a snapshot, a tree listing and the workspace record.
paths = ["/v1/workspaces/1/files/%40/Makefile", "/v1/workspaces/1/tree/%40?path=kernel", "/v1/workspaces/1", "/v1/workspaces/1/files/%40/README"]
lat, lock, stop = [], threading.Lock(), time.time() + 10
def worker(k):
    c = conn(); mine = []; i = k
    while time.time() < stop:
        p = paths[i % len(paths)]; i += 1
        t = time.perf_counter(); get(c, p); mine.append(time.perf_counter() - t)
    with lock: lat.extend(mine)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
t0 = time.time(); [t.start() for t in ts]; [t.join() for t in ts]; el = time.time() - t0
lat.sort()
print(f"small reads: {len(lat)/el:.0f} req/s over {el:.1f} s, p50 {lat[len(lat)//2]*1e3:.2f} ms, p99 {lat[int(len(lat)*0.99)]*1e3:.2f} ms (4 clients, python http.client)")
st = open(f"/proc/{pid}/status").read()
print("server memory after the load: " + " ".join(l.split(None, 1)[1].strip() for l in st.splitlines() if l.startswith(("VmRSS", "VmHWM"))).replace("kB", "KiB"))
PY

# The same small reads per route from a second load generator, ApacheBench (Debian's
# apache2-utils; Python's threads share one interpreter lock): 4 kept-alive clients, 10 s per
# route. A route far slower than the others here is a latency bug (this is how a missing
# TCP_NODELAY showed: 104 req/s and p50 44 ms for a 727-byte file).
if command -v ab >/dev/null; then
	for p in "/v1/workspaces/1/files/%40/Makefile" "/v1/workspaces/1/tree/%40?path=kernel" \
		"/v1/workspaces/1" "/v1/workspaces/1/files/%40/README"; do
		out=$(ab -k -q -c 4 -t 10 -n 10000000 -H "Authorization: Bearer $TOKEN" "$URL$p" 2>&1)
		rate=$(awk '/Requests per second/ {print $4}' <<<"$out")
		p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
		p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
		failed=$(awk '/Failed requests/ {print $3}' <<<"$out")
		echo "ab -k -c 4, GET $p: $rate req/s, p50 $p50 ms, p99 $p99 ms, failed $failed"
	done
	echo "server memory after ab: $(grep -E 'VmRSS|VmHWM' /proc/$SERVER/status | awk '{printf "%s %s %s  ", $1, $2, $3}')"
else
	echo "ab not found (apt-get install apache2-utils): skipping the ApacheBench reads"
fi
