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

    /// Threads give their slot back when they exit: each of a few threads that verified and
    /// ended has its slot's release count raised (nobody else can give back a slot it holds).
    @Test func exitingThreadsGiveTheirSlotBack() throws {
        let verifier = Fixtures.verifier()
        let document = Array(Fixtures.issue(.assertion).utf8)
        for round in 0..<4 {
            let outcome = ThreadOutcome(verifier: verifier, document: document)
            // pthread_join returns once the thread is gone, its thread-local destructors run.
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { raw in
                    Unmanaged<ThreadOutcome>.fromOpaque(raw!).takeRetainedValue().run()
                    return nil
                }, Unmanaged.passRetained(outcome).toOpaque())
            try #require(started == 0)
            pthread_join(thread, nil)
            #expect(outcome.verified, "thread \(round)")
            guard arenaOn, outcome.slot >= 0 else { continue }  // all 64 slots busy elsewhere
            #expect(outcome.served > 100)
            #expect(cxmlsec_arena_slot_releases(outcome.slot) > outcome.releases, "slot \(outcome.slot) not given back")
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

/// One verification on a thread of its own, and what that thread saw (written by the thread,
/// read after it is joined).
private final class ThreadOutcome: @unchecked Sendable {
    let verifier: Verifier
    let document: [UInt8]
    var verified = false
    var served: UInt64 = 0
    var slot: Int32 = -1
    var releases: UInt64 = 0

    init(verifier: Verifier, document: [UInt8]) {
        self.verifier = verifier
        self.document = document
    }

    func run() {
        let before = cxmlsec_arena_served()
        verified = (try? verifier.verify(document, mvpd: Fixtures.mvpd)) != nil
        served = cxmlsec_arena_served() - before
        slot = cxmlsec_arena_slot()
        releases = cxmlsec_arena_slot_releases(slot)
    }
}
