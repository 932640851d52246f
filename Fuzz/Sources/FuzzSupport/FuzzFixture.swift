import Foundation
import SAMLVerification

/// What the fuzz targets that verify share: the test IdP key the seed corpus was signed with
/// (its certificate only — the private key is not checked in, so a fuzzer cannot mint new
/// signatures, only mutate genuine ones), the MVPD it is trusted for, a fixed clock inside the
/// seeds' validity window (so a finding reproduces on any day), and the identity every seed
/// carries (the genuine one: whatever still verifies after a mutation must show exactly it).
///
/// The seeds were made with
/// `samlgate idp issue --key key.pem --cert cert.pem --mvpd FuzzMVPD --user alice@example.com
/// --attr userID=u-12345 --attr channelID=ESPN --attr channelID=HBO --ttl 3600` (see docs/robustness.md).
public enum FuzzFixture {
    public static let mvpd = "FuzzMVPD"
    /// 2026-11-25T19:00:00Z: the seeds were issued at 18:40 with one hour of validity.
    public static let now = Date(timeIntervalSince1970: 1_795_633_200)
    public static let nameID = "alice@example.com"
    public static let issuer = "https://idp.fuzzmvpd.example.com/saml2/idp"
    public static let attributes: [String: [String]] = ["userID": ["u-12345"], "channelID": ["ESPN", "HBO"]]

    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIC6zCCAdOgAwIBAgIVAM6epCVM5JgSsNV+cmmsmelTCsIwMA0GCSqGSIb3DQEB
        CwUAMC8xETAPBgNVBAoMCHNhbWxnYXRlMRowGAYDVQQDDBFzYW1sZ2F0ZSB0ZXN0
        IElkUDAeFw0yNjExMjUxNzQwMjJaFw0zNjExMjIxODQwMjJaMC8xETAPBgNVBAoM
        CHNhbWxnYXRlMRowGAYDVQQDDBFzYW1sZ2F0ZSB0ZXN0IElkUDCCASIwDQYJKoZI
        hvcNAQEBBQADggEPADCCAQoCggEBAK+CtK/x/utEFKMhXBCJbc5OvphkUMVRj5Gq
        JpirWy7wYJ7GzDciDNwUnx4QPi5W3jGOc0NYfNutfNjq2j4wty2X37F0Th3mQp0w
        OdHGJ9MbdJtE6+Mq8PJjJbVhYwMmkpidsmSqfsBxUxF/TQRJ2HyIOBBmtem9pPMV
        rKaUUj1qa7QjOtGAF5F0nBSgw6nFhxLUwExyibw8FiuYw52issRx9qYakjEoY0nD
        NGjuScRQZR9gCJKUiBy/gdEHEvpLvxCz4epTiFAgXSdex/O0xTXakFFM9byCJiUM
        GVFbDgmfhk/ysUw/WuEagNxw3I7H2PO9e5I1oruQDyWh8w/AaeUCAwEAATANBgkq
        hkiG9w0BAQsFAAOCAQEAFGiZefpLAK40Qhev4U8nHR4vlCU51lpJAnBaqPDM+djv
        9GUJvefem/+WGba6n53azasdlcYUUXWIIKX0ek16duJs+hh0niLtDLwDBdE2G84x
        FTIDcIUjWsUy7VA+MAFybUPRVIBfeYRlC6BifnwbiEtV0hzwrqKCmdR3e9QjB+8d
        AV1FwbcltXXlWy8JDk2hs857UsbYomnrgHLWR7xgTk5AlJRNwsUVIycEoNtmRaRQ
        MAsZZV2R2gdFy73ZhKVJsLKAiMwQEbOsfogl9AIQmI4MZSHV0xSa5fnwducboT3n
        75WYkYvZOGc08yg6GOeEpbFhjrZoYC8jzupJH4uiBQ==
        -----END CERTIFICATE-----
        """

    public static let trustStore = TrustStore(providers: [
        try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [certificatePEM], issuer: nil)
    ])

    /// A verifier with the seed key trusted and no replay cache (every input is judged alone).
    public static let verifier = Verifier(trustStore: trustStore, options: VerificationOptions(), replayCache: nil)

    /// ``verifier`` with libxml2 canonicalizing: libxmlsec1's path, for the differential.
    public static let libxml2Verifier: Verifier = {
        var options = VerificationOptions()
        options.nativeCanonicalization = false
        return Verifier(trustStore: trustStore, options: options, replayCache: nil)
    }()

    /// Aborts unless  shows the genuine identity.
    public static func requireGenuineIdentity(_ response: VerifiedResponse, _ context: String) {
        if response.nameID != nameID { FuzzFailure.violated("\(context): NameID differs from the genuine one") }
        if response.issuer != issuer { FuzzFailure.violated("\(context): Issuer differs from the genuine one") }
        if response.attributes != attributes { FuzzFailure.violated("\(context): attributes differ from the genuine ones") }
    }
}
