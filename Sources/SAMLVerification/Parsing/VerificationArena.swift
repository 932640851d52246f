import CXMLSec

/// One verification's libxml2 and libxmlsec1 memory from a per-thread bump arena, given back at
/// once when the document is done (the C side: `arena.c`).
///
/// A verification of an 8 KB response makes some 300 C allocations — the tree's nodes,
/// attributes, strings, the ID table, xmlsec's contexts — each a `malloc` and a `free` of the
/// system allocator without the arena; inside a window each is a pointer bump, and the frees
/// cost nothing.
///
/// **What keeps it safe.** libxml2's allocator hooks are process-wide; the arena serves only a
/// thread inside a window, everyone else gets the system allocator, and a pointer is told apart
/// by its address (one region reserved for all slots, never unmapped). Nothing made inside a
/// window may outlive it: ``SecureXMLParser`` parses with a parser context of its own there (the
/// thread's long-lived one and its dictionary are never touched), xmlsec's contexts are
/// initialised and finalised inside, every ``ParsedDocument`` is freed inside, the window's end
/// clears the thread's last libxml2 error, and ``VerificationThreadContext`` refuses to be
/// created inside a window. A realloc of a closed window's memory aborts the process.
///
/// **Modes** (environment `SAMLGATE_XML_ARENA`, read once at start-up): on by default; `off`
/// for the system allocator everywhere; `guard` makes each closed window's pages inaccessible,
/// so any late use faults at once — what the tests and the fuzzers run with.
enum VerificationArena {
    /// Whether the calling thread's allocations are served by its arena right now.
    static var isActive: Bool { cxmlsec_arena_active() != 0 }

    /// Whether everything allocated in this thread's open window came from its arena: C memory
    /// made in it need not be freed piece by piece (the window's end gives all of it back).
    static var holdsEverything: Bool { cxmlsec_arena_holds_everything() != 0 }

    /// Runs `body` inside a window. Everything libxml2 and libxmlsec1 allocate on this thread
    /// during `body` is given back when it returns or throws: `body` must return only Swift
    /// values, never a pointer into the C libraries' memory.
    static func withWindow<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        _ = cxmlsec_arena_begin()
        defer { cxmlsec_arena_end() }
        return try body()
    }
}
