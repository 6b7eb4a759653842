#!/usr/bin/env bash
# Scale: does every step grow at most linearly with the file count, and is memory bounded?
#
#   benches/scale.sh [-f FILES] [-d DIRS] [-g GIB] [-s STEPS] [-r REF] OUT
#
#   -f FILES  files in the synthetic tree (default 1000000)
#   -d DIRS   leaf directories they are spread over (default 50000; 250 top directories)
#   -g GIB    size of the one big file (default 8); -m MIB gives it in MiB (for a quick try)
#   -s STEPS  comma-separated: ref,tree,big (default all three)
#   -r REF    the reference tree (default /work/corpus/linux; copied, since a step edits it)
#   OUT       results: OUT/scale.tsv (one line per measure), OUT/table.md; scratch in OUT/work
#
# REWIND_BIN is the binary (default target/release/rewind), WALKBENCH the bare walk
# (default target/release/examples/walkbench: `cargo build --release --example walkbench`).
# OLD_BIN, if set, is measured too, on the same trees, each step right before the new one's
# (e.g. main's release build): before and after in one run, with the tree made once.
# PEERS, if set (e.g. "git restic"), runs those tools on the same trees after rewind, for their
# time and memory at scale beside rewind's (cold, warm with nothing changed, git status).
# SYNTH, if set, is a synthetic tree made before (by this script, with the same -f and -d):
# it is used as it is and kept (generating a million files takes ~10 minutes, deleting them
# as long).
#
# For the reference tree and the synthetic one, in this order: cold snapshot into an empty
# store, the bare walk (walkbench, the floor of a warm snapshot), warm snapshot with nothing
# changed, status, then 10 files edited and 5 created, a snapshot, `diff --stat` of the two
# snapshots, and a restore of the first into an empty directory. Wall and CPU seconds and peak
# RSS come from /usr/bin/time. Then the big file: PRNG text (not sparse, neither trivially
# compressible nor dedupable), snapshot, 1 MiB overwritten in its middle, snapshot (what the
# second stored: new chunks and bytes, from its --json), and a restore into an empty directory
# checked against the file's BLAKE3 (the file is deleted before the restore: disk is short).
# The page cache drops data untouched for ~30 s, so each tree is read right before each timed
# step. Everything made is deleted at the end; big deletions happen only then (deleting a big
# tree slows the next runs that create many files).
set -euo pipefail
export LC_ALL=C
FILES=1000000 DIRS=50000 GIB=8 MIB= STEPS=ref,tree,big REF=/work/corpus/linux
PEERS=${PEERS:-}
while getopts f:d:g:m:s:r: opt; do
	case $opt in
	f) FILES=$OPTARG ;;
	d) DIRS=$OPTARG ;;
	g) GIB=$OPTARG ;;
	m) MIB=$OPTARG ;;
	s) STEPS=$OPTARG ;;
	r) REF=$OPTARG ;;
	*) sed -n "2,32p" "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { sed -n "2,32p" "$0" >&2; exit 2; }
MIB=${MIB:-$((GIB << 10))}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REWIND=$(realpath "${REWIND_BIN:-$HERE/target/release/rewind}")
BINS=("new:$REWIND")
[ -n "${OLD_BIN:-}" ] && BINS=("old:$(realpath "$OLD_BIN")" "${BINS[@]}")
WALKBENCH=$(realpath "${WALKBENCH:-$HERE/target/release/examples/walkbench}")
for b in "$REWIND" "$WALKBENCH" /usr/bin/time b3sum openssl python3 $PEERS; do
	command -v "$b" >/dev/null || { echo "scale.sh: $b is missing" >&2; exit 2; }
done
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
W="$OUT/work"
mkdir -p "$W"
TRASH="$W/trash"
mkdir -p "$TRASH"
cleanup() { rm -rf "$W"; sync; }
trap cleanup EXIT
TSV="$OUT/scale.tsv"
[ -s "$TSV" ] || printf 'bin\ttree\tfiles\tstep\twall_s\tcpu_s\tpeak_rss_mib\tnote\n' >"$TSV"
has_step() { [[ ",$STEPS," == *",$1,"* ]]; }
trash() { [ -e "$1" ] && mv "$1" "$TRASH/$(basename "$1").$RANDOM$RANDOM"; true; }
warm() { tar -cf - "$@" 2>/dev/null | cat >/dev/null; }

# measure TREE FILES STEP NOTE CMD...: runs CMD under /usr/bin/time, appends a line to the TSV.
measure() {
	local tree=$1 files=$2 step=$3 note=$4
	shift 4
	local t="$W/time.out"
	/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >"$W/cmd.out" 2>"$W/cmd.err" || {
		echo "scale.sh: $step on $tree failed:" >&2
		cat "$W/cmd.err" >&2
		exit 1
	}
	read -r wall user sys rss <"$t"
	local cpu rss_mib
	cpu=$(echo "$user + $sys" | bc)
	rss_mib=$(echo "scale=1; $rss / 1024" | bc)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BIN_LABEL" "$tree" "$files" "$step" "$wall" "$cpu" "$rss_mib" "$note" | tee -a "$TSV"
}

snap_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <"$W/cmd.out"; }

# steps NAME DIR FILES: the per-tree measures, for each binary in turn (DIR is edited: the
# edits are undone after each binary's turn by restoring its first snapshot).
steps() {
	local name=$1 dir=$2 files=$3 b
	for b in "${BINS[@]}"; do
		BIN_LABEL=${b%%:*} REWIND=${b#*:} steps1 "$@"
	done
}

steps1() {
	local name=$1 dir=$2 files=$3
	# Disk is short: the previous binary's restore goes now, long before this one's restore.
	rm -rf "$TRASH"/restore-* && sync
	export REWIND_STORE="$W/store-$name-$BIN_LABEL"
	warm "$dir"
	measure "$name" "$files" cold "" "$REWIND" -C "$dir" snapshot --json
	local id1
	id1=$(snap_id)
	warm "$dir"
	measure "$name" "$files" walk "walkbench, 1 run" "$WALKBENCH" "$dir" 1
	warm "$dir"
	measure "$name" "$files" warm "nothing changed" "$REWIND" -C "$dir" snapshot -q
	warm "$dir"
	measure "$name" "$files" status "nothing changed" "$REWIND" -C "$dir" status
	# 10 edits and 5 new files, spread over the tree (awk reads all: no SIGPIPE for find).
	find "$dir" -type f -name '*.[ch]' | awk 'NR % 997 == 1 && n++ < 10' |
		while read -r f; do echo "// scale.sh edit" >>"$f"; done
	for i in 1 2 3 4 5; do echo "new file $i" >"$dir/scale-new-$i.txt"; done
	warm "$dir"
	measure "$name" "$files" change "10 edits, 5 new" "$REWIND" -C "$dir" snapshot --json
	local id2
	id2=$(snap_id)
	measure "$name" "$files" diff "diff --stat" "$REWIND" diff --stat "$id1" "$id2"
	local dest="$W/restore-$name"
	mkdir "$dest"
	warm "$REWIND_STORE"
	measure "$name" "$files" restore "into an empty dir" "$REWIND" -C "$dest" restore "$id1" -q
	trash "$dest"
	# Undo the edits for the next binary.
	"$REWIND" -C "$dir" restore "$id1" -q >/dev/null
	# A store is a few big files: deleting it is quick, and disk is short.
	rm -rf "$REWIND_STORE"
	unset REWIND_STORE
}

# peers NAME DIR FILES: the same tree through git and restic (PEERS), for memory and time at
# scale beside rewind's: cold (git add -A + write-tree into a bare repository outside the
# tree, as ../shared/bench does; restic backup into a local repository), then warm with
# nothing changed (git status, and add -A + write-tree again; restic backup again).
peers() {
	local name=$1 dir=$2 files=$3 p
	for p in $PEERS; do
		BIN_LABEL=$p peer1 "$@"
	done
}

peer1() {
	local name=$1 dir=$2 files=$3
	case $BIN_LABEL in
	git)
		local g="$W/git-$name"
		git init -q --bare "$g"
		local snap="git --git-dir='$g' --work-tree=. add -A && git --git-dir='$g' --work-tree=. write-tree"
		warm "$dir"
		measure "$name" "$files" cold "add -A + write-tree" bash -c "cd '$dir' && $snap"
		warm "$dir"
		measure "$name" "$files" warm "add -A + write-tree, nothing changed" bash -c "cd '$dir' && $snap"
		warm "$dir"
		measure "$name" "$files" status "status --porcelain" bash -c "cd '$dir' && git --git-dir='$g' --work-tree=. status --porcelain"
		trash "$g"
		;;
	restic)
		local r="$W/restic-$name"
		export RESTIC_PASSWORD=scale RESTIC_CACHE_DIR="$W/restic-cache-$name"
		restic init -q -r "$r" >/dev/null
		warm "$dir"
		measure "$name" "$files" cold "backup" bash -c "cd '$dir' && restic -r '$r' backup -q ."
		warm "$dir"
		measure "$name" "$files" warm "backup, nothing changed" bash -c "cd '$dir' && restic -r '$r' backup -q ."
		trash "$r"
		trash "$RESTIC_CACHE_DIR"
		;;
	*) echo "scale.sh: unknown peer $BIN_LABEL (git, restic)" >&2; exit 2 ;;
	esac
}

if has_step ref; then
	echo "== reference tree $REF"
	trash "$W/ref"
	cp -a "$REF" "$W/ref"
	n=$(find "$W/ref" -type f | wc -l)
	steps ref "$W/ref" "$n"
	peers ref "$W/ref" "$n"
	trash "$W/ref"
fi

if has_step tree && [ -n "${SYNTH:-}" ]; then
	echo "== synthetic tree $SYNTH (kept)"
	[ -d "$SYNTH" ] || { echo "scale.sh: SYNTH=$SYNTH is not a directory" >&2; exit 2; }
	steps synth "$(realpath "$SYNTH")" "$FILES"
	peers synth "$(realpath "$SYNTH")" "$FILES"
elif has_step tree; then
	echo "== synthetic tree: $FILES files in $DIRS directories"
	trash "$W/synth"
	t0=$(date +%s.%N)
	# Files of 200 B to 6 KiB of seeded PRNG words (C-like lines), so neither dedup nor
	# compression makes them trivial; 250 top directories, DIRS leaf directories.
	python3 - "$W/synth" "$FILES" "$DIRS" <<'EOF'
import os, random, sys
root, files, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(17)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(2, 10)))
         for _ in range(4096)]
top = 250
per_dir = files // dirs
extra = files - per_dir * dirs
for d in range(dirs):
    path = os.path.join(root, "t%03d" % (d % top), "d%05d" % d)
    os.makedirs(path, exist_ok=True)
    n = per_dir + (1 if d < extra else 0)
    for f in range(n):
        lines = []
        size = 0
        target = rng.randint(200, 6144)
        while size < target:
            line = " ".join(rng.choices(words, k=rng.randint(3, 12))) + ";\n"
            lines.append(line)
            size += len(line)
        ext = ".c" if f % 3 else ".txt"
        with open(os.path.join(path, "f%02d%s" % (f, ext)), "w") as fh:
            fh.write("".join(lines))
EOF
	echo "generated in $(echo "$(date +%s.%N) - $t0" | bc) s; $(du -sh "$W/synth" | cut -f1)"
	steps synth "$W/synth" "$FILES"
	peers synth "$W/synth" "$FILES"
	trash "$W/synth"
fi

# big: one file of MIB MiB, made afresh for each binary (disk is short: it is deleted before
# the restore, which is checked against its BLAKE3).
big() {
	local big="$W/big"
	mkdir -p "$big"
	# AES-CTR over zeros is a fast seeded PRNG; mapped to 64 symbols it is text that zstd can
	# shrink by a quarter or so, with no repeats for dedup to find.
	prng 00112233445566778899aabbccddeeff |
		head -c "$((MIB << 20))" |
		tr '\000-\377' "$SYMS$SYMS$SYMS$SYMS" >"$big/file"
	sync
	export REWIND_STORE="$W/store-big"
	measure big 1 cold "$MIB MiB file" "$REWIND" -C "$big" snapshot --json
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(sys.argv[2], "first snapshot: new_chunks", o["new_chunks"], "stored_bytes", o["stored_bytes"])' "$W/cmd.out" "$BIN_LABEL" | tee -a "$OUT/big.txt"
	local chunks
	chunks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["new_chunks"])' "$W/cmd.out")
	# 1 MiB of other PRNG bytes over the middle.
	prng ffeeddccbbaa99887766554433221100 |
		head -c $((1 << 20)) | dd of="$big/file" bs=1M seek=$((MIB / 2)) conv=notrunc status=none
	measure big 1 edit "1 MiB overwritten in the middle" "$REWIND" -C "$big" snapshot --json
	local id sum got
	id=$(snap_id)
	# The new version's record lists all its chunks (36 bytes each, about as many as the first
	# snapshot cut): what is left of stored_bytes is the new chunks (and a tree or two).
	# A flat chunk list (13 + 36 bytes a chunk) is rewritten whole by each version; above 4,096
	# chunks a build with paged lists writes one page or two (~36 KiB each, counted among the
	# new chunks) and a short record instead.
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); l=13+36*int(sys.argv[3]); print(sys.argv[2], "after the edit: new_chunks", o["new_chunks"], "new_blobs", o["new_blobs"], "stored_bytes", o["stored_bytes"], "(a flat chunk list would be %d of it)" % l)' "$W/cmd.out" "$BIN_LABEL" "$chunks" | tee -a "$OUT/big.txt"
	"$REWIND" stats --json >"$OUT/big-stats-$BIN_LABEL.json"
	sum=$(b3sum --no-names "$big/file")
	rm -rf "$big"
	sync
	local dest="$W/restore-big"
	mkdir "$dest"
	measure big 1 restore "into an empty dir" "$REWIND" -C "$dest" restore "$id" -q
	got=$(b3sum --no-names "$dest/file")
	[ "$got" = "$sum" ] || { echo "scale.sh: the restored big file differs" >&2; exit 1; }
	echo "$BIN_LABEL: restored file matches (b3sum)" | tee -a "$OUT/big.txt"
	rm -rf "$dest" "$REWIND_STORE"
	unset REWIND_STORE
	sync
}

if has_step big; then
	echo "== one file of $MIB MiB"
	# Disk is short: the trees measured above go now (one file is made next, not many).
	rm -rf "$TRASH" && mkdir "$TRASH" && sync
	# The file, its store (~80% of it) and the restored copy, with 2 GiB to spare.
	need_kib=$(((MIB * 2 + 2048) * 1024))
	free_kib=$(df -Pk "$W" | awk 'NR == 2 {print $4}')
	if [ "$free_kib" -lt "$need_kib" ]; then
		echo "scale.sh: the big file needs $((need_kib >> 20)) GiB free, $((free_kib >> 20)) GiB are" >&2
		exit 1
	fi
	SYMS='a-zA-Z0-9 \n' # 64 symbols
	# prng KEY: endless bytes (killed by SIGPIPE when the reader has enough).
	prng() { openssl enc -aes-128-ctr -nosalt -K "$1" -iv 00000000000000000000000000000000 </dev/zero 2>/dev/null || true; }
	for b in "${BINS[@]}"; do
		BIN_LABEL=${b%%:*} REWIND=${b#*:} big
	done
fi

# The table: each step's figures per binary and tree, and per file against the reference.
python3 - "$TSV" >"$OUT/table.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
ref = {(r["bin"], r["step"]): r for r in rows if r["tree"] == "ref"}
print("| binary | tree | files | step | wall s | CPU s | peak RSS MiB | wall per file vs ref |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    ratio = ""
    b = ref.get((r["bin"], r["step"]))
    if r["tree"] not in ("ref", "big") and b and float(b["wall_s"]) > 0:
        per = float(r["wall_s"]) / int(r["files"])
        per_ref = float(b["wall_s"]) / int(b["files"])
        ratio = "%.2fx" % (per / per_ref)
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (r["bin"], r["tree"], r["files"], r["step"],
          r["wall_s"], r["cpu_s"], r["peak_rss_mib"], ratio))
EOF
cat "$OUT/table.md"
