#!/usr/bin/env bash
# rewind push / restore --remote beside restic backup / restore, against one local moto S3
# server, on a real tree; then a second push after 15 changed files; then the same rewind
# figures on a file:// remote (moto, in Python, may dominate the S3 times).
#
# usage: benches/remote.sh [-n RUNS] [CORPUS]
#   CORPUS  the tree (default /work/corpus/linux); it is copied once to a scratch dir, so the
#           15 changes never touch it
#   -n      runs per measurement (default 1; medians when more)
# Needs python3 with moto[server] (pip install 'moto[server]') and restic (apt-get install
# restic). Prints a table; every command it times is echoed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUNS=1
while getopts n: opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	*) sed -n '2,12p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
CORPUS=${1:-/work/corpus/linux}
python3 -c 'import moto.server' 2>/dev/null || python3 -m pip install --quiet 'moto[server]'
command -v restic >/dev/null || { apt-get update -qq && apt-get install -y -qq restic; }
(cd "$HERE" && cargo build --release --quiet)
R="$HERE/target/release/rewind"

SCRATCH=$(mktemp -d /tmp/rewind-remote-bench.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m moto.server -H 127.0.0.1 -p "$PORT" >"$SCRATCH/moto.log" 2>&1 &
MOTO=$!
cleanup() { kill "$MOTO" 2>/dev/null || true; rm -rf "$SCRATCH"; }
trap cleanup EXIT
for _ in $(seq 100); do curl -s "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.2; done
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 \
	AWS_DEFAULT_REGION=us-east-1 AWS_ENDPOINT="http://127.0.0.1:$PORT" AWS_ALLOW_HTTP=true \
	RESTIC_PASSWORD=bench
mkbucket() { curl -sf -X PUT "http://127.0.0.1:$PORT/$1" >/dev/null; }

echo "copying $CORPUS to $SCRATCH/ws ..."
cp -a "$CORPUS" "$SCRATCH/ws"
WS="$SCRATCH/ws"
warm() { tar -cf - "$WS" 2>/dev/null >/dev/null; }
# secs CMD...: wall seconds of one run (stdout of CMD to $SCRATCH/last.out).
secs() {
	local t0 t1 ms
	t0=$(date +%s%N)
	"$@" >"$SCRATCH/last.out"
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	printf '%d.%03d\n' $((ms / 1000)) $((ms % 1000))
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
jget() { python3 -c "import json,sys; print(json.load(open('$SCRATCH/last.out'))['$1'])"; }

declare -A T
run_rewind() { # $1 = label, $2 = URL, $3 = bucket or empty
	local label=$1 url=$2 bucket=$3 i
	local push=() restore=() push2=()
	for i in $(seq "$RUNS"); do
		rm -rf "$SCRATCH/store" "$SCRATCH/store2" "$SCRATCH/dest" "$SCRATCH/file-remote"
		[ -n "$bucket" ] && mkbucket "$bucket$i"
		local u=$url
		[ -n "$bucket" ] && u="$url$i/rw"
		"$R" --store "$SCRATCH/store" -C "$WS" snapshot -q >/dev/null
		"$R" --store "$SCRATCH/store" remote add bench "$u" >/dev/null
		warm
		echo "+ rewind push bench   ($label, run $i)"
		push+=("$(secs "$R" --store "$SCRATCH/store" -C "$WS" --json push bench)")
		T[$label.requests]=$(jget requests)
		T[$label.sent]=$(jget bytes_sent)
		mkdir -p "$SCRATCH/dest"
		echo "+ rewind restore --remote $u SNAPSHOT   (empty store, empty dir)"
		local snap
		snap=$("$R" --store "$SCRATCH/store" -C "$WS" log -n 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
		restore+=("$(secs "$R" --store "$SCRATCH/store2" -C "$SCRATCH/dest" -q restore --remote "$u" "$snap")")
		# Byte-identical to the source, but for what the snapshot never held (.gitignore'd).
		if diff -r --no-dereference "$WS" "$SCRATCH/dest" | grep -v "^Only in $WS" | grep -q .; then
			echo "restored tree differs!" >&2
			exit 1
		fi
		# 15 changed files, then the second push.
		local changed
		mapfile -t changed < <(find "$WS" -name '*.c' -type f | sort | head -15)
		for f in "${changed[@]}"; do echo "/* changed $i */" >>"$f"; done
		"$R" --store "$SCRATCH/store" -C "$WS" snapshot -q >/dev/null
		echo "+ rewind push bench   (after 15 changed files)"
		push2+=("$(secs "$R" --store "$SCRATCH/store" -C "$WS" --json push bench)")
		T[$label.sent2]=$(jget bytes_sent)
		T[$label.requests2]=$(jget requests)
	done
	T[$label.push]=$(printf '%s\n' "${push[@]}" | median)
	T[$label.restore]=$(printf '%s\n' "${restore[@]}" | median)
	T[$label.push2]=$(printf '%s\n' "${push2[@]}" | median)
}

run_restic() {
	local backup=() restore=() i
	for i in $(seq "$RUNS"); do
		mkbucket "restic$i"
		export RESTIC_REPOSITORY="s3:http://127.0.0.1:$PORT/restic$i"
		restic init -q >/dev/null
		warm
		echo "+ restic -r $RESTIC_REPOSITORY backup $WS"
		backup+=("$(secs restic backup -q "$WS")")
		rm -rf "$SCRATCH/rdest"
		echo "+ restic -r $RESTIC_REPOSITORY restore latest --target $SCRATCH/rdest"
		restore+=("$(secs restic restore -q latest --target "$SCRATCH/rdest")")
		rm -rf "$SCRATCH/rdest"
	done
	T[restic.backup]=$(printf '%s\n' "${backup[@]}" | median)
	T[restic.restore]=$(printf '%s\n' "${restore[@]}" | median)
}

run_rewind s3 "s3://rw" rw
run_restic
rm -rf "$WS" && cp -a "$CORPUS" "$WS"
run_rewind file "file://$SCRATCH/file-remote" ""

cat <<EOF

$(basename "$CORPUS"): $(find "$CORPUS" -type f | wc -l) files; medians of $RUNS run(s); seconds
| measurement                         | rewind (moto S3) | restic (moto S3) | rewind (file://) |
|-------------------------------------|------------------|------------------|------------------|
| first push / backup                 | ${T[s3.push]} | ${T[restic.backup]} | ${T[file.push]} |
| restore from the remote, empty store | ${T[s3.restore]} | ${T[restic.restore]} | ${T[file.restore]} |
| second push after 15 changed files  | ${T[s3.push2]} | - | ${T[file.push2]} |
| bytes sent, first push              | ${T[s3.sent]} | - | ${T[file.sent]} |
| requests, first push                | ${T[s3.requests]} | - | ${T[file.requests]} |
| bytes sent, second push             | ${T[s3.sent2]} | - | ${T[file.sent2]} |
| requests, second push               | ${T[s3.requests2]} | - | ${T[file.requests2]} |
EOF
