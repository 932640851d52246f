import CXMLSec
import Foundation

/// A test identity provider: mints signed SAML 2.0 attribute-query responses.
///
/// Signs with libxmlsec1 the way IdPs do: enveloped signature, exclusive C14N (with an
/// `InclusiveNamespaces PrefixList="xs"`), RSA-SHA256 or ECDSA-SHA256 and SHA-256 digests by
/// default, `KeyInfo` with the X.509 certificate. Each response gets fresh random IDs.
/// For tests, demos and load generation only: it signs whatever it is asked to.
///
/// `@unchecked Sendable`: the loaded private key is only read (duplicated into each
/// signature context) after init and destroyed in `deinit`.
public final class TestIdentityProvider: @unchecked Sendable {
    public let keyPair: IdPKeyPair
    private let key: xmlSecKeyPtr

    public init(keyPair: IdPKeyPair) throws(TestIdPError) {
        guard Int(cxmlsec_init()) == CXMLSEC_INIT_OK else { throw TestIdPError("libxmlsec1 initialisation failed") }
        let bytes = Array(keyPair.privateKeyPEM.utf8)
        guard
            let key = bytes.withUnsafeBufferPointer({
                xmlSecOpenSSLAppKeyLoadMemory($0.baseAddress, UInt32($0.count), xmlSecKeyDataFormatPem, nil, nil, nil)
            })
        else {
            cxmlsec_clear_error()
            throw TestIdPError("not a PEM private key")
        }
        self.key = key
        self.keyPair = keyPair
    }

    /// Loads a key and certificate from PEM text; the algorithm is read from the key.
    public convenience init(privateKeyPEM: String, certificatePEM: String) throws(TestIdPError) {
        let algorithm: KeyAlgorithm = privateKeyPEM.contains("BEGIN EC PRIVATE KEY") ? .p256 : .rsa2048
        try self.init(keyPair: IdPKeyPair(algorithm: algorithm, privateKeyPEM: privateKeyPEM, certificatePEM: certificatePEM))
        if let name = xmlSecKeyGetValue(key)?.pointee.id?.pointee.name, String(cString: name).lowercased().hasPrefix("ec") {
            // PKCS#8 EC keys do not say "EC" in their PEM header.
            isEC = true
        }
    }

    private var isEC: Bool = false

    deinit {
        xmlSecKeyDestroy(key)
    }

    private var keyIsEC: Bool {
        isEC || keyPair.algorithm == .p256
    }

    /// Mints one response as UTF-8 bytes (with an XML declaration).
    public func issue(_ options: IssueOptions) throws(TestIdPError) -> [UInt8] {
        let algorithm = options.signatureAlgorithm ?? defaultAlgorithm
        let template = ResponseTemplate(
            options: options,
            responseID: options.responseID ?? Self.newID(),
            assertionID: options.assertionID ?? Self.newID(),
            signatureAlgorithm: algorithm,
            certificateBase64: keyPair.certificateBase64)
        var result = try sign(template.render(paddingBytes: 0), options: options, algorithm: algorithm)
        if let target = options.padToSize, target > result.count {
            result = try sign(template.render(paddingBytes: target - result.count), options: options, algorithm: algorithm)
        }
        return result
    }

    /// ``issue(_:)`` as a `String`.
    public func issueString(_ options: IssueOptions) throws(TestIdPError) -> String {
        String(decoding: try issue(options), as: UTF8.self)
    }

    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        return "_" + String((0..<40).map { _ in hex[Int(generator.next() % 16)] })
    }

    private func sign(_ text: String, options: IssueOptions, algorithm: SignatureAlgorithm) throws(TestIdPError) -> [UInt8] {
        let doc = try Self.parse(text)
        defer { xmlFreeDoc(doc) }
        guard let response = xmlDocGetRootElement(doc),
            let assertion = Self.child(response, "Assertion", ResponseTemplate.assertionNS)
        else { throw TestIdPError("internal error: template shape") }
        for element in [response, assertion] {
            guard let attr = xmlHasProp(element, "ID"), let value = xmlGetProp(element, "ID") else {
                throw TestIdPError("internal error: no ID")
            }
            defer { cxmlsec_xml_free(value) }
            guard xmlAddID(nil, doc, value, attr) != nil else { throw TestIdPError("duplicate ID") }
        }
        // The Assertion first: a Response signature covers the signed Assertion.
        if options.sign == .assertion || options.sign == .both {
            try signSignature(in: assertion, options: options, algorithm: algorithm)
        }
        if options.sign == .response || options.sign == .both {
            try signSignature(in: response, options: options, algorithm: algorithm)
        }
        return try Self.serialize(doc)
    }

    /// Signs a document whose root carries an `ID` and, as a child, a signature template
    /// referencing it (signed metadata: ``IdPMetadata/render(signedBy:)``).
    func signEnveloped(_ text: String) throws(TestIdPError) -> [UInt8] {
        let doc = try Self.parse(text)
        defer { xmlFreeDoc(doc) }
        guard let root = xmlDocGetRootElement(doc), let attr = xmlHasProp(root, "ID"), let value = xmlGetProp(root, "ID") else {
            throw TestIdPError("internal error: the root has no ID")
        }
        defer { cxmlsec_xml_free(value) }
        guard xmlAddID(nil, doc, value, attr) != nil else { throw TestIdPError("duplicate ID") }
        var options = IssueOptions(mvpd: "", user: "")
        options.pretty = true
        try signSignature(in: root, options: options, algorithm: defaultAlgorithm)
        return try Self.serialize(doc)
    }

    /// An enveloped-signature template (exclusive C14N, the default algorithm, the certificate
    /// in `KeyInfo`) referencing `#referenceID`.
    func signatureTemplate(referenceID: String, level: Int) -> String {
        ResponseTemplate(
            options: IssueOptions(mvpd: "", user: ""), responseID: referenceID, assertionID: referenceID,
            signatureAlgorithm: defaultAlgorithm, certificateBase64: keyPair.certificateBase64
        )
        .signatureTemplate(referenceID: referenceID, level: level)
    }

    private var defaultAlgorithm: SignatureAlgorithm { keyIsEC ? .ecdsaSHA256 : .rsaSHA256 }

    private static func parse(_ text: String) throws(TestIdPError) -> UnsafeMutablePointer<xmlDoc> {
        let bytes = Array(text.utf8)
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                xmlReadMemory($0.baseAddress, Int32($0.count), nil, "UTF-8", Int32(bitPattern: XML_PARSE_NONET.rawValue))
            }
        }
        guard let doc = parsed else { throw TestIdPError("internal error: template is not well-formed") }
        return doc
    }

    private static func serialize(_ doc: UnsafeMutablePointer<xmlDoc>) throws(TestIdPError) -> [UInt8] {
        var memory: UnsafeMutablePointer<xmlChar>?
        var size: Int32 = 0
        xmlDocDumpMemoryEnc(doc, &memory, &size, "UTF-8")
        guard let memory else { throw TestIdPError("serialization failed") }
        defer { cxmlsec_xml_free(memory) }
        return Array(UnsafeBufferPointer(start: memory, count: Int(size)))
    }

    private func signSignature(in element: UnsafeMutablePointer<xmlNode>, options: IssueOptions, algorithm: SignatureAlgorithm) throws(TestIdPError) {
        guard let signature = Self.child(element, "Signature", ResponseTemplate.dsigNS) else {
            throw TestIdPError("internal error: no signature template")
        }
        guard let ctx = xmlSecDSigCtxCreate(nil) else { throw TestIdPError("cannot create a signature context") }
        defer { xmlSecDSigCtxDestroy(ctx) }
        if algorithm.isHMAC {
            let secret = options.hmacSecret ?? Array(keyPair.certificatePEM.utf8)
            ctx.pointee.signKey = secret.withUnsafeBufferPointer {
                xmlSecKeyReadMemory(xmlSecOpenSSLKeyDataHmacGetKlass(), $0.baseAddress, UInt32($0.count))
            }
        } else {
            ctx.pointee.signKey = xmlSecKeyDuplicate(key)
        }
        guard ctx.pointee.signKey != nil else { throw TestIdPError("cannot prepare the signing key") }
        cxmlsec_clear_error()
        guard xmlSecDSigCtxSign(ctx, signature) >= 0 else {
            let message = String(cString: cxmlsec_first_error_message())
            cxmlsec_clear_error()
            throw TestIdPError("signing failed: \(message)")
        }
        if !options.pretty, let value = Self.child(signature, "SignatureValue", ResponseTemplate.dsigNS),
            let content = xmlNodeGetContent(value)
        {
            // xmlsec wraps base64 at 64 columns; compact output keeps it on one line (the
            // SignatureValue is not digested, so this does not affect the signature).
            let compact = String(cString: content).filter { !$0.isWhitespace }
            cxmlsec_xml_free(content)
            xmlNodeSetContent(value, compact)
        }
    }

    static func child(_ node: UnsafeMutablePointer<xmlNode>, _ name: String, _ ns: String) -> UnsafeMutablePointer<xmlNode>? {
        var current = node.pointee.children
        while let child = current {
            if child.pointee.type == XML_ELEMENT_NODE, xmlStrEqual(child.pointee.name, name) == 1,
                let href = child.pointee.ns?.pointee.href, xmlStrEqual(href, ns) == 1
            {
                return child
            }
            current = child.pointee.next
        }
        return nil
    }
}

// MARK: - Entry points

/// The entry points the `samlgate idp` CLI calls.
public enum TestIdP {
    /// `samlgate idp keygen --out DIR [--alg rsa2048|p256]`: writes `key.pem` and `cert.pem`.
    @discardableResult
    public static func keygen(
        outDir: String, algorithm: KeyAlgorithm = .rsa2048, commonName: String = "samlgate test IdP"
    ) throws(TestIdPError) -> IdPKeyPair {
        let pair = try IdPKeyPair.generate(algorithm, commonName: commonName)
        try pair.write(to: outDir)
        return pair
    }

    /// `samlgate idp issue --key K --cert C --mvpd M --user U …`: one signed response.
    public static func issue(privateKeyPEM: String, certificatePEM: String, options: IssueOptions) throws(TestIdPError) -> [UInt8] {
        try TestIdentityProvider(privateKeyPEM: privateKeyPEM, certificatePEM: certificatePEM).issue(options)
    }

    /// Same, reading the two PEM files.
    public static func issue(keyPath: String, certificatePath: String, options: IssueOptions) throws(TestIdPError) -> [UInt8] {
        guard let key = try? String(contentsOfFile: keyPath, encoding: .utf8) else { throw TestIdPError("cannot read \(keyPath)") }
        guard let cert = try? String(contentsOfFile: certificatePath, encoding: .utf8) else { throw TestIdPError("cannot read \(certificatePath)") }
        return try issue(privateKeyPEM: key, certificatePEM: cert, options: options)
    }
}

// MARK: - Errors

/// The test IdP could not generate keys, load them or sign.
public struct TestIdPError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
