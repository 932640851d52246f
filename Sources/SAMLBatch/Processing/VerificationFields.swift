/// The `--verify` columns of one record. The NameID itself never leaves the process: only its
/// SHA-256.
struct VerificationFields {
    var valid: Bool
    var issuer: String?
    var nameIDHash: String?
    var notOnOrAfter: String?
    var survivesNormalization: Bool?

    static let invalid = VerificationFields(valid: false)
}
