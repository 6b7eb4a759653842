#!/usr/bin/env bash
# gc's first dense recompression of a big store: wall, CPU (user+sys), peak RSS and the store's
# size after, for one or more builds and zstd levels, each on a fresh copy of the same store.
#
#   benches/gc-dense.sh STORE RUNS BIN:LEVEL [BIN:LEVEL ...]
#   e.g. benches/gc-dense.sh /tmp/linux-store 2 old/rewind:9 new/rewind:9 new/rewind:6
#
# STORE: a store after one cold snapshot (e.g. `rewind --store S -C /work/corpus/linux
# snapshot`). LEVEL is passed as `gc --level` when the build has it (`-` for the build's
# default). Configurations alternate within each round. The copies are deleted as they go.
set -euo pipefail
export LC_ALL=C
src=$(realpath "$1") runs=$2
shift 2
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-gcdense.XXXXXX")
trap 'rm -rf "$W"' EXIT
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
printf 'build\tlevel\tround\twall_s\tcpu_s\tpeak_mib\tdu_mib\tapparent_mib\tencoded_mib\n'
for r in $(seq "$runs"); do
	for cfg in "$@"; do
		bin=${cfg%:*} level=${cfg##*:}
		rm -rf "$W/s"
		cp -a --sparse=always "$src" "$W/s"
		sync
		args=(gc --json)
		[ "$level" != - ] && args+=(--level "$level")
		/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$bin" --store "$W/s" "${args[@]}" >"$W/out"
		read -r wall u s kib <"$W/t"
		f=$W/s/store.redb
		enc=$("$bin" --store "$W/s" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["encoded_bytes"])')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bin" "$level" "$r" "$wall" \
			"$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" "$(mib $((kib * 1024)))" \
			"$(mib $(( $(stat -c %b "$f") * 512 )))" "$(mib "$(stat -c %s "$f")")" "$(mib "$enc")"
	done
done
