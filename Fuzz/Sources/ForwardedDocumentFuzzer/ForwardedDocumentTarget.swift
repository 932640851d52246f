import FuzzSupport
@_spi(Benchmarks) import Gateway
import NIOCore
import SAMLEncoding
import SAMLVerification

/// Target `forwarded-document`.
///
/// Invariant (the gateway-security rule "verify what you forward", searched for counterexamples):
/// an arbitrary raw document, sent as the `SAMLResponse` of a v1 exchange form, is either refused
/// by the gateway's exchange preparation (`ExchangeProcessor.prepare`) or forwarded as a document
/// that
/// - is byte for byte the cookbook normalization of the input (forward form `cookbook`), or the
///   normalization or the input itself (`signature-preserving`), as the verdict says;
/// - verifies on its own, with the genuine identity (NameID, attributes, Issuer), when the verdict
///   says its signature survived (`unchanged`, `verified`) or the original is forwarded (`original`);
/// - when the normalized document is forwarded as an equivalent tree (`equivalent`): the input
///   verifies on its own with the genuine identity, and so does the verifier's reading of the
///   forwarded document.
/// Both forward forms are tried on every input. Any other outcome aborts.
@main
enum ForwardedDocumentTarget {
    static func main() {
        FuzzDriver.run { data, size in ForwardedDocumentTarget.testOne(data, size) }
    }

    static let processors = ForwardForm.allCases.map { form in
        (
            form,
            ExchangeProcessor(
                trustStore: ReloadableTrustStore(FuzzFixture.trustStore), options: VerificationOptions(),
                replayCache: nil, forwardForm: form)
        )
    }

    static let formPrefix = Array("requestor=REF&deviceId=device-1&mvpd=\(FuzzFixture.mvpd)&deviceType=iOS&SAMLResponse=".utf8)
    static let samlPrefix = Array("SAMLResponse=".utf8)
    static let unreserved = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
    static let hex = Array("0123456789ABCDEF".utf8)

    /// The form body of a v1 exchange carrying `document` as `SAMLResponse`, percent-encoded so the
    /// form decoder gives back exactly its bytes.
    static func formBody(_ document: UnsafeRawBufferPointer) -> ByteBuffer {
        var body = ByteBufferAllocator().buffer(capacity: formPrefix.count + document.count * 3)
        body.writeBytes(formPrefix)
        for byte in document {
            if unreserved.contains(byte) {
                body.writeInteger(byte)
            } else {
                body.writeBytes([UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }
        }
        return body
    }

    /// The document the upstream would receive: the forwarded `SAMLResponse`, percent- then base64-decoded.
    static func forwardedDocument(_ body: ByteBuffer) -> [UInt8] {
        let bytes = Array(body.readableBytesView)
        for field in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) where field.starts(with: samlPrefix) {
            let value = Array(field.dropFirst(samlPrefix.count))
            var decoded = ByteBufferAllocator().buffer(capacity: value.count)
            let ok = value.withUnsafeBytes { raw in (try? CookbookDecoder.decode(raw, into: &decoded)) != nil }
            if !ok { FuzzFailure.violated("the forwarded SAMLResponse does not decode") }
            return Array(decoded.readableBytesView)
        }
        FuzzFailure.violated("no SAMLResponse in the forwarded body")
    }

    static func normalization(of input: UnsafeRawBufferPointer) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(input.count, 1))
        guard let count = out.withUnsafeMutableBytes({ try? WhitespaceNormalizer.normalizeValidating(input, into: $0) }) else { return nil }
        return Array(out[..<count])
    }

    static func requireVerifies(_ document: [UInt8], _ what: String) {
        do {
            let verified = try FuzzFixture.verifier.verify(document, mvpd: FuzzFixture.mvpd, now: FuzzFixture.now)
            FuzzFixture.requireGenuineIdentity(verified, what)
        } catch {
            FuzzFailure.violated("\(what) does not verify on its own (\(error.code))")
        }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = FuzzDriver.input(data, size)
        let body = formBody(input)
        for (form, processor) in processors {
            guard case .forward(let prepared) = processor.prepare(body: body, route: .v1, now: FuzzFixture.now) else { continue }
            let forwarded = forwardedDocument(prepared.upstreamBody)
            guard let normalized = normalization(of: input) else { FuzzFailure.violated("forwarded a document that is not UTF-8") }
            let original = Array(input)
            switch prepared.normalization {
            case .unchanged, .verified:
                if forwarded != normalized { FuzzFailure.violated("\(form): forwarded bytes are not the normalized input") }
                requireVerifies(forwarded, "\(form): forwarded document (\(prepared.normalization))")
            case .original:
                if form != .signaturePreserving { FuzzFailure.violated("cookbook form forwarded the original") }
                if forwarded != original { FuzzFailure.violated("\(form): forwarded bytes are not the input") }
                requireVerifies(forwarded, "\(form): forwarded original")
            case .equivalent:
                if form != .cookbook { FuzzFailure.violated("signature-preserving forwarded an equivalent tree") }
                if forwarded != normalized { FuzzFailure.violated("\(form): forwarded bytes are not the normalized input") }
                requireVerifies(original, "\(form): original behind an equivalent forward")
                // The original normalizes to `forwarded` (checked above): the same two documents.
                let reading = (try? UnverifiedDocument(original, decodedFrom: .raw)).flatMap {
                    try? FuzzFixture.verifier.verifyForForwarding($0, fallback: .equivalentTree, mvpd: FuzzFixture.mvpd, now: FuzzFixture.now)
                }
                guard let reading, reading.bytes == forwarded else {
                    FuzzFailure.violated("\(form): equivalent forward not verified again")
                }
                FuzzFixture.requireGenuineIdentity(reading.response, "\(form): identity read from the equivalent forward")
            }
        }
        return 0
    }
}
