#!/usr/bin/env bash
# usage: mdf.sh WORKLOAD DATA_DIR OUT_DIR  -- mdf as a peer of ../shared/peers (same contract as their run.sh:
# reads DATA_DIR/parquet/*.parquet, writes the kept rows under OUT_DIR/output/, exit 3 = workload not supported).
# The recipe is written by bash (not a Python wrapper) so the timed process is `mdf run` itself.
# MDF: the mdf command (default: mdf on PATH); MDF_EXECUTOR: inline (default) or ray; MDF_INPUT / MDF_OUTPUT:
# where to read and write instead of DATA_DIR/parquet and OUT_DIR/output (s3:// URLs for the S3 case).
set -euo pipefail
wl=$1 data=$2 out=$3
case "$wl" in
  W1) ops="[{url_filter: {blocklist: '$data/blocklist.txt'}}, {text_length_filter: {min_length: 200, max_length: 100000}}]" ;;
  W2) ops="[{exact_dedup: {column: text}}]" ;;
  W3) ops="[{minhash_dedup: {column: text, num_perm: 128, ngram: 5, bands: 16, rows: 8}}]" ;;
  *) exit 3 ;;
esac
mkdir -p "$out"
cat >"$out/recipe.yaml" <<YAML
reader: {type: parquet, paths: ['${MDF_INPUT:-$data/parquet}'], columns: [id, url, text]}
stages: [{name: $wl, operators: $ops}]
writer: {type: parquet, path: '${MDF_OUTPUT:-$out/output}', compression: zstd}
executor: {type: ${MDF_EXECUTOR:-inline}}
YAML
exec "${MDF:-mdf}" run -q "$out/recipe.yaml"
