import CXMLSec
import Testing

/// `XMLSEC_NO_SIZE_T` changes the layout of xmlsec's structs. What this guards: that Swift's
/// import of `CXMLSec.h` and the C compiler's view of the same header agree (the header carries
/// the defines `pkg-config xmlsec1-openssl` prints, which SwiftPM drops), so Swift reads `status`
/// where the shim writes it. What it cannot catch: a libxmlsec1 built with other defines than
/// its own pkg-config file announces — both sides here read the same header; at run time only
/// `cxmlsec_init`'s `xmlSecCheckVersionExt` (ABI-compatible version) stands between the two.
@Suite struct LayoutTests {
    @Test func dsigContextLayoutMatchesC() {
        #expect(MemoryLayout<xmlSecDSigCtx>.size == cxmlsec_sizeof_dsig_ctx())
        #expect(MemoryLayout<xmlSecKeyInfoCtx>.size == cxmlsec_sizeof_keyinfo_ctx())
        #expect(MemoryLayout<xmlSecTransformCtx>.size == cxmlsec_sizeof_transform_ctx())
        #expect(MemoryLayout<xmlSecDSigReferenceCtx>.size == cxmlsec_sizeof_dsig_reference_ctx())
        #expect(MemoryLayout<xmlSecPtrList>.size == cxmlsec_sizeof_ptr_list())
        #expect(MemoryLayout<xmlSecDSigCtx>.offset(of: \xmlSecDSigCtx.status) == cxmlsec_offsetof_dsig_status())
    }
}
