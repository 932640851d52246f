import Foundation

/// A binary min-heap of (expiry, key), so the replay cache can drop expired entries in
/// O(log n) each without scanning.
struct ReplayEntryHeap {
    private(set) var entries: [(expiry: Date, key: String)] = []

    var count: Int { entries.count }
    var min: (expiry: Date, key: String)? { entries.first }

    mutating func push(_ expiry: Date, _ key: String) {
        entries.append((expiry, key))
        var child = entries.count - 1
        // Invariant: the heap property holds everywhere except between `child` and its parent.
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].expiry < entries[parent].expiry else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> (expiry: Date, key: String)? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let result = entries.removeLast()
        var parent = 0
        // Invariant: the heap property holds everywhere except between `parent` and its children.
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].expiry < entries[smallest].expiry { smallest = left }
            if right < entries.count && entries[right].expiry < entries[smallest].expiry { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return result
    }
}
