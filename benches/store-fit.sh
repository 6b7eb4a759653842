#!/usr/bin/env bash
# The store file's apparent size right after a cold snapshot, and what refitting it costs.
#
#   benches/store-fit.sh OLD_BIN NEW_BIN [CORPUS] [RUNS]   (default /work/corpus/linux, 3)
#
# Each round, for each build in turn (tree read first: the page cache drops data untouched for
# ~30 s): a cold snapshot into a fresh store; prints wall and CPU (user+sys) seconds, peak RSS,
# the file's length (`ls -l`) and blocks (`du`) in MiB. Then, when the `storefit` example is
# built (cargo build --release --example storefit), times `Store::fit` alone on a copy of
# OLD_BIN's store (synced first, so the compaction does not also flush the copy).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")/.." && pwd)
old=$(realpath "$1") new=$(realpath "$2")
corpus=${3:-/work/corpus/linux}
runs=${4:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-fit.XXXXXX")
trap 'rm -rf "$W"' EXIT
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
printf 'build\tround\twall_s\tcpu_s\tpeak_kib\tapparent_mib\tdu_mib\n'
for r in $(seq "$runs"); do
	for b in old new; do
		bin=$old; [ "$b" = new ] && bin=$new
		rm -rf "$W/$b"
		tar -cf - -C "$corpus" . >/dev/null
		/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$bin" --store "$W/$b" -C "$corpus" snapshot -q >/dev/null
		read -r wall u s kib <"$W/t"
		f=$W/$b/store.redb
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "$r" "$wall" "$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" \
			"$kib" "$(mib "$(stat -c %s "$f")")" "$(mib $(( $(stat -c %b "$f") * 512 )))"
	done
done
fit=$here/target/release/examples/storefit
if [ -x "$fit" ]; then
	for r in $(seq "$runs"); do
		rm -rf "$W/copy"
		cp -a --sparse=always "$W/old" "$W/copy"
		sync
		"$fit" "$W/copy"
	done
fi
"$new" --store "$W/new" verify --full
