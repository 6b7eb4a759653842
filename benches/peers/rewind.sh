# shellcheck shell=bash
# rewind's plug-in for ../shared/bench (benches/compare.sh copies the harness and puts this file
# over its tools/rewind.sh). It differs from the shared one in two ways, both to compare like
# with like:
# - the store leaves out nothing git keeps: `default_caches = false` in the store's config.toml
#   turns off rewind's default list of caches (node_modules/, __pycache__/, .venv/, /target/),
#   which git does not have (before that list anchored target/ at the root, it dropped the
#   kernel's drivers/target/ sources: 122 files, 2.3 MB);
# - "store sizes" also runs `rewind gc` on a copy of the store and reports its size and time,
#   as git's plug-in does with `repack -ad`: gc is where rewind trains its zstd dictionary and
#   recompresses at a denser level (a snapshot writes at a fast level).
rewind_OWN_TREE=0
REWIND=${REWIND_BIN:-rewind}
export REWIND
rewind_available() { command -v "$REWIND" >/dev/null; }
rewind_version() { "$REWIND" --version; }
rewind_init() {
	export REWIND_STORE="$W/rewind"
	trash "$W/rewind"
	mkdir -p "$W/rewind"
	printf '[ignore]\ndefault_caches = false\n' >"$W/rewind/config.toml"
}
rewind_SNAP='"$REWIND" -C "$TREE" snapshot -q --tag "$LABEL" > /dev/null'
rewind_STATUS='"$REWIND" -C "$TREE" status > "$W/rewind.status"'
rewind_record() {
	"$REWIND" -C "$TREE" show "$LABEL" --json |
		python3 -c 'import json,sys
o=json.load(sys.stdin)
o=o.get("snapshot", o) if isinstance(o, dict) else o
print(o["id"])'
}
rewind_DIFFS=(
	'diff --stat :: "$REWIND" diff --stat "$ID1" "$ID2" > "$W/rewind.diffstat"'
	'diff, piped to wc -c :: "$REWIND" diff "$ID1" "$ID2" | wc -c > "$W/rewind.diffbytes"'
)
rewind_RESTORES=(
	'restore into empty folder :: "$REWIND" -C "$DEST" restore "$ID1" -q'
)
rewind_count() {
	"$REWIND" ls "$ID1" -r --json |
		python3 -c 'import json,sys
o=json.load(sys.stdin)
items=o.get("entries", o) if isinstance(o, dict) else o
print(sum(1 for e in items if e.get("kind") in ("file", "executable")))'
}
# sizes right after the cold snapshot; also times one `rewind gc` on a copy of the store
rewind_sizes() {
	trash "$W/rewind-gc"
	cp -a --sparse=always "$W/rewind" "$W/rewind-gc"
	settle
	timeit size rewind 'gc (copy of store)' 'REWIND_STORE="$W/rewind-gc" "$REWIND" gc -q' "one run"
	printf 'store\t%s\n' "$W/rewind"
	printf 'store, after gc\t%s\n' "$W/rewind-gc"
}
rewind_store_paths() { printf '%s\n' "$W/rewind"; }
