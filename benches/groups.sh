#!/usr/bin/env bash
# Small blobs in groups: for one or more builds on one tree, each in a fresh store,
# alternating builds within each round: the cold snapshot (wall, CPU, peak RSS), the store's
# size after it (on disk and apparent) and its encoded content, `cat` of one file, a restore
# into an empty directory, then gc and the same size, `cat` and restore after it, and
# `verify --full` at the end.
#
#   benches/groups.sh [-n ROUNDS] [-c CATS] TREE FILE BIN [BIN ...]
#   e.g. benches/groups.sh -n 3 /work/corpus/linux kernel/sched/core.c /tmp/old/rewind \
#          target/release/rewind
#
# FILE is a path in TREE for the `cat` timing: CATS calls in a row (default 20), reported per
# call. The page cache is warmed with tar before each snapshot. Stores and restores are deleted
# as they go. TSV on stdout, one line per build and round.
set -euo pipefail
export LC_ALL=C
rounds=3 cats=20
while getopts n:c: o; do
	case $o in
	n) rounds=$OPTARG ;;
	c) cats=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
tree=$(realpath "$1") file=$2
shift 2
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-groups.XXXXXX")
trap 'rm -rf "$W"' EXIT
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# wall, CPU (user+sys), peak MiB of the last timed command
timed() {
	/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >/dev/null
	read -r wall u s kib <"$W/t"
	printf '%s\t%s\t%s' "$wall" "$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" "$((kib / 1024))"
}
sizes() { # on disk, apparent, encoded content (MiB)
	local f=$W/s/store.redb enc
	enc=$("$bin" --store "$W/s" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["encoded_bytes"])')
	printf '%s\t%s\t%s' "$(mib $(($(stat -c %b "$f") * 512)))" "$(mib "$(stat -c %s "$f")")" "$(mib "$enc")"
}
cat_ms() {
	local t0 t1
	t0=$(date +%s%N)
	for _ in $(seq "$cats"); do "$bin" --store "$W/s" cat "$id" "$file" >/dev/null; done
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" -v n="$cats" 'BEGIN { printf "%.1f", (b - a) / n / 1e6 }'
}
# The restore is deleted at once, then the bench waits: a restore soon after a large delete
# spends most of its time in ext4's inode allocator (recently_deleted, seen in perf), which
# skips inodes freed in the last few seconds.
restore_s() {
	rm -rf "$W/r"
	mkdir "$W/r"
	timed "$bin" --store "$W/s" -C "$W/r" restore "$id" -q
	rm -rf "$W/r"
	sync
	sleep 15
}
printf 'build\tround\tsnap_wall_s\tsnap_cpu_s\tsnap_peak_mib\tdisk_mib\tapparent_mib\tencoded_mib'
printf '\tcat_ms\trestore_wall_s\trestore_cpu_s\trestore_peak_mib\tgc_wall_s\tgc_cpu_s\tgc_peak_mib'
printf '\tgc_disk_mib\tgc_apparent_mib\tgc_encoded_mib\tgc_cat_ms\tgc_restore_wall_s\tgc_restore_cpu_s\tgc_restore_peak_mib\tverify\n'
for r in $(seq "$rounds"); do
	for bin in "$@"; do
		rm -rf "$W/s"
		tar -C "$tree" -cf - . >/dev/null
		snap=$(timed "$bin" --store "$W/s" -C "$tree" snapshot -q)
		id=$("$bin" --store "$W/s" -C "$tree" log --json |
			python3 -c 'import json,sys; o=json.load(sys.stdin); print((o if isinstance(o, list) else o["snapshots"])[0]["id"])')
		before="$(sizes)	$(cat_ms)	$(restore_s)"
		gc=$(timed "$bin" --store "$W/s" gc -q)
		after="$(sizes)	$(cat_ms)	$(restore_s)"
		ok=$("$bin" --store "$W/s" verify --full --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ok"])')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bin" "$r" "$snap" "$before" "$gc" "$after" "$ok"
	done
done
