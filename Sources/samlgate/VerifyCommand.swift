import ArgumentParser
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification
import ServerSupport

/// `samlgate verify`: one JSON line per input telling whether it is a genuine response.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the XML signature and SAML rules of responses against trusted IdP keys.",
        discussion: """
            Trust comes from --trust PEM (certificates or public keys, repeatable; no issuer check) \
            or from --trust-store DIR with --mvpd ID (DIR/<mvpd>/*.pem and DIR/<mvpd>/issuer). \
            Keys in the document's KeyInfo are never trusted. Inputs may be raw XML, base64 or the \
            cookbook-encoded form. The verdict is on the response as the gateway forwards it \
            (cookbook-normalized; see "normalization" in the output). Prints one JSON object per input; exit status 0 when all are \
            valid, 1 when any is not, 2 for usage errors.
            """
    )

    @OptionGroup var trust: TrustOptions

    @Option(help: "The MVPD id whose trust applies (required with --trust-store).")
    var mvpd: String?

    @Flag(name: .customLong("no-replay-check"), help: "Do not reject an assertion id seen earlier in this run.")
    var noReplayCheck = false

    /// What a trust-store entry's `allow-weak-keys` file does, for `--trust` keys: without it an
    /// old IdP the gateway accepts (through such an entry) could not be checked from here.
    @Flag(
        name: .customLong("allow-weak-keys"),
        help: """
            With --trust: accept RSA keys under 2048 bits and EC keys off P-256/384/521, with a warning, \
            for testing old IdPs (with --trust-store, each entry's allow-weak-keys file decides).
            """
    )
    var allowWeakKeys = false

    @Argument(help: "Input files; '-' for standard input.")
    var files: [String] = []

    func validate() throws {
        if !trust.givesTrust {
            throw ValidationError("give --trust PEM or --trust-store DIR --mvpd ID")
        }
        if trust.trustStore != nil && mvpd == nil {
            throw ValidationError("--trust-store needs --mvpd ID")
        }
        if trust.trustStore != nil && allowWeakKeys {
            throw ValidationError("--allow-weak-keys goes with --trust (a trust-store entry's allow-weak-keys file decides for it)")
        }
        if files.isEmpty { throw ValidationError("no input files (use '-' for standard input)") }
    }

    func run() throws {
        let mvpdID = mvpd ?? "cli"
        let store: TrustStore
        do {
            store = try trust.loadStore(pemMVPD: mvpdID, allowWeakKeys: allowWeakKeys) { warning in
                StandardStreams.writeError("samlgate: warning: \(DisplayText.escape(warning))\n")
            }
        } catch {
            StandardStreams.writeError("samlgate: trust: \(error)\n")
            throw ExitCode(2)
        }
        let verifier = Verifier(trustStore: store, options: trust.verificationOptions, replayCache: noReplayCheck ? nil : InMemoryReplayCache())

        let inputLimit = Self.inputLimit(documentLimit: verifier.options.maxSize)
        var allValid = true
        for path in RawArguments.paths(files) {
            var line = JSONLine()
            line.add("file", path.description)
            do {
                // The verdict on the document the gateway forwards in its default `cookbook` form.
                let (xml, form) = try Self.readDocument(path, inputLimit: inputLimit)
                let document = try UnverifiedDocument(xml, decodedFrom: form)
                let verified = try verifier.verifyForForwarding(document, fallback: .equivalentTree, mvpd: mvpdID).response
                line.add("valid", true)
                line.add("error", json: nil)
                line.add("issuer", verified.issuer)
                line.add("nameID", verified.nameID)
                line.add("attributes", verified.attributes)
                line.add("notOnOrAfter", verified.notOnOrAfter.map(Self.iso8601))
                line.add("signed", verified.signed.rawValue)
                line.add("survivesNormalization", verified.survivesNormalization)
                line.add("normalization", verified.normalization?.rawValue)
            } catch {
                allValid = false
                let (code, message) = Self.describe(error)
                var failure = JSONLine()
                failure.add("code", code)
                failure.add("message", message)
                line.add("valid", false)
                line.add("error", json: failure.json)
            }
            StandardStreams.write(line.json + "\n")
        }
        if !allValid { throw ExitCode.failure }
    }

    /// Reads an input and, when it is base64 or cookbook-encoded, decodes it to XML (the file's
    /// surrounding whitespace trimmed first, see ``UnverifiedDocument``); returns the form it was
    /// in too.
    static func readDocument(_ path: RawPath, inputLimit: Int) throws -> ([UInt8], SAMLForm) {
        let input = try InputReader.read(path, limit: inputLimit)
        return try input.withUnsafeReadableBytes { bytes throws(SAMLEncodingError) in
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count + 3, alignment: 16)
            defer { scratch.deallocate() }
            let (xml, form) = try CookbookDecoder.xml(detectingFormOf: bytes, trimmingWhitespace: true, scratch: scratch)
            return (Array(xml), form)
        }
    }

    static func describe(_ error: any Error) -> (code: String, message: String) {
        switch error {
        case let error as VerificationError: return (error.code.rawValue, error.message)
        case let error as SAMLEncodingError: return (error.code.rawValue, error.message)
        case let error as InputReader.Failure: return (error.code.rawValue, error.message)
        default: return (ErrorCode.internalError.rawValue, "\(error)")
        }
    }

    /// The largest input `verify` reads: a document at the verifier's size limit, base64-encoded
    /// (4/3) and then percent-encoded (each base64 `+`, `/`, `=` becomes three bytes), stays
    /// under four times that limit. Anything longer could not decode to an acceptable document.
    static func inputLimit(documentLimit: Int) -> Int {
        documentLimit * 4
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
