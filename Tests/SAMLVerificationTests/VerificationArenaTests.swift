import CXMLSec
import Foundation
import SAMLVerification
import TestIdP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The verification arena (libxml2's and libxmlsec1's memory per verification from a per-thread
/// bump arena). `make test` runs the whole suite in guard mode (`SAMLGATE_XML_ARENA=guard`), so
/// every test that verifies also proves that nothing touches a closed window's memory.
@Suite(.serialized) struct VerificationArenaTests {
    private var arenaOn: Bool { cxmlsec_arena_mode() != Int32(CXMLSEC_ARENA_OFF) }

    /// A thread's verification is served by its arena: hundreds of allocations, none to the system.
    @Test func verificationServedByTheArena() throws {
        let verifier = Fixtures.verifier()
        let document = Array(Fixtures.issue(.both).utf8)
        _ = try verifier.verify(document, mvpd: Fixtures.mvpd)  // the thread's context made outside
        let served = cxmlsec_arena_served()
        let overflows = cxmlsec_arena_overflows()
        let response = try verifier.verify(document, mvpd: Fixtures.mvpd)
        #expect(response.nameID == "alice@example.com")
        guard arenaOn else { return }
        #expect(cxmlsec_arena_served() - served > 100)
        #expect(cxmlsec_arena_overflows() == overflows)
        #expect(cxmlsec_arena_active() == 0)
    }

    /// A document larger than what is left of its thread's arena continues on the system
    /// allocator, with the same verdicts: accepted as before, refused for the same reason.
    @Test func overflowContinuesOnTheSystemAllocator() throws {
        let verifier = Fixtures.verifier()
        let good = Array(Fixtures.issue(.both).utf8)
        var tampered = Fixtures.issue(.assertion)
        tampered = tampered.replacingOccurrences(of: "alice@example.com", with: "mallory@example.com")
        _ = try verifier.verify(good, mvpd: Fixtures.mvpd)
        let overflows = cxmlsec_arena_overflows()
        cxmlsec_arena_limit_for_testing(4096)
        defer { cxmlsec_arena_limit_for_testing(0) }
        let response = try verifier.verify(good, mvpd: Fixtures.mvpd)
        #expect(response.nameID == "alice@example.com")
        #expect(Fixtures.code(tampered, verifier) == .signatureInvalid)
        if arenaOn {
            #expect(cxmlsec_arena_overflows() > overflows)
        }
    }

    /// Threads give their slot back when they exit: a thread started after more threads than
    /// there are slots (64) have come and gone still verifies from an arena.
    @Test func exitingThreadsGiveTheirSlotBack() throws {
        let verifier = Fixtures.verifier()
        let document = Array(Fixtures.issue(.assertion).utf8)
        var servedByLast: UInt64 = 0
        for round in 0..<80 {
            let outcome = ThreadOutcome()
            let thread = Thread {
                let before = cxmlsec_arena_served()
                outcome.verified = (try? verifier.verify(document, mvpd: Fixtures.mvpd)) != nil
                outcome.served = cxmlsec_arena_served() - before
                outcome.done.signal()
            }
            thread.start()
            outcome.done.wait()
            #expect(outcome.verified, "thread \(round)")
            servedByLast = outcome.served
        }
        if arenaOn {
            #expect(servedByLast > 100)
        }
    }

    /// Guard mode: a closed window's memory cannot be read any more (the kernel refuses to
    /// copy from it: `EFAULT`), so a late use by any library faults instead of reading the next
    /// document's bytes. In the default mode it stays mapped, and is simply reused.
    @Test func guardModeClosesAWindowsPages() throws {
        _ = try Fixtures.verifier().verify(Array(Fixtures.issue(.assertion).utf8), mvpd: Fixtures.mvpd)
        guard cxmlsec_arena_begin() != 0 else { return }
        let block = cxmlsec_xml_malloc(64)
        cxmlsec_arena_end()
        let block2 = try #require(block)
        var pipe = [Int32](repeating: 0, count: 2)
        #expect(Glibc.pipe(&pipe) == 0)
        defer {
            close(pipe[0])
            close(pipe[1])
        }
        let written = write(pipe[1], block2, 1)
        if cxmlsec_arena_mode() == Int32(CXMLSEC_ARENA_GUARD) {
            #expect(written == -1 && errno == EFAULT)
        } else {
            #expect(written == 1)
        }
    }
}

/// What a thread reports to the test that waits for it (written before `done` is signalled,
/// read after it is waited for).
private final class ThreadOutcome: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var verified = false
    var served: UInt64 = 0
}
