import SecureStoreCore
import Foundation

extension ConformanceCheck {
    static let updateChecks: [ConformanceCheck] = [
        .init("update.one", "Update changes the secret and attributes of the matching item") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", data: "old"))
            try s.add(genp("svc", "b", data: "other"))
            try expectEqual(try s.update(query("svc", "a"), with: ItemChanges([.label: "L"], data: Data("new".utf8))), 1)
            try expectEqual(try s.data(query("svc", "a")), Data("new".utf8))
            try expectEqual(try s.data(query("svc", "b")), Data("other".utf8))
        },
        .init("update.many", "Update changes every matching item and says how many") { c in
            let s = try c.store()
            for i in 0..<4 { try s.add(genp("svc", "a\(i)")) }
            try s.add(genp("elsewhere", "a0"))
            try expectEqual(try s.update(query("svc"), with: ItemChanges([.comment: "bulk"])), 4)
            try expectEqual(try s.count(ItemQuery(.genericPassword, [.comment: "bulk"])), 4)
        },
        .init("update.notFound", "Update that matches nothing gives itemNotFound") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try expectUnchanged(s) {
                try expectError(.itemNotFound) { try s.update(query("svc", "zz"), with: ItemChanges([.label: "x"])) }
            }
        },
        .init("update.collision", "An update that would duplicate another item's key fails and changes nothing") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", data: "1"))
            try s.add(genp("svc", "b", data: "2"))
            try expectUnchanged(s) {
                try expectError(.duplicateItem) {
                    try s.update(query("svc", "a"), with: ItemChanges([.account: "b"], data: Data("3".utf8)))
                }
            }
        },
        .init("update.collisionAmongUpdated", "Two matched items given the same new key fail, all or nothing") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "b"))
            try expectUnchanged(s) {
                try expectError(.duplicateItem) { try s.update(query("svc"), with: ItemChanges([.account: "same"])) }
            }
        },
        .init("update.changeKey", "Changing a uniqueness attribute moves the item to its new key") { c in
            let s = try c.store(["g1", "g2"])
            try s.add(genp("svc", "a", data: "x"))
            try s.update(query("svc", "a"), with: ItemChanges([.account: "renamed", .accessGroup: "g2"]))
            try expectEqual(try s.items(matching: query("svc", "a")).count, 0)
            try expectEqual(try s.data(query("svc", "renamed", [.accessGroup: "g2"])), Data("x".utf8))
            try s.add(genp("svc", "a"))
            try expectError(.missingEntitlement) { try s.update(query("svc", "a"), with: ItemChanges([.accessGroup: "g9"])) }
            try s.update(query("svc", "a"), with: ItemChanges([.synchronizable: true]))
            try expectEqual(try s.count(query("svc", "a", [.synchronizable: true])), 1)
        },
        .init("update.refusedQueries", "Update queries with match limit, case-insensitivity or return keys are refused") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try expectUnchanged(s) {
                for q in [ItemQuery(.genericPassword, [.service: "svc"], limit: .one),
                          ItemQuery(.genericPassword, [.service: "svc"], limit: .all),
                          ItemQuery(.genericPassword, [.service: "svc"], caseInsensitive: true),
                          ItemQuery(.genericPassword, [.service: "svc"], returning: .data)] {
                    try expectError(.param) { try s.update(q, with: ItemChanges([.label: "x"])) }
                }
                try expectError(.noSuchAttribute) { try s.update(query("svc"), with: ItemChanges([.server: "h"])) }
                try expectError(.param) { try s.update(query("svc"), with: ItemChanges([.type: "eighty"])) }
            }
        },
        .init("update.dates", "Update makes the modification date strictly later and never changes the creation date") { c in
            let s = try c.store()
            let r = try s.add(genp("svc", "a"), returning: .attributes)
            let before = r.attributes ?? [:]
            try s.update(query("svc", "a"), with: ItemChanges([.creationDate: .date(Date(timeIntervalSince1970: 5))], data: Data("n".utf8)))
            let after = try s.items(matching: ItemQuery(.genericPassword, [.service: "svc"], returning: .attributes)).first?.attributes ?? [:]
            try expectEqual(after[.creationDate], before[.creationDate], "creation date")
            guard case .date(let m0)? = before[.modificationDate], case .date(let m1)? = after[.modificationDate] else {
                throw ConformanceFailure(message: "dates missing", file: #fileID, line: #line)
            }
            try expect(m1 > m0, "modification date \(m1) later than \(m0)")
        },
        .init("update.synchronizableVisibility", "Update without sync leaves synced items alone") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "a", [.synchronizable: true]))
            try expectEqual(try s.update(query("svc"), with: ItemChanges([.label: "x"])), 1)
            try expectEqual(try s.update(ItemQuery(.genericPassword, [.service: "svc"], synchronizableAny: true),
                                         with: ItemChanges([.label: "y"])), 2)
        },
        .init("update.byPersistentRef", "Update by persistent reference changes that item only") { c in
            let s = try c.store()
            let ref = try s.add(genp("svc", "a"), returning: .persistentRef).persistentRef
            try s.add(genp("svc", "b"))
            guard let ref else { throw ConformanceFailure(message: "no ref", file: #fileID, line: #line) }
            try expectEqual(try s.update(.item(ref), with: ItemChanges(data: Data("z".utf8))), 1)
            try expectEqual(try s.data(query("svc", "a")), Data("z".utf8))
            try expectError(.noSuchAttribute) { try s.update(.item(ref), with: ItemChanges([.server: "h"])) }
        },
    ]

    static let deleteChecks: [ConformanceCheck] = [
        .init("delete.allMatches", "Delete removes every match and says how many") { c in
            let s = try c.store()
            for i in 0..<3 { try s.add(genp("svc", "a\(i)")) }
            try s.add(genp("keep", "a0"))
            try expectEqual(try s.delete(query("svc")), 3)
            try expectEqual(try s.count(ItemQuery(.genericPassword)), 1)
        },
        .init("delete.notFound", "Delete that matches nothing gives itemNotFound") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try expectUnchanged(s) { try expectError(.itemNotFound) { try s.delete(query("svc", "b")) } }
        },
        .init("delete.refusedQueries", "Delete refuses match keys and ignores return keys") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try expectUnchanged(s) {
                try expectError(.param) { try s.delete(ItemQuery(.genericPassword, [.service: "svc"], limit: .all)) }
                try expectError(.param) { try s.delete(ItemQuery(.genericPassword, [.service: "svc"], caseInsensitive: true)) }
                try expectError(.param) { try s.delete(ItemQuery(nil, [.service: "svc"])) }
            }
            try expectEqual(try s.delete(ItemQuery(.genericPassword, [.service: "svc"], returning: .data)), 1)
        },
        .init("delete.synchronizable", "Delete follows the synchronizable rule; any reaches both") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "a", [.synchronizable: true]))
            try expectEqual(try s.delete(query("svc")), 1)
            try expectEqual(try s.delete(ItemQuery(.genericPassword, [.service: "svc"], synchronizableAny: true)), 1)
        },
        .init("delete.persistentRef", "Delete by persistent reference removes that item only") { c in
            let s = try c.store()
            let ref = try s.add(genp("svc", "a"), returning: .persistentRef).persistentRef
            try s.add(genp("svc", "b"))
            guard let ref else { throw ConformanceFailure(message: "no ref", file: #fileID, line: #line) }
            try expectEqual(try s.delete(.item(ref)), 1)
            try expectError(.itemNotFound) { try s.delete(.item(ref)) }
            try expectEqual(try s.count(query("svc")), 1)
        },
        .init("delete.deleteThenAdd", "Delete then add of the same key works (the seeds' save)") { c in
            let s = try c.store()
            for round in 0..<3 {
                _ = try? s.delete(query("svc", "svc"))
                try s.add(genp("svc", "svc", data: "v\(round)"))
            }
            try expectEqual(try s.data(query("svc", "svc")), Data("v2".utf8))
        },
    ]

    static let clearChecks: [ConformanceCheck] = [
        .init("clear.all", "Clear removes every item of every class, group and sync state") { c in
            let s = try c.store(["g1", "g2"])
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "a", [.synchronizable: true, .accessGroup: "g2"]))
            try s.add(NewItem(.internetPassword, [.server: "h"]))
            try s.add(NewItem(.key, [.applicationTag: .data(Data([1]))]))
            try s.add(NewItem(.certificate, [.serialNumber: .data(Data([1]))]))
            try s.add(NewItem(.identity, [.serialNumber: .data(Data([1]))]))
            try expectEqual(try s.clear(), 6)
            try expectEqual(try s.everything().count, 0)
            try expectEqual(try s.clear(), 0)
        },
        .init("clear.someClasses", "Clear of some classes leaves the others") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(NewItem(.internetPassword, [.server: "h"]))
            try s.add(NewItem(.key, [.applicationTag: .data(Data([1]))]))
            try expectEqual(try s.clear([.genericPassword, .key]), 2)
            try expectEqual(try s.everything().map(\.itemClass), [.internetPassword])
        },
        .init("clear.seedLoop", "Deleting each class with syncAny, treating itemNotFound as success, empties the store") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "a", [.synchronizable: true]))
            try s.add(NewItem(.internetPassword, [.server: "h"]))
            for cls in ItemClass.allCases {
                do {
                    try s.delete(ItemQuery(cls, synchronizableAny: true))
                } catch let error as SecureStoreError where error.code == .itemNotFound {
                    continue
                }
            }
            try expectEqual(try s.everything().count, 0)
        },
    ]
}
