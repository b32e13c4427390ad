import SecureStoreCore
import Foundation

extension ConformanceCheck {
    static let orderChecks: [ConformanceCheck] = [
        .init("order.everyFindPath",
              "Items come back in insertion order whichever way they are found (by reference, by full uniqueness key "
              + "across access groups, by class and service, by class and account, by class, everything in an "
              + "export), and an update keeps an item's place, even one that changes its service") { c in
            let s = try c.store(["g.one", "g.two"])
            func add(_ label: String, _ cls: ItemClass = .genericPassword, attrs: [AttributeName: AttributeValue])
                throws -> PersistentRef
            {
                var all = attrs
                all[.label] = .string(label)
                let r = try s.add(NewItem(cls, all, data: Data(label.utf8)), returning: .persistentRef)
                guard let ref = r.persistentRef else {
                    throw ConformanceFailure(message: "add returned no reference", file: #fileID, line: #line)
                }
                return ref
            }
            // Insertion order differs from the access-group order, the service order and the account order.
            var refs: [String: PersistentRef] = [:]
            refs["A"] = try add("A", attrs: [.service: "s", .account: "a", .accessGroup: "g.two"])
            refs["B"] = try add("B", attrs: [.service: "s", .account: "a", .accessGroup: "g.one"])
            refs["C"] = try add("C", attrs: [.service: "s", .account: "b", .accessGroup: "g.one"])
            refs["D"] = try add("D", attrs: [.service: "t", .account: "c", .accessGroup: "g.two"])
            refs["E"] = try add("E", .internetPassword, attrs: [.server: "example.com", .account: "a"])
            refs["F"] = try add("F", attrs: [.service: "t", .account: "b", .accessGroup: "g.one"])
            refs["G"] = try add("G", attrs: [.service: "r", .account: "a", .accessGroup: "g.one"])

            func labels(_ q: ItemQuery) throws -> [String] {
                var q = q
                q.limit = .all
                q.returning = [.attributes]
                return try s.found(q).map { $0.attributes?[.label]?.text ?? "?" }
            }
            func checkAll(_ stage: String, service serviceS: [String], serviceT: [String], account: [String],
                          fullKey: [String], generic: [String], everything: [String]) throws {
                try expectEqual(try labels(ItemQuery(.genericPassword, [.service: "s"])), serviceS, "\(stage): class+service s")
                try expectEqual(try labels(ItemQuery(.genericPassword, [.service: "t"])), serviceT, "\(stage): class+service t")
                try expectEqual(try labels(ItemQuery(.genericPassword, [.account: "a"])), account, "\(stage): class+account")
                try expectEqual(try labels(ItemQuery(.genericPassword, [.service: "s", .account: "a"])), fullKey,
                                "\(stage): full key in both groups")
                try expectEqual(try labels(ItemQuery(.genericPassword)), generic, "\(stage): class")
                for (label, ref) in refs.sorted(by: { $0.key < $1.key }) {
                    let byRef = try s.found(ItemQuery.item(ref, returning: .attributes))
                    try expectEqual(byRef.map { $0.attributes?[.label]?.text ?? "?" }, [label], "\(stage): by reference")
                }
                if let transfer = s as? any RecordTransfer {
                    let exported = try transfer.exportRecords().map { $0.attributes[.label]?.text ?? "?" }
                    try expectEqual(exported, everything, "\(stage): every record (export)")
                }
            }
            try checkAll("after adds", service: ["A", "B", "C"], serviceT: ["D", "F"], account: ["A", "B", "G"],
                         fullKey: ["A", "B"], generic: ["A", "B", "C", "D", "F", "G"],
                         everything: ["A", "B", "C", "D", "E", "F", "G"])

            // Updates keep each item's place: a new secret, a new label, a new service (its indexes change).
            try s.update(ItemQuery(.genericPassword, [.label: "A"]), with: ItemChanges(data: Data("new".utf8)))
            try s.update(ItemQuery(.genericPassword, [.label: "B"]), with: ItemChanges([.comment: "changed"]))
            try s.update(ItemQuery(.genericPassword, [.label: "D"]), with: ItemChanges([.service: "s"]))
            try checkAll("after updates", service: ["A", "B", "C", "D"], serviceT: ["F"], account: ["A", "B", "G"],
                         fullKey: ["A", "B"], generic: ["A", "B", "C", "D", "F", "G"],
                         everything: ["A", "B", "C", "D", "E", "F", "G"])

            // A deleted item leaves no gap; an item added after it comes last, even with an earlier key.
            try s.delete(ItemQuery(.genericPassword, [.label: "B"]))
            refs["B"] = nil
            refs["H"] = try add("H", attrs: [.service: "s", .account: "a", .accessGroup: "g.one"])
            try checkAll("after delete and add", service: ["A", "C", "D", "H"], serviceT: ["F"],
                         account: ["A", "G", "H"], fullKey: ["A", "H"], generic: ["A", "C", "D", "F", "G", "H"],
                         everything: ["A", "C", "D", "E", "F", "G", "H"])
        },
    ]
}
