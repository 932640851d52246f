/// Realistic, pretty-printed SAML attribute-query responses of a chosen size (CR LF and LF line
/// ends, tab and space indentation, a little non-ASCII), deterministic so runs compare.
enum SAMLFixture {
    static let sizes: [(name: String, bytes: Int)] = [("3KB", 3 * 1024), ("8KB", 8 * 1024), ("64KB", 64 * 1024), ("1MB", 1024 * 1024)]

    static func response(bytes target: Int) -> String {
        let head = """
            <?xml version="1.0" encoding="UTF-8"?>
            <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_8f1c2a0e5b7d4c3a9e6f" Version="2.0" IssueInstant="2026-11-22T10:00:00Z" Destination="https://saml.sp.auth.adobe.com">
              <saml:Issuer>https://idp.example-mvpd.com</saml:Issuer>
              <samlp:Status>\r
                <samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>
              </samlp:Status>
              <saml:Assertion ID="_a4b9e2d1c0f84e7b" Version="2.0" IssueInstant="2026-11-22T10:00:00Z">
                <saml:Issuer>https://idp.example-mvpd.com</saml:Issuer>
                <ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI="#_a4b9e2d1c0f84e7b"><ds:DigestValue>q9b7V0nZp3Jm2Xh0T4s1Yw8uQe6Rk5Lc0aPzGfBvD2E=</ds:DigestValue></ds:Reference></ds:SignedInfo>
                  <ds:SignatureValue>
            \tTn3nq8Zq0m+J4k2b9F/aV7yPq1xW3cR5sD8eG0hK2lM4nO6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hI6jK8lM0nO2pQ4r
            \tS6tU8vW0xY2zA4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4vW6xY8zA0bC2dE4fG6hI8jK0lM2nO4pQ6rS8tU0vW2xY4==
                  </ds:SignatureValue>
                </ds:Signature>
                <saml:Subject>
                  <saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">user-4711@example-mvpd.com</saml:NameID>
                  <saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="2026-11-22T10:05:00Z" Recipient="https://saml.sp.auth.adobe.com"/></saml:SubjectConfirmation>
                </saml:Subject>
                <saml:Conditions NotBefore="2026-11-22T09:59:00Z" NotOnOrAfter="2026-11-22T10:05:00Z">
                  <saml:AudienceRestriction><saml:Audience>https://saml.sp.auth.adobe.com</saml:Audience></saml:AudienceRestriction>
                </saml:Conditions>
                <saml:AttributeStatement>

            """
        let tail = """
                </saml:AttributeStatement>
              </saml:Assertion>
            </samlp:Response>

            """
        var body = head
        var n = 0
        while body.utf8.count + tail.utf8.count < target {
            body += "      <saml:Attribute Name=\"channel\(n)\">\r\n"
            body += "\t\t<saml:AttributeValue>Sender Zürich \(n) – HD+ / VOD=yes</saml:AttributeValue>\r\n"
            body += "      </saml:Attribute>\n"
            n += 1
        }
        return body + tail
    }
}
