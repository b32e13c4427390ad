import SecureStoreCore
import Foundation

/// Checks that read the store's declared ``StorageGuarantees``: strict where a promise is made, the
/// documented weaker behaviour where it is not.
extension ConformanceCheck {
    static let guaranteeChecks: [ConformanceCheck] = [
        .init("guarantees.importRollback",
              "An import that fails after its first write leaves nothing behind where writes are atomic; elsewhere "
              + "the earlier items stay unchanged and only imported items can remain") { c in
            let s = try c.store()
            guard let target = s as? any RecordTransfer else { return }   // no record transfer: nothing to check
            try s.add(genp("svc", "a", data: "first"))
            try s.add(genp("svc", "b", data: "second"))
            let existing = try target.exportRecords()
            guard let a = existing.first else { throw ConformanceFailure(message: "no records", file: #fileID, line: #line) }
            // A record of its own (fresh key and reference) and then one with a new key but `a`'s reference:
            // the import writes the first before it finds the second taken.
            let other = try c.store()
            try other.add(genp("svc", "new", data: "imported"))
            guard let fresh = try (other as? any RecordTransfer)?.exportRecords().first else {
                throw ConformanceFailure(message: "no fresh record", file: #fileID, line: #line)
            }
            var attributes = a.attributes
            attributes[.account] = .string("renamed")
            let clash = ItemRecord(persistentRef: a.persistentRef, itemClass: a.itemClass, attributes: attributes, data: a.data)
            let before = try s.everything()
            try expectError(.duplicateItem, "import of a taken reference") { try target.importRecords([fresh, clash]) }
            let after = try s.everything()
            if s.guarantees.atomicWrites {
                try expect(before == after, "an atomic store kept part of a failed import")
            } else {
                // Best effort: every earlier item is exactly as it was; anything more is the imported item.
                try expect(before.allSatisfy { after.contains($0) }, "a failed import changed an earlier item")
                for item in after where !before.contains(item) {
                    try expectEqual(item.persistentRef, fresh.persistentRef, "an item other than an imported one appeared")
                }
            }
        },
        .init("guarantees.declared", "The declared guarantees are consistent: storage shared by other machines is "
              + "shared by other processes too, and process-private storage keeps order in the process") { c in
            let g = try c.store().guarantees
            if g.acrossMachines != .notShared { try expect(g.acrossProcesses != .notShared, "shared by machines, not processes") }
            if g.acrossProcesses == .notShared {
                try expectEqual(g.insertionOrder, .processCounter, "order source of process-private storage")
            } else {
                try expect(g.insertionOrder != .processCounter, "a process counter cannot order storage other processes write")
            }
        },
    ]
}
