extension CookbookDecoder {
    /// The XML document a `SAMLResponse` value in `form` stands for: the value itself when it is
    /// raw, otherwise its decoding into `scratch`, which must start like XML. The one place
    /// that rule lives (the any-form encoder, the gateway and the batch tool all need it).
    ///
    /// - Throws: `malformed_percent_encoding`, `malformed_base64`, or `unrecognized_saml_form`
    ///   when the decoding is not XML.
    /// - Precondition: `scratch` satisfies ``decode(_:into:)-(_,UnsafeMutableRawBufferPointer)``;
    ///   it may be the value's own memory (decoding in place).
    public static func xml(
        of value: UnsafeRawBufferPointer, form: SAMLForm, scratch: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> UnsafeRawBufferPointer {
        if form == .raw { return value }
        let count = try decode(value, into: scratch)
        let xml = UnsafeRawBufferPointer(rebasing: scratch[..<count])
        guard SAMLForm.startsLikeXML(xml) else {
            throw SAMLEncodingError(.unrecognizedSAMLForm, "the value is \(form.rawValue) but does not decode to XML")
        }
        return xml
    }
}
