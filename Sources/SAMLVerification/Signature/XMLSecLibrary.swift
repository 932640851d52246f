import CXMLSec

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
