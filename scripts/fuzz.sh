#!/usr/bin/env bash
# libFuzzer targets of the Fuzz/ package (docs/robustness.md). Never run by `make test` or CI.
#   scripts/fuzz.sh build                 build every target (-sanitize=fuzzer,address) into Fuzz/.build
#   scripts/fuzz.sh run TARGET SECONDS    run one target, then print its figures
#   scripts/fuzz.sh all SECONDS           run each target in turn
# New corpus entries go to Fuzz/.build/corpus/<target> (the checked-in seeds in Fuzz/Corpus/<target>
# are only read); crashers, leaks and timeouts to Fuzz/Findings/<target>/ (ignored by git).
# The fuzzer runs at the lowest priority, one process, no -jobs/-workers.
# Environment: SWIFT (default swift), FUZZ_ARGS (more libFuzzer flags), FUZZ_NICE (default 19).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(canonicalization verifier forwarded-document encoding batch-readers partner-status request-target form-body)
SCRATCH=Fuzz/.build
BIN="$SCRATCH/release"
SWIFT=${SWIFT:-swift}
NICE=${FUZZ_NICE:-19}

build() {
    # The build plan is made again each time: a plan kept from an earlier build does not see
    # files added to the samlgate package since, and the build then fails on them.
    rm -f "$SCRATCH/release.yaml"
    # -parse-as-library: the targets have no top-level code; libFuzzer's runtime provides main.
    $SWIFT build -c release --package-path Fuzz --scratch-path "$SCRATCH" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld
}

dictionary() {
    case "$1" in
        canonicalization|verifier|forwarded-document) echo "-dict=Fuzz/Dictionaries/xml.dict" ;;
        batch-readers|partner-status) echo "-dict=Fuzz/Dictionaries/json.dict" ;;
        *) echo "" ;;
    esac
}

run() {
    local target=$1 seconds=$2
    [[ " ${TARGETS[*]} " == *" $target "* ]] || { echo "unknown fuzz target '$target' (one of: ${TARGETS[*]})" >&2; exit 2; }
    [ -x "$BIN/$target" ] || { echo "$BIN/$target is not built: run 'make fuzz-build' first" >&2; exit 2; }
    local corpus="$SCRATCH/corpus/$target" findings="Fuzz/Findings/$target" log="$SCRATCH/logs/$target.log"
    mkdir -p "$corpus" "$findings" "$SCRATCH/logs"
    local before
    before=$(find "$findings" -type f | wc -l)
    echo "== fuzz $target for ${seconds}s (log: $log)"
    set +e
    # shellcheck disable=SC2046,SC2086
    # No Swift runtime backtracer: it reads memory ASan has poisoned and buries the real report.
    # The verification arena in guard mode: a closed window's pages are inaccessible, so a late
    # use by libxml2 or libxmlsec1 (not instrumented by ASan) faults too.
    SWIFT_BACKTRACE=enable=no SAMLGATE_XML_ARENA=${SAMLGATE_XML_ARENA:-guard} nice -n "$NICE" "$BIN/$target" "$corpus" "Fuzz/Corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$findings/" $(dictionary "$target") ${FUZZ_ARGS:-} >"$log" 2>&1
    local status=$?
    set -e
    report "$target" "$seconds" "$status" "$before" "$log" "$corpus" "$findings"
}

report() {
    local target=$1 seconds=$2 status=$3 before=$4 log=$5 corpus=$6 findings=$7
    local execs rate last cov ft corp units seeds new after
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[0-9]*[a-zA-Z]*' | tail -1 || true)
    cov=$(echo "$last" | awk '{print $2}')
    ft=$(echo "$last" | awk '{print $4}')
    corp=$(echo "$last" | awk '{print $6}')
    units=$(find "$corpus" -type f | wc -l)
    seeds=$(find "Fuzz/Corpus/$target" -type f | wc -l)
    after=$(find "$findings" -type f | wc -l)
    new=$((after - before))
    # corpus: libFuzzer's live corpus (units/bytes, seeds included); files: what the scratch directory holds.
    printf '%-20s %6ss  exec/s %-7s execs %-10s cov %-6s ft %-6s corpus %s (%s files + %s seeds)  findings %s new (%s in %s)  exit %s\n' \
        "$target" "$seconds" "${rate:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$units" "$seeds" "$new" "$after" "$findings" "$status"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$seconds" "${rate:-}" "${execs:-}" \
        "${cov:-}" "${ft:-}" "${corp:-}" "$new" "$status" >>"$SCRATCH/fuzz-results.tsv"
    if [ "$new" -gt 0 ]; then
        grep -E 'ERROR: |invariant violated|SUMMARY' "$log" | head -5 || true
    fi
}

case "${1:-}" in
    build) build ;;
    run) run "${2:?TARGET}" "${3:-60}" ;;
    all)
        failed=0
        for target in "${TARGETS[@]}"; do run "$target" "${2:-60}" || failed=1; done
        exit $failed ;;
    *) echo "usage: $0 build | run TARGET SECONDS | all SECONDS" >&2; exit 2 ;;
esac
