import CXMLSec
import Testing

/// `XMLSEC_NO_SIZE_T` changes the layout of xmlsec's structs; a mismatch between what Swift
/// imported and what the C compiler sees would read `status` from the wrong offset silently.
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
