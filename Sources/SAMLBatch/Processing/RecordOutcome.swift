import NIOCore
import SAMLEncoding

/// What processing made of one batch record, settled before any of it is written: the output
/// record (``RecordFormatter``) or the `--out DIR` file (``EncodedFileWriter``) is written once,
/// whole, from this value.
enum RecordOutcome {
    /// The value was brought to the cookbook form: `value` is it, encoded (the processor's
    /// buffer for the chunk, cleared for the next record once this one is written). With
    /// `--verify`, `verification` holds the columns and `error` says why a record that encodes
    /// did not verify.
    case encoded(form: SAMLForm, value: ByteBuffer, verification: VerificationFields?, error: RecordError?)
    /// The record could not be brought to the cookbook form: it is written with its error and no
    /// value (`form` is known when detection got that far; with `--verify` it is not valid).
    case failed(form: SAMLForm?, error: RecordError)

    var form: SAMLForm? {
        switch self {
        case .encoded(let form, _, _, _): form
        case .failed(let form, _): form
        }
    }

    /// Why the record failed (to encode, or with `--verify` to verify), if it did.
    var error: RecordError? {
        switch self {
        case .encoded(_, _, _, let error): error
        case .failed(_, let error): error
        }
    }
}
