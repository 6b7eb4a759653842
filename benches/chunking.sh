#!/usr/bin/env bash
# The large-file chunking choice: examples/chunkprobe on two files held in memory,
# each cut with FastCDC at several MIN/AVG/MAX (KiB) and normalisation levels. For each: chunks
# and chunk-list bytes per GiB, chunking and zstd -3 CPU per GiB, compression ratio, chunks
# repeated in the file, and what an edit stores (1 MiB overwritten, 100 bytes inserted, 100
# bytes deleted; EDITS seeded positions between 10% and 90%, mean / max). The files:
#   - MIB MiB of PRNG text (AES-CTR mapped to 64 symbols: scale.sh's big file);
#   - a tar of CORPUS (default /work/corpus/linux).
# Nothing is written to disk. Needs ~2.5x the larger file in memory.
#   benches/chunking.sh [-m MIB] [-e EDITS] [CORPUS] [PARAMS...]
set -euo pipefail
MIB=1024 EDITS=48
while getopts m:e: o; do
	case $o in
	m) MIB=$OPTARG ;;
	e) EDITS=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
CORPUS=${1:-/work/corpus/linux}
shift || true
PARAMS=("$@")
[ ${#PARAMS[@]} -gt 0 ] || PARAMS=(256/512/1024/1 64/256/1024/1 128/256/1024/1 64/256/1024/2 128/512/2048/1 64/128/512/1)
cd "$(dirname "$0")/.."
cargo build --release --example chunkprobe -q
PROBE=target/release/examples/chunkprobe
SYMS='a-zA-Z0-9 \n'
echo "== $MIB MiB of PRNG text"
(openssl enc -aes-128-ctr -nosalt -K 00112233445566778899aabbccddeeff \
	-iv 00000000000000000000000000000000 </dev/zero 2>/dev/null || true) |
	head -c "$((MIB << 20))" | tr '\000-\377' "$SYMS$SYMS$SYMS$SYMS" |
	"$PROBE" - "$EDITS" "${PARAMS[@]}"
echo "== tar of $CORPUS"
tar -cf - -C "$(dirname "$CORPUS")" "$(basename "$CORPUS")" | "$PROBE" - "$EDITS" "${PARAMS[@]}"
