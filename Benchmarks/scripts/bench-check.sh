#!/bin/bash
# make bench-check: runs the benchmarks and compares them with the p90 thresholds checked in
# under Thresholds/.
#
# Why not `swift package benchmark thresholds check` alone: ordo-one/benchmark 1.38.1 writes a
# threshold file under the benchmark's name with "/" and " " turned into "_"
# (`Encoding.fused_8KB.p90.json`, by `thresholds update`), but looks it up under the name as it
# is (`Encoding.fused/8KB.p90.json`, a file in a folder), so every lookup misses and the check
# fails with "Could not find any matching absolute thresholds". No benchmark name here contains
# "_" or " ", so "_" in a file name always stood for "/": the files are laid out under the names
# the check looks for, in .build/, and the check reads them there.
set -euo pipefail
cd "$(dirname "$0")/.."
layout="$PWD/.build/thresholds-by-name"
rm -rf "$layout"
mkdir -p "$layout"
count=0
for file in Thresholds/*.p90.json; do
    base=$(basename "$file" .p90.json) # Target.name_with_underscores
    target=${base%%.*}
    name=${base#*.}
    destination="$layout/$target.${name//_//}.p90.json"
    mkdir -p "$(dirname "$destination")"
    cp "$file" "$destination"
    count=$((count + 1))
done
echo "bench-check: $count thresholds from Thresholds/"
exec "${SWIFT:-swift}" package benchmark thresholds check --path "$layout" "$@"
