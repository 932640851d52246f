#!/usr/bin/env bash
# make sanitize: the test suite under AddressSanitizer (Swift code and the C shim) with
# UndefinedBehaviorSanitizer on the C shim (swiftc has no -sanitize=undefined on Linux; the C code
# is built with -fsanitize=undefined in trap mode, so undefined behaviour stops the test process);
# libxml2/libxmlsec1/OpenSSL come from Debian, not instrumented. Then the
# concurrency-heavy suites under ThreadSanitizer. Each build has its own scratch directory
# (.build-asan, .build-tsan): a first build takes as long as a fresh `swift build`, each.
# Suppressions (third-party code only, each with its reason) live in scripts/sanitizers/.
# Knobs: ONLY=asan|tsan, FILTER (a --filter for the ASan run).
set -euo pipefail
SWIFT=${SWIFT:-swift}
SUPPRESSIONS=$PWD/scripts/sanitizers
# Without jemalloc (Package.swift): a sanitizer's allocator and jemalloc free each other's memory.
export SAMLGATE_SANITIZE=1
# The verifier's arena with every closed verification's pages inaccessible (docs/security.md).
export SAMLGATE_XML_ARENA=${SAMLGATE_XML_ARENA:-guard}
# Tests wait this many times longer before they call something lost (TestTiming, in Sources/CLITestSupport/TestEnvironment.swift).
export SAMLGATE_TEST_TIME_SCALE=${SAMLGATE_TEST_TIME_SCALE:-4}
status=0

if [ "${ONLY:-asan}" != tsan ]; then
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer: the whole suite"
    mkdir -p .build-asan
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=0:quarantine_size_mb=32:suppressions=$SUPPRESSIONS/asan.supp}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    if ! $SWIFT test --scratch-path .build-asan --sanitize address -Xcc -fsanitize=undefined -Xcc -fsanitize-trap=undefined \
        ${FILTER:+--filter "$FILTER"} 2>&1 \
        | tee .build-asan/sanitize.log | grep -E "ERROR: AddressSanitizer|runtime error:|Test run with|✘ " ; then
        :
    fi
    if grep -qE "ERROR: AddressSanitizer|runtime error:" .build-asan/sanitize.log || ! grep -q "^✔ Test run with" .build-asan/sanitize.log; then
        echo "sanitize: ASan/UBSan run failed (see .build-asan/sanitize.log)"
        status=1
    fi
fi

if [ "${ONLY:-tsan}" != asan ]; then
    echo "== ThreadSanitizer: the suites that share state across threads"
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1:suppressions=$SUPPRESSIONS/tsan.supp}
    mkdir -p .build-tsan
    if ! $SWIFT test --scratch-path .build-tsan --sanitize thread \
        --filter 'ConcurrencyTests|RESPTests|SharedReplayStore|HTTPProtocolTests|ProxyAndOperations|UpstreamFailure|UnreadAnswers|RemoteMetadata|TrustStorePoll' 2>&1 \
        | tee .build-tsan/sanitize.log | grep -E "WARNING: ThreadSanitizer|Test run with|✘ " ; then
        :
    fi
    if grep -q "WARNING: ThreadSanitizer" .build-tsan/sanitize.log || ! grep -q "^✔ Test run with" .build-tsan/sanitize.log; then
        echo "sanitize: TSan run failed (see .build-tsan/sanitize.log)"
        status=1
    fi
fi
exit $status
