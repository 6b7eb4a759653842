#!/usr/bin/env bash
# Encrypted against plain remotes: rewind's first push and restore --remote (empty store, empty
# directory) of a tree to a file:// remote, plain and `--encrypt` (password; one argon2id
# derivation per command is included), beside restic backup / restore to a local repository
# (restic encrypts too) when restic is installed. Wall and CPU (user + system) seconds.
#
# usage: benches/remote-crypt.sh [-n RUNS] [-t DIR] [CORPUS]
#   CORPUS  the tree (default /work/corpus/linux)
#   -n      rounds (default 1; medians when more): each round runs plain, encrypted and restic
#           once, in that order, so a slow spell of the shared machine hits every side
#   -t      where the restores write (their targets and rewind's new store), e.g. /dev/shm: on
#           an ext4 without a journal, creating files right after a tree was deleted scans
#           every inode deleted in the last 60 s (the kernel's `recently_deleted`), which can
#           take minutes of system time and decides the figures more than either tool does
# Every timed command is echoed. The page cache is refilled (the tree or the store read) right
# before each timed run, and old stores and targets are moved aside, deleted only at the end.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUNS=1
TARGETS=
while getopts n:t: opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	t) TARGETS=$OPTARG ;;
	*) sed -n '2,15p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
CORPUS=${1:-/work/corpus/linux}
(cd "$HERE" && cargo build --release --quiet -p rewind-cli)
R="$HERE/target/release/rewind"
SCRATCH=$(mktemp -d /tmp/rewind-crypt-bench.XXXXXX)
OUT=$SCRATCH
[ -n "$TARGETS" ] && OUT=$(mktemp -d "$TARGETS/rewind-crypt-bench.XXXXXX")
trap 'rm -rf "$SCRATCH" "$OUT"' EXIT
mkdir -p "$SCRATCH/trash"
# Old trees are moved aside and deleted at the end (a deletion makes the next file creations
# slow on some file systems, see -t), except on the -t file system (memory: deleted at once).
trash() {
	for p in "$@"; do
		[ -e "$p" ] || continue
		if [ "$OUT" != "$SCRATCH" ] && [ "${p#"$OUT"/}" != "$p" ]; then
			rm -rf "$p"
		else
			mv "$p" "$SCRATCH/trash/$(date +%s%N)"
		fi
	done
	true
}
export REWIND_REMOTE_PASSWORD=bench RESTIC_PASSWORD=bench
warm() { tar -cf - "$@" 2>/dev/null >/dev/null; }

# timed LABEL CMD...: appends "wall cpu" of one run to $SCRATCH/LABEL.
timed() {
	local label=$1
	shift
	echo "+ $*" >&2
	# What earlier steps left dirty (a restore's 1.5 GB) is written back first: otherwise the
	# next command pays for it in throttled writes, and the side run after a restore (always
	# the same one, the rounds being in a fixed order) looks slower than it is.
	sync
	/usr/bin/time -f '%e %U %S' -o "$SCRATCH/time" "$@" >/dev/null
	awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$SCRATCH/time" >>"$SCRATCH/$label"
}
med() { # column $2 of file $1, median
	awk -v c="$2" '{print $c}' "$SCRATCH/$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

run_rewind() { # one run; $1 = label, $2... = extra `remote add` flags
	local label=$1 snap
	shift
	{
		trash "$SCRATCH/store" "$OUT/store2" "$OUT/dest" "$SCRATCH/remote"
		"$R" --store "$SCRATCH/store" -C "$CORPUS" snapshot -q >/dev/null
		"$R" --store "$SCRATCH/store" remote add bench "file://$SCRATCH/remote" "$@" >/dev/null
		warm "$SCRATCH/store"
		timed "$label.push" "$R" --store "$SCRATCH/store" -C "$CORPUS" push bench -q
		snap=$("$R" --store "$SCRATCH/store" -C "$CORPUS" log -n 1 --json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
		mkdir -p "$OUT/dest"
		warm "$SCRATCH/remote"
		timed "$label.restore" "$R" --store "$OUT/store2" -C "$OUT/dest" -q \
			restore --remote "file://$SCRATCH/remote" "$snap"
		if diff -r --no-dereference "$CORPUS" "$OUT/dest" | grep -v "^Only in $CORPUS" | grep -q .; then
			echo "restored tree differs!" >&2
			exit 1
		fi
		du -sb "$SCRATCH/remote" | cut -f1 >"$SCRATCH/$label.bytes"
	}
}

run_restic() { # one run
	{
		trash "$SCRATCH/restic" "$OUT/rdest"
		restic -r "$SCRATCH/restic" init -q >/dev/null
		warm "$CORPUS"
		timed restic.push restic -r "$SCRATCH/restic" backup -q "$CORPUS"
		warm "$SCRATCH/restic"
		timed restic.restore restic -r "$SCRATCH/restic" restore -q latest --target "$OUT/rdest"
		du -sb "$SCRATCH/restic" | cut -f1 >"$SCRATCH/restic.bytes"
	}
}

# Interleaved round by round, so a slow spell of the shared machine hits every side.
have_restic=0
command -v restic >/dev/null && have_restic=1
for round in $(seq "$RUNS"); do
	echo "round $round of $RUNS (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	run_rewind plain
	run_rewind encrypted --encrypt
	if [ $have_restic = 1 ]; then
		run_restic
	fi
done

row() { # label measurement
	printf '%s / %s' "$(med "$1.$2" 1)" "$(med "$1.$2" 2)"
}
ratio() { awk -v a="$(med "encrypted.$1" "$2")" -v b="$(med "plain.$1" "$2")" 'BEGIN {printf "%.2f", a / b}'; }
cat <<EOF

$CORPUS: $(find "$CORPUS" -type f | wc -l) files, $(du -sh "$CORPUS" | cut -f1); file:// remote;
medians of $RUNS run(s); wall / CPU (user+system) seconds
| measurement              | plain         | encrypted     | ratio wall / CPU      | restic        |
|--------------------------|---------------|---------------|-----------------------|---------------|
| first push / backup      | $(row plain push) | $(row encrypted push) | $(ratio push 1) / $(ratio push 2) | $([ $have_restic = 1 ] && row restic push || echo -) |
| restore --remote         | $(row plain restore) | $(row encrypted restore) | $(ratio restore 1) / $(ratio restore 2) | $([ $have_restic = 1 ] && row restic restore || echo -) |
| remote bytes             | $(cat "$SCRATCH/plain.bytes") | $(cat "$SCRATCH/encrypted.bytes") | | $([ $have_restic = 1 ] && cat "$SCRATCH/restic.bytes" || echo -) |
EOF
