#!/usr/bin/env bash
# Verification cost, side by side in one run: samlgate's verifier (VerifyDriver, release) against
# python-xmlsec on the same documents, plus instructions per verification counted by callgrind
# as (Ir(N) - Ir(0)) / N, which is repeatable on this noisy machine — for samlgate as shipped
# and for samlgate with libxml2 canonicalizing (--libxml2-c14n, the straightforward xmlsec
# path). Times are the best of three alternating runs (this VM's timings swing by ±30 %).
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
best() { sort -g | head -1; }
printf '| document | samlgate µs/verify | python-xmlsec µs/verify | speed-up | samlgate instructions/verify | with libxml2 C14N |\n|---|---:|---:|---:|---:|---:|\n'
for alg in rsa2048 p256; do
  for size in 3072 8192 65536; do
    dir="$WORK/$alg-$size"
    "$BIN" gen "$dir" "$alg" "$size" >/dev/null
    n=$N; [ "$size" -ge 65536 ] && n=$((N / 8))
    ours_runs=""; theirs_runs=""
    for _ in 1 2 3; do
      ours_runs+="$("$BIN" run "$dir" "$n" | sed -n 's/.*, \([0-9.]*\) µs.*/\1/p')"$'\n'
      theirs_runs+="$(python3 scripts/python_xmlsec_verify.py "$dir" "$n" | sed -n 's/.*, \([0-9.]*\) µs.*/\1/p')"$'\n'
    done
    ours=$(printf '%s' "$ours_runs" | best)
    theirs=$(printf '%s' "$theirs_runs" | best)
    ir0=$(ir "$STRIPPED" run "$dir" 0)
    irn=$(ir "$STRIPPED" run "$dir" "$CALLGRIND_N")
    per=$(( (irn - ir0) / CALLGRIND_N ))
    # The baseline's own zero-count run: the driver's warm-up verification canonicalizes too.
    irb0=$(ir "$STRIPPED" run "$dir" 0 --libxml2-c14n)
    irb=$(ir "$STRIPPED" run "$dir" "$CALLGRIND_N" --libxml2-c14n)
    base=$(( (irb - irb0) / CALLGRIND_N ))
    bytes=$(stat -c %s "$dir/response.xml")
    ratio=$(python3 -c "print('%.2f' % ($theirs / $ours))")
    printf '| %s %s B | %s | %s | %s× | %s | %s |\n' "$alg" "$bytes" "$ours" "$theirs" "$ratio" "$per" "$base"
  done
done
# Two threads against one, same process, 8 KB RSA (verifications per second, best of three).
rate() { "$BIN" run "$WORK/rsa2048-8192" "$N" --threads "$1" | sed -n 's/.* \([0-9]*\)\/s on.*/\1/p'; }
one=""; two=""
for _ in 1 2 3; do one+="$(rate 1)"$'\n'; two+="$(rate 2)"$'\n'; done
one=$(printf '%s' "$one" | sort -g | tail -1)
two=$(printf '%s' "$two" | sort -g | tail -1)
printf '\nrsa2048 8 KB: 1 thread %s verifications/s, 2 threads %s/s (%s×)\n' "$one" "$two" "$(python3 -c "print('%.2f' % ($two / $one))")"
rm -rf "$WORK" "$STRIPPED"
