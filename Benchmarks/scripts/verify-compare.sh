#!/usr/bin/env bash
# Verification cost, side by side in one run: samlgate's verifier (VerifyDriver, release) against
# python-xmlsec on the same documents, plus instructions per verification counted by callgrind
# as (Ir(N) - Ir(0)) / N, which is repeatable on this noisy machine.
#   usage: Benchmarks/scripts/verify-compare.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
CALLGRIND_N=50
pip install --quiet xmlsec lxml >/dev/null 2>&1 || pip install xmlsec lxml
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
swift build -c release --product VerifyDriver >/dev/null
BIN=.build/release/VerifyDriver
# valgrind 3.19 cannot read the Swift 6 DWARF: count instructions on a stripped copy.
STRIPPED=$(mktemp)
objcopy --strip-debug "$BIN" "$STRIPPED"
chmod +x "$STRIPPED"
WORK=$(mktemp -d)
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
printf '| document | samlgate µs/verify | python-xmlsec µs/verify | speed-up | samlgate instructions/verify |\n|---|---:|---:|---:|---:|\n'
for alg in rsa2048 p256; do
  for size in 3072 8192 65536; do
    dir="$WORK/$alg-$size"
    "$BIN" gen "$dir" "$alg" "$size" >/dev/null
    n=$N; [ "$size" -ge 65536 ] && n=$((N / 8))
    ours=$("$BIN" run "$dir" "$n" | sed -n 's/.*, \([0-9.]*\) µs.*/\1/p')
    theirs=$(python3 scripts/python_xmlsec_verify.py "$dir" "$n" | sed -n 's/.*, \([0-9.]*\) µs.*/\1/p')
    ir0=$(ir "$STRIPPED" run "$dir" 0)
    irn=$(ir "$STRIPPED" run "$dir" "$CALLGRIND_N")
    per=$(( (irn - ir0) / CALLGRIND_N ))
    bytes=$(stat -c %s "$dir/response.xml")
    ratio=$(python3 -c "print('%.2f' % ($theirs / $ours))")
    printf '| %s %s B | %s | %s | %s× | %s |\n' "$alg" "$bytes" "$ours" "$theirs" "$ratio" "$per"
  done
done
rm -rf "$WORK" "$STRIPPED"
