// The C libraries' state: their one-time process initialisation, and the per-thread contexts
// every verification reuses.

import CXMLSec

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - VerificationThreadContext

/// The C state one thread reuses across verifications: a libxml2 parser context (its
/// dictionary and buffers survive between documents) and an `xmlSecDSigCtx` allocation.
///
/// Owned by exactly one thread, reached through ``current()``, which keeps it in POSIX
/// thread-local storage and frees it when the thread exits. Nothing in here crosses threads,
/// which is why the type is deliberately not `Sendable`.
final class VerificationThreadContext {
    /// Recreate the parser context after this many distinct names in its dictionary, so that
    /// a stream of documents with ever-new element names cannot grow it without bound.
    private static let maxDictionaryEntries: Int = 16_384

    private(set) var parser: UnsafeMutablePointer<xmlParserCtxt>
    /// Zeroed C memory of `sizeof(xmlSecDSigCtx)`; initialised and finalised per signature.
    let dsig: UnsafeMutablePointer<xmlSecDSigCtx>
    /// The native canonicalizer's state and output (see ``CanonicalizationTransform``).
    private var canonicalizer = ExclusiveCanonicalizer()
    private let canonical = CanonicalBuffer()
    /// The digest a reference's canonical bytes are hashed into as they are written
    /// (``digest(_:algorithm:inclusivePrefixes:into:)``).
    private let digestContext: DigestContext
    /// Set by ``SignatureVerifier`` while it verifies with native canonicalization; the C14N
    /// hook declines (libxml2 canonicalizes) whenever it is off.
    var nativeCanonicalization = false
    /// How often this thread canonicalized natively, and verified a signature again with
    /// libxml2's canonicalization after a native failure. Plain per-thread counters, for tests.
    var nativeCanonicalizations = 0
    var canonicalizationRetries = 0

    private init(parser: UnsafeMutablePointer<xmlParserCtxt>, dsig: UnsafeMutablePointer<xmlSecDSigCtx>, digestContext: DigestContext) {
        self.parser = parser
        self.dsig = dsig
        self.digestContext = digestContext
    }

    deinit {
        xmlFreeParserCtxt(parser)
        cxmlsec_xml_free(dsig)
    }

    /// This thread's context if it has one (never creates it).
    static func existing() -> VerificationThreadContext? {
        guard let raw = pthread_getspecific(threadContextKey) else { return nil }
        return Unmanaged<VerificationThreadContext>.fromOpaque(raw).takeUnretainedValue()
    }

    /// This thread's context, created on first use.
    static func current() throws(VerificationError) -> VerificationThreadContext {
        if let context = existing() {
            return context
        }
        // Made inside an arena window, the context's parser and dictionary would be given back
        // with the window while the thread keeps using them.
        precondition(!VerificationArena.isActive, "a thread's verification context created inside an arena window")
        try XMLSecLibrary.ensureInitialized()
        cxmlsec_silence_thread()
        guard let parser = xmlNewParserCtxt() else {
            throw VerificationError(.internalError, "cannot allocate a libxml2 parser context")
        }
        guard let dsig = cxmlsec_dsig_ctx_alloc() else {
            xmlFreeParserCtxt(parser)
            throw VerificationError(.internalError, "cannot allocate an xmlsec signature context")
        }
        guard let digestContext = DigestContext() else {
            xmlFreeParserCtxt(parser)
            cxmlsec_xml_free(dsig)
            throw VerificationError(.internalError, "cannot allocate a digest context")
        }
        let context = VerificationThreadContext(parser: parser, dsig: dsig, digestContext: digestContext)
        pthread_setspecific(threadContextKey, Unmanaged.passRetained(context).toOpaque())
        return context
    }

    /// Canonicalizes `subtree` natively into this thread's buffer; `nil` when the
    /// canonicalizer declines (the caller then uses libxml2). The bytes are valid until the
    /// next call on this thread.
    func canonicalize(
        _ subtree: SignedSubtree, withComments: Bool,
        inclusivePrefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> UnsafeBufferPointer<UInt8>? {
        let bytes = canonicalize(
            apex: subtree.apex, excluding: subtree.excluded, withComments: withComments, inclusivePrefixes: inclusivePrefixes)
        if bytes != nil { nativeCanonicalizations += 1 }
        return bytes
    }

    /// The `algorithm` digest of `subtree`'s exclusive canonical form (comments never kept: a
    /// same-document reference drops them), computed while the canonicalizer writes it, into
    /// `out` (64 bytes at least). Returns the digest's length, or `nil` when the canonicalizer
    /// declines the document or the digest fails. Counted in ``nativeCanonicalizations``.
    func digest(
        _ subtree: SignedSubtree, algorithm: cxmlsec_digest, inclusivePrefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?,
        into out: UnsafeMutablePointer<UInt8>
    ) -> Int? {
        guard digestContext.begin(algorithm) else { return nil }
        canonical.beginDigest(digestContext)
        let written = canonicalizer.canonicalize(
            apex: subtree.apex, excluding: subtree.excluded, withComments: false, inclusivePrefixes: inclusivePrefixes, into: canonical)
        guard canonical.finishDigest(), written else { return nil }
        nativeCanonicalizations += 1
        return digestContext.finish(into: out)
    }

    /// Canonicalizes `element`'s whole subtree natively (the `SignedInfo` shape), for
    /// ``NativeSignature`` (which counts it once a trusted key signed it) and
    /// ``SignatureKeySelection``: not counted in ``nativeCanonicalizations`` here. `nil` when the
    /// canonicalizer declines; the bytes are valid until the next canonicalization on this thread.
    func canonicalize(
        element: XMLTree.Node, withComments: Bool, inclusivePrefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> UnsafeBufferPointer<UInt8>? {
        canonicalize(apex: element, excluding: nil, withComments: withComments, inclusivePrefixes: inclusivePrefixes)
    }

    private func canonicalize(
        apex: XMLTree.Node, excluding excluded: XMLTree.Node?, withComments: Bool,
        inclusivePrefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> UnsafeBufferPointer<UInt8>? {
        canonical.reset()
        guard
            canonicalizer.canonicalize(
                apex: apex, excluding: excluded, withComments: withComments, inclusivePrefixes: inclusivePrefixes, into: canonical)
        else { return nil }
        return canonical.bytes
    }

    /// Replaces the parser context when its dictionary has grown past the bound.
    func recycleParserIfNeeded() {
        guard let dict = parser.pointee.dict, Int(xmlDictSize(dict)) > Self.maxDictionaryEntries else { return }
        guard let fresh = xmlNewParserCtxt() else { return }
        xmlFreeParserCtxt(parser)
        parser = fresh
    }
}

/// Key of the thread-local slot holding each thread's ``VerificationThreadContext``; its
/// destructor releases the context when the thread exits. Lazily created once (Swift globals
/// are initialised with `swift_once`).
private let threadContextKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { raw in
        guard let raw else { return }
        Unmanaged<VerificationThreadContext>.fromOpaque(raw).release()
    }
    precondition(rc == 0, "pthread_key_create failed")
    return key
}()

// MARK: - XMLSecLibrary

/// Process-wide initialisation of libxml2 and libxmlsec1 (OpenSSL backend).
///
/// The C side runs the sequence once under `pthread_once` (parser init, error silencing and
/// capture, `xmlSecInit`, ABI version check, OpenSSL backend init); this global caches the
/// result so that the hot path pays one load. Everything in this module that touches the C
/// libraries calls ``ensureInitialized()`` first. The libraries are never shut down: worker
/// threads may still hold contexts at exit, and the OS reclaims the memory.
enum XMLSecLibrary {
    /// Result of the one-time initialisation (`CXMLSEC_INIT_OK` on success).
    private static let initResult: Int32 = {
        let result = cxmlsec_init()
        if Int(result) == CXMLSEC_INIT_OK {
            CanonicalizationTransform.install()
        }
        return result
    }()

    /// Initialises the libraries if needed; throws ``VerificationError/Code/internalError`` on failure.
    static func ensureInitialized() throws(VerificationError) {
        let result = initResult
        if Int(result) != CXMLSEC_INIT_OK {
            let step = String(cString: cxmlsec_init_step(result))
            throw VerificationError(.internalError, "libxmlsec1 initialisation failed at \(step) (\(result))")
        }
    }

    /// The first xmlsec error captured on this thread since the last ``clearError()``.
    static var firstError: (reason: Int32, message: String) {
        (cxmlsec_first_error_reason(), String(cString: cxmlsec_first_error_message()))
    }

    /// Forgets the error captured on this thread.
    static func clearError() {
        cxmlsec_clear_error()
    }
}
