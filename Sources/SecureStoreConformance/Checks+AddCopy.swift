import SecureStoreCore
import Foundation

extension ConformanceCheck {
    static let addChecks: [ConformanceCheck] = [
        .init("add.roundTrip", "An added item is found by service and account with its secret") { c in
            let s = try c.store()
            try s.add(genp("svc", "alice", data: "s3cret"))
            try expectEqual(try s.data(query("svc", "alice")), Data("s3cret".utf8))
        },
        .init("add.duplicate", "Adding the same uniqueness key twice gives duplicateItem naming the key") { c in
            let s = try c.store()
            try s.add(genp("svc", "alice", data: "one"))
            try expectUnchanged(s) {
                let e = try expectError(.duplicateItem) { try s.add(genp("svc", "alice", data: "two")) }
                try expect(e.message.contains("account") && e.message.contains("service"), "message names the key: \(e.message)")
                try expect(!e.message.contains("two"), "message must not contain the secret")
            }
        },
        .init("add.duplicateIgnoresNonKey", "Label, comment, generic, accessibility and secret never make items distinct") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", [.label: "L1", .comment: "c1", .generic: .data(Data([1])), .accessible: "ak"], data: "x"))
            let extras: [[AttributeName: AttributeValue]] = [
                [.label: .string("L2")], [.comment: .string("c2")], [.generic: .data(Data([2]))],
                [.accessible: .string("dk")], [.description: .string("d")],
            ]
            for extra in extras {
                try expectError(.duplicateItem, "\(extra)") { try s.add(genp("svc", "a", extra, data: "y")) }
            }
        },
        .init("add.missingKeyAttributeIsDefault", "Two generic passwords with one service and no account collide") { c in
            let s = try c.store()
            try s.add(genp("svc"))
            try expectError(.duplicateItem) { try s.add(genp("svc")) }
            try expectError(.duplicateItem) { try s.add(genp("svc", "")) }
        },
        .init("add.syncAndGroupDistinguish", "Items differing only in synchronizable or access group coexist") { c in
            let s = try c.store(["g1", "g2"])
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "a", [.synchronizable: true]))
            try s.add(genp("svc", "a", [.accessGroup: "g2"]))
            try s.add(genp("svc", "a", [.accessGroup: "g2", .synchronizable: true]))
            try expectEqual(try s.count(ItemQuery(.genericPassword, synchronizableAny: true)), 4)
        },
        .init("add.stringDataCollide", "A String and a Data with the same UTF-8 bytes are the same key") { c in
            let s = try c.store()
            try s.add(NewItem(.genericPassword, [.service: "svc", .account: "bob"]))
            try expectError(.duplicateItem) {
                try s.add(NewItem(.genericPassword, [.service: .data(Data("svc".utf8)), .account: "bob"]))
            }
        },
        .init("add.valueTypeKept", "A text attribute comes back as the type it was stored with") { c in
            let s = try c.store()
            try s.add(NewItem(.genericPassword, [.service: "svc", .account: .data(Data("bob".utf8))]))
            let attrs = try s.items(matching: ItemQuery(.genericPassword, [.service: "svc"], returning: .attributes)).first?.attributes
            try expectEqual(attrs?[.account], .data(Data("bob".utf8)), "account")
            try expectEqual(attrs?[.service], .string("svc"), "service")
        },
        .init("add.noSuchAttribute", "An attribute the class does not define gives noSuchAttribute; nothing is stored") { c in
            let s = try c.store()
            try expectUnchanged(s) {
                let e = try expectError(.noSuchAttribute) { try s.add(NewItem(.genericPassword, [.service: "s", .server: "h"])) }
                try expectEqual(e.parameter, "srvr", "parameter")
                try expectError(.noSuchAttribute) { try s.add(NewItem(.internetPassword, [.service: "s"])) }
                try expectError(.noSuchAttribute) { try s.add(NewItem(.certificate, [.account: "a"])) }
            }
        },
        .init("add.wrongValueType", "A value of the wrong type gives param naming the attribute; nothing is stored") { c in
            let s = try c.store()
            try expectUnchanged(s) {
                let e = try expectError(.param) { try s.add(NewItem(.internetPassword, [.server: "h", .port: "eighty"])) }
                try expectEqual(e.parameter, "port", "parameter")
                try expectError(.param) { try s.add(NewItem(.genericPassword, [.service: .number(3)])) }
                try expectError(.param) { try s.add(NewItem(.genericPassword, [.service: "s", .accessible: "never"])) }
                try expectError(.param) { try s.add(NewItem(.genericPassword, [.service: "s", .isInvisible: .date(Date())])) }
            }
        },
        .init("add.missingEntitlement", "An access group outside the store's list gives missingEntitlement") { c in
            let s = try c.store(["g1"])
            try expectUnchanged(s) {
                try expectError(.missingEntitlement) { try s.add(genp("svc", "a", [.accessGroup: "other"])) }
            }
        },
        .init("add.defaults", "Add fills in accessible (ak, dk for certificates), the first group and synchronizable false") { c in
            let s = try c.store(["first", "second"])
            let r = try s.add(genp("svc", "a"), returning: .attributes)
            guard let a = r.attributes else { throw ConformanceFailure(message: "no attributes", file: #fileID, line: #line) }
            try expectEqual(a[.accessible], .string("ak"))
            try expectEqual(a[.accessGroup], .string("first"))
            try expectEqual(a[.synchronizable], .bool(false))
            let cert = try s.add(NewItem(.certificate, [.issuer: .data(Data([1])), .serialNumber: .data(Data([2]))]), returning: .attributes)
            try expectEqual(cert.attributes?[.accessible], .string("dk"))
        },
        .init("add.dates", "Add sets creation and modification dates to now, whatever the caller passed") { c in
            let s = try c.store()
            let before = Date()
            let old = Date(timeIntervalSince1970: 1000)
            let r = try s.add(genp("svc", "a", [.creationDate: .date(old), .modificationDate: .date(old)]), returning: .attributes)
            let a = r.attributes ?? [:]
            guard case .date(let cdat)? = a[.creationDate], case .date(let mdat)? = a[.modificationDate] else {
                throw ConformanceFailure(message: "dates missing", file: #fileID, line: #line)
            }
            try expect(cdat >= before.addingTimeInterval(-1) && cdat <= Date().addingTimeInterval(1), "cdat is now: \(cdat)")
            try expectEqual(cdat, mdat, "mdat == cdat on add")
        },
        .init("add.returnShapes", "Add returns the new item holding what the return options ask for") { c in
            let s = try c.store()
            try expectEqual(try s.add(genp("s1", "a", data: "x"), returning: []), Item(itemClass: .genericPassword))
            let i = try s.add(genp("s2", "a", data: "x"), returning: [.data, .persistentRef])
            try expectEqual(i.data, Data("x".utf8))
            try expect(i.persistentRef != nil && i.attributes == nil, "persistent ref only")
            try expectEqual(try s.add(genp("s3", "a"), returning: .ref), Item(itemClass: .genericPassword))
        },
        .init("add.internetUniqueness", "Internet passwords are unique by account, domain, server, protocol, auth type, port, path") { c in
            let s = try c.store()
            let base: [AttributeName: AttributeValue] = [.server: "example.com", .account: "a", .protocol: "htps", .port: 443, .path: "/"]
            try s.add(NewItem(.internetPassword, base))
            let variants: [(AttributeName, AttributeValue)] = [
                (.port, .number(8443)), (.path, .string("/x")), (.protocol, .string("http")),
                (.securityDomain, .string("realm")), (.authenticationType, .string("form")), (.server, .string("example.org")),
            ]
            for (k, v) in variants {
                var attrs = base
                attrs[k] = v
                try s.add(NewItem(.internetPassword, attrs))
            }
            var other = base
            other[.label] = "different label"
            try expectError(.duplicateItem) { try s.add(NewItem(.internetPassword, other)) }
            try expectEqual(try s.count(ItemQuery(.internetPassword)), 7)
        },
        .init("add.certificateAndIdentityUniqueness", "Certificates and identities are unique by type, issuer and serial number") { c in
            let s = try c.store()
            for cls in [ItemClass.certificate, .identity] {
                try s.add(NewItem(cls, [.issuer: .data(Data([1, 2])), .serialNumber: .data(Data([3])), .subject: .data(Data([9]))]))
                try expectError(.duplicateItem) {
                    try s.add(NewItem(cls, [.issuer: .data(Data([1, 2])), .serialNumber: .data(Data([3])), .subject: .data(Data([8]))]))
                }
                try s.add(NewItem(cls, [.issuer: .data(Data([1, 2])), .serialNumber: .data(Data([4]))]))
                try s.add(NewItem(cls, [.issuer: .data(Data([1, 2])), .serialNumber: .data(Data([3])), .certificateType: 2]))
            }
            try expectEqual(try s.count(ItemQuery(.certificate)), 3)
            try expectEqual(try s.count(ItemQuery(.identity)), 3)
        },
        .init("add.keyUniqueness", "Keys are unique by class, type, label, tag, sizes and creator") { c in
            let s = try c.store()
            let base: [AttributeName: AttributeValue] = [.keyClass: "1", .keyType: "73", .applicationTag: .data(Data("tag".utf8)), .keySizeInBits: 256]
            try s.add(NewItem(.key, base, data: Data([1])))
            var relabeled = base
            relabeled[.label] = "other"
            try expectError(.duplicateItem) { try s.add(NewItem(.key, relabeled, data: Data([2]))) }
            let variants: [(AttributeName, AttributeValue)] = [
                (.applicationTag, .data(Data("tag2".utf8))), (.keyClass, .number(2)), (.keyType, .number(42)),
                (.keySizeInBits, .number(384)), (.effectiveKeySize, .number(128)), (.creator, .number(7)),
                (.applicationLabel, .data(Data([5]))),
            ]
            for (k, v) in variants {
                var attrs = base
                attrs[k] = v
                try s.add(NewItem(.key, attrs))
            }
            try expectEqual(try s.count(ItemQuery(.key)), 8)
        },
    ]

    static let copyChecks: [ConformanceCheck] = [
        .init("copy.notFound", "A query that matches nothing gives no items (not an error); item(matching:) gives nil") { c in
            let s = try c.store()
            try expectEqual(try s.items(matching: query("nothing")).count, 0)
            try s.add(genp("svc", "a"))
            try expectEqual(try s.items(matching: query("svc", "b")).count, 0)
            try expect(try s.item(matching: query("svc", "b")) == nil, "item(matching:) is nil")
            try expectEqual(try s.item(matching: query("svc", "a"))?.itemClass, .genericPassword)
        },
        .init("copy.limits", "Limit one and N give at most that many items, in insertion order; all and no limit give every match") { c in
            let s = try c.store()
            for i in 0..<3 { try s.add(genp("svc", "a\(i)", data: "d\(i)")) }
            var q = query("svc")
            q.returning = .data
            q.limit = .one
            try expectEqual(try s.items(matching: q), [Item(itemClass: .genericPassword, data: Data("d0".utf8))])
            q.limit = .count(1)
            try expectEqual(try s.items(matching: q), [Item(itemClass: .genericPassword, data: Data("d0".utf8))])
            q.limit = .all
            try expectEqual(try s.items(matching: q).compactMap(\.data), ["d0", "d1", "d2"].map { Data($0.utf8) })
            q.limit = nil
            try expectEqual(try s.items(matching: q).compactMap(\.data), ["d0", "d1", "d2"].map { Data($0.utf8) })
            q.limit = .count(2)
            try expectEqual(try s.items(matching: q).compactMap(\.data), ["d0", "d1"].map { Data($0.utf8) })
            q.limit = .count(5)
            try expectEqual(try s.items(matching: q).count, 3)
            q.limit = .all
            try expectEqual(try s.item(matching: q)?.data, Data("d0".utf8), "item(matching:) is the first match")
        },
        .init("copy.badLimit", "A limit of zero or less gives param") { c in
            let s = try c.store()
            try s.add(genp("svc"))
            for n in [0, -3] {
                try expectError(.param) { try s.items(matching: ItemQuery(.genericPassword, limit: .count(n))) }
            }
        },
        .init("copy.returnCombinations", "Every combination of return options gives exactly those parts of each item") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", [.label: "L"], data: "x"))
            try s.add(genp("svc", "b", data: "y"))
            try expectEqual(try s.items(matching: query("svc", "a")), [Item(itemClass: .genericPassword)])
            try expectEqual(try s.items(matching: ItemQuery(.genericPassword, [.service: "svc"], limit: .all, returning: .ref)),
                            [Item(itemClass: .genericPassword), Item(itemClass: .genericPassword)])
            let options: [ReturnOptions] = [.data, .attributes, .persistentRef, [.data, .attributes], [.data, .persistentRef],
                                            [.attributes, .persistentRef], [.data, .attributes, .persistentRef], [.data, .ref]]
            for opts in options {
                for limit in [MatchLimit.one, .all] {
                    let items = try s.items(matching: ItemQuery(.genericPassword, [.service: "svc"], limit: limit, returning: opts))
                    try expectEqual(items.count, limit == .one ? 1 : 2, "\(opts) count")
                    for item in items {
                        try expectEqual(item.data != nil, opts.contains(.data), "data present for \(opts)")
                        try expectEqual(item.attributes != nil, opts.contains(.attributes), "attributes present for \(opts)")
                        try expectEqual(item.persistentRef != nil, opts.contains(.persistentRef), "ref present for \(opts)")
                    }
                    if opts.contains(.attributes) { try expectEqual(items[0].attributes?[.label], .string("L")) }
                    if opts.contains(.data) { try expectEqual(items[0].data, Data("x".utf8)) }
                }
            }
        },
        .init("copy.byWholeKey", "A lookup naming the whole key returns each item's own secret and reference (an item without a secret: found, without data); where the key leaves synchronizable or the access group open, the items it names in the order they were added") { c in
            let s = try c.store(["g1", "g2"])
            let a = try s.add(genp("svc", "a", data: "x"), returning: .persistentRef)
            let b = try s.add(genp("svc", "b", data: "y"), returning: .persistentRef)
            let n = try s.add(genp("svc", "n"), returning: .persistentRef)
            for (account, added, secret) in [("a", a, "x"), ("b", b, "y")] {
                var q = query("svc", account)
                q.returning = [.data, .persistentRef]
                let found = try s.item(matching: q)
                try expectEqual(found?.data, Data(secret.utf8), "the secret of \(account)")
                try expectEqual(found?.persistentRef, added.persistentRef, "the reference of \(account)")
                try expectEqual(found?.attributes == nil, true, "no attributes asked for")
            }
            var byN = query("svc", "n")
            byN.returning = [.data, .persistentRef]
            let none = try s.item(matching: byN)
            try expectEqual(none?.persistentRef, n.persistentRef, "an item without a secret is found")
            try expectEqual(none?.data == nil, true, "and has no data")
            // The same key but for synchronizable: the first added, then both in that order.
            let synced = try s.add(genp("svc", "a", [.synchronizable: true], data: "synced"), returning: .persistentRef)
            var any = ItemQuery(.genericPassword, [.service: "svc", .account: "a"], synchronizableAny: true)
            any.returning = [.data, .persistentRef]
            try expectEqual(try s.item(matching: any)?.persistentRef, a.persistentRef, "the first added")
            any.limit = .all
            try expectEqual(try s.items(matching: any).map(\.data), [Data("x".utf8), Data("synced".utf8)] as [Data?])
            try expectEqual(try s.items(matching: any).map(\.persistentRef), [a.persistentRef, synced.persistentRef])
            // The same key but for the access group (none named: every group of the store).
            let inG2 = try s.add(genp("svc", "g", [.accessGroup: "g2"], data: "in g2"), returning: .persistentRef)
            let inG1 = try s.add(genp("svc", "g", [.accessGroup: "g1"], data: "in g1"), returning: .persistentRef)
            var byGroup = query("svc", "g")
            byGroup.returning = [.data, .persistentRef]
            byGroup.limit = .all
            try expectEqual(try s.items(matching: byGroup).map(\.persistentRef), [inG2.persistentRef, inG1.persistentRef])
            try expectEqual(try s.items(matching: byGroup).map(\.data), [Data("in g2".utf8), Data("in g1".utf8)] as [Data?])
            byGroup.attributes[.accessGroup] = "g1"
            try expectEqual(try s.items(matching: byGroup).map(\.data), [Data("in g1".utf8)] as [Data?])
        },
        .init("copy.insertionOrder", "Results come in the order items were added, unchanged by updates") { c in
            let s = try c.store()
            for i in [3, 1, 4, 0, 2] { try s.add(genp("svc", "acct\(i)")) }
            try s.update(query("svc", "acct4"), with: ItemChanges([.label: "touched"], data: Data("z".utf8)))
            let r = try s.items(matching: ItemQuery(.genericPassword, [.service: "svc"], limit: .all, returning: .attributes))
            try expectEqual(r.compactMap { $0.attributes?[.account]?.text }, ["acct3", "acct1", "acct4", "acct0", "acct2"])
        },
        .init("copy.caseInsensitive", "Case-insensitive matching folds text attributes only; otherwise matching is exact") { c in
            let s = try c.store()
            try s.add(genp("Mail.Example", "Alice", [.generic: .data(Data("Gen".utf8))]))
            try expectEqual(try s.items(matching: query("mail.example", "alice")).count, 0)
            var q = query("MAIL.example", "ALICE")
            q.caseInsensitive = true
            try expectEqual(try s.count(q), 1)
            q.attributes[.generic] = .data(Data("gen".utf8))
            try expectEqual(try s.count(q), 0, "data attributes stay exact")
        },
        .init("copy.numbersAndBooleans", "Booleans read as 0/1 and numeric strings as numbers") { c in
            let s = try c.store()
            try s.add(NewItem(.internetPassword, [.server: "h", .port: 8080, .isInvisible: true]))
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.isInvisible: .number(1)])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.port: "8080"])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.isInvisible: false])), 0)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.isNegative: false])), 1, "unset flag is false")
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.path: ""])), 1, "unset text is empty")
        },
        .init("copy.synchronizableVisibility", "Without sync only non-synced items are seen; true only synced; any both") { c in
            let s = try c.store()
            try s.add(genp("svc", "plain"))
            try s.add(genp("svc", "synced", [.synchronizable: true]))
            try expectEqual(try s.count(query("svc")), 1)
            try expectEqual(try s.count(query("svc", nil, [.synchronizable: true])), 1)
            try expectEqual(try s.count(query("svc", nil, [.synchronizable: false])), 1)
            try expectEqual(try s.count(ItemQuery(.genericPassword, [.service: "svc"], synchronizableAny: true)), 2)
            try expectEqual(try s.items(matching: query("svc", "synced")).count, 0)
        },
        .init("copy.accessGroups", "No group covers all the store's groups; a group narrows; a foreign group is refused") { c in
            let s = try c.store(["g1", "g2"])
            try s.add(genp("svc", "a"))
            try s.add(genp("svc", "b", [.accessGroup: "g2"]))
            try expectEqual(try s.count(query("svc")), 2)
            try expectEqual(try s.count(query("svc", nil, [.accessGroup: "g2"])), 1)
            try expectError(.missingEntitlement) { try s.items(matching: query("svc", nil, [.accessGroup: "g3"])) }
        },
        .init("copy.persistentRef", "A persistent reference finds its item alone, class optional; with attributes it is refused") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", data: "x"))
            let r = try s.add(genp("svc", "b", data: "y"), returning: .persistentRef)
            guard let ref = r.persistentRef else { throw ConformanceFailure(message: "no ref", file: #fileID, line: #line) }
            try expectEqual(try s.items(matching: .item(ref, returning: .data)), [Item(itemClass: .genericPassword, data: Data("y".utf8))])
            var withClass = ItemQuery.item(ref, returning: .data)
            withClass.itemClass = .genericPassword
            try expectEqual(try s.items(matching: withClass).first?.data, Data("y".utf8))
            withClass.itemClass = .internetPassword
            try expectEqual(try s.items(matching: withClass).count, 0)
            var mixed = ItemQuery.item(ref)
            mixed.attributes[.service] = "svc"
            try expectError(.param) { try s.items(matching: mixed) }
            try s.update(query("svc", "b"), with: ItemChanges([.label: "new"]))
            try expectEqual(try s.items(matching: .item(ref, returning: .attributes)).first?.attributes?[.label], .string("new"), "ref stable")
            try expectEqual(try s.items(matching: .item(PersistentRef(data: Data(repeating: 0, count: 16)))).count, 0)
        },
        .init("copy.invalidQueries", "A query without class or with a foreign attribute is refused") { c in
            let s = try c.store()
            try s.add(genp("svc"))
            try expectError(.param) { try s.items(matching: ItemQuery(nil, [.service: "svc"])) }
            try expectError(.noSuchAttribute) { try s.items(matching: ItemQuery(.genericPassword, [.server: "h"])) }
            try expectError(.noSuchAttribute) { try s.items(matching: ItemQuery(.certificate, [.service: "svc"])) }
            try expectError(.param) { try s.items(matching: ItemQuery(.genericPassword, [.type: "x"])) }
            try expectError(.param) {
                try s.items(matching: ItemQuery(.genericPassword, [.synchronizable: true], synchronizableAny: true))
            }
        },
        .init("copy.classIsolation", "A query sees only its own class") { c in
            let s = try c.store()
            try s.add(genp("svc", "a"))
            try s.add(NewItem(.internetPassword, [.server: "svc", .account: "a"]))
            try expectEqual(try s.count(ItemQuery(.genericPassword)), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.account: "a"])), 1)
            try expectEqual(try s.count(ItemQuery(.key)), 0)
        },
    ]
}
