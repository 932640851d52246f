import CXMLSec

/// The namespace declarations in force in the canonical output, innermost last: what
/// exclusive C14N consults to decide whether an element must declare a prefix again.
///
/// Mirrors libxml2's "visible namespaces stack" for exclusive mode: every namespace an
/// element visibly utilizes is pushed (whether or not it was printed), and the stack is cut
/// back to its mark when the element ends. Reused per thread; holds C pointers into the
/// document being canonicalized, only for the duration of one canonicalization.
struct RenderedNamespaces {
    private var entries: [UnsafeMutablePointer<xmlNs>] = []
    private var marks: [Int] = []

    init() {
        entries.reserveCapacity(64)
        marks.reserveCapacity(64)
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        marks.removeAll(keepingCapacity: true)
    }

    /// Called when an element starts.
    mutating func openElement() {
        marks.append(entries.count)
    }

    /// Called when an element ends: forgets what it pushed.
    mutating func closeElement() {
        let mark = marks.removeLast()
        entries.removeSubrange(mark...)
    }

    mutating func push(_ ns: UnsafeMutablePointer<xmlNs>) {
        entries.append(ns)
    }

    /// Whether an output ancestor (or this element, earlier) already declared `prefix` with
    /// `href`. An empty default namespace counts as declared when nothing redeclared the
    /// default, as in libxml2's `xmlExcC14NVisibleNsStackFind`.
    func isRendered(prefix: UnsafePointer<xmlChar>?, href: UnsafePointer<xmlChar>?) -> Bool {
        var index = entries.count - 1
        while index >= 0 {
            let entry = entries[index].pointee
            if Self.sameOrBothEmpty(prefix, entry.prefix) {
                return Self.sameOrBothEmpty(href, entry.href)
            }
            index -= 1
        }
        return Self.isEmpty(prefix) && Self.isEmpty(href)
    }

    /// The same question for a prefix named in an `InclusiveNamespaces` list, which libxml2
    /// answers with its inclusive-C14N lookup: only among the declarations the output parent
    /// and this element pushed (`xmlC14NVisibleNsStackFind`), except for the empty default.
    func isRenderedByParent(prefix: UnsafePointer<xmlChar>?, href: UnsafePointer<xmlChar>?) -> Bool {
        let emptyDefault = Self.isEmpty(prefix) && Self.isEmpty(href)
        let lowest = emptyDefault || marks.count < 2 ? 0 : marks[marks.count - 2]
        var index = entries.count - 1
        while index >= lowest {
            let entry = entries[index].pointee
            if Self.sameOrBothEmpty(prefix, entry.prefix) {
                return Self.sameOrBothEmpty(href, entry.href)
            }
            index -= 1
        }
        return emptyDefault
    }

    @inline(__always)
    static func isEmpty(_ s: UnsafePointer<xmlChar>?) -> Bool {
        s == nil || s!.pointee == 0
    }

    /// String equality where NULL and "" are the same (libxml2's `xmlC14NStrEqual`).
    @inline(__always)
    static func sameOrBothEmpty(_ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?) -> Bool {
        if a == b { return true }
        if isEmpty(a) { return isEmpty(b) }
        if isEmpty(b) { return false }
        return xmlStrEqual(a, b) == 1
    }
}
