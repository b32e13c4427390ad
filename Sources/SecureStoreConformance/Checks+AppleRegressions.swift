import SecureStoreCore
import Foundation

/// Rules taken from Apple's own SecItem regression expectations: protocol and authentication type as
/// numbers or text, "no secret" distinct from "empty secret", and the order of validation errors.
extension ConformanceCheck {
    static let appleRegressionChecks: [ConformanceCheck] = [
        .init("add.protocolNumberOrText",
              "Protocol and authentication type take numbers (four-character codes) or text; each comes back as given") { c in
            let s = try c.store()
            let htps: Int64 = 0x6874_7073, dflt: Int64 = 0x6466_6c74
            try s.add(NewItem(.internetPassword, [.server: "n", .protocol: .number(htps), .authenticationType: .number(dflt),
                                                  .port: 443], data: Data("x".utf8)))
            try s.add(NewItem(.internetPassword, [.server: "t", .protocol: "htps", .authenticationType: "dflt"]))
            try s.add(NewItem(.internetPassword, [.server: "d", .protocol: "80", .authenticationType: .data(Data("form".utf8))]))
            try s.add(NewItem(.internetPassword, [.server: "b", .protocol: true, .authenticationType: false]))
            func attrs(_ server: String) throws -> [AttributeName: AttributeValue]? {
                try s.items(matching: ItemQuery(.internetPassword, [.server: .string(server)], returning: .attributes)).first?.attributes
            }
            try expectEqual(try attrs("n")?[.protocol], .number(htps), "numeric protocol")
            try expectEqual(try attrs("n")?[.authenticationType], .number(dflt), "numeric authentication type")
            try expectEqual(try attrs("t")?[.protocol], .string("htps"), "text protocol")
            try expectEqual(try attrs("t")?[.authenticationType], .string("dflt"), "text authentication type")
            // Apple's number conversion reads a decimal string as a number; a blob keeps data as data.
            try expectEqual(try attrs("d")?[.protocol], .number(80), "decimal protocol")
            try expectEqual(try attrs("d")?[.authenticationType], .data(Data("form".utf8)), "data authentication type")
            try expectEqual(try attrs("b")?[.protocol], .number(1), "boolean protocol")
            try expectEqual(try attrs("b")?[.authenticationType], .number(0), "boolean authentication type")
            // Deleting by the numbers finds the item (Apple's stress test adds and deletes this way).
            try expectEqual(try s.delete(ItemQuery(.internetPassword, [.server: "n", .protocol: .number(htps),
                                                                         .authenticationType: .number(dflt), .port: 443])), 1)
            try expectUnchanged(s) {
                try expectError(.param) { try s.add(NewItem(.internetPassword, [.server: "x", .protocol: .data(Data("htps".utf8))])) }
                try expectError(.param) { try s.add(NewItem(.internetPassword, [.server: "x", .authenticationType: .date(Date())])) }
                try expectError(.param) { try s.add(NewItem(.internetPassword, [.server: "x", .protocol: .date(Date())])) }
            }
        },
        .init("copy.protocolNumberIsNotText",
              "A number never matches text: the four-character code 'htps' and the string \"htps\" are different values") { c in
            let s = try c.store()
            let htps: Int64 = 0x6874_7073
            try s.add(NewItem(.internetPassword, [.server: "h", .protocol: .number(htps)]))
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "h", .protocol: .number(htps)])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "h", .protocol: "htps"])), 0)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "h", .protocol: "1752461427"])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "h", .protocol: ""])), 0)
            try s.add(NewItem(.internetPassword, [.server: "a", .authenticationType: "dflt"]))
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "a", .authenticationType: .data(Data("dflt".utf8))])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "a", .authenticationType: .number(0x6466_6c74)])), 0)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "a", .authenticationType: "DFLT"], caseInsensitive: true)), 1)
            // An item without a protocol has the empty text, not 0.
            try s.add(NewItem(.internetPassword, [.server: "none"]))
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "none", .protocol: ""])), 1)
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "none", .protocol: 0])), 0)
        },
        .init("add.protocolFormsAreDistinctKeys",
              "In the uniqueness key a numeric protocol or authentication type differs from the same code as text") { c in
            let s = try c.store()
            let htps: Int64 = 0x6874_7073
            try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: .number(htps)]))
            try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: "htps"]))
            try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: "htps", .authenticationType: .number(0)]))
            try expectError(.duplicateItem) { try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: .number(htps)])) }
            try expectError(.duplicateItem) { try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: "1752461427"])) }
            try expectError(.duplicateItem) {
                try s.add(NewItem(.internetPassword, [.server: "h", .account: "a", .protocol: "htps", .authenticationType: ""]))
            }
            // A number whose 8 bytes read like a length and 4 bytes of text is still not that text.
            try s.add(NewItem(.internetPassword, [.server: "c", .protocol: .number(0x0000_0004_6874_7073)]))
            try s.add(NewItem(.internetPassword, [.server: "c", .protocol: "htps"]))
            try expectEqual(try s.count(ItemQuery(.internetPassword, [.server: "h"])), 3)
        },
        .init("copy.noDataIsNotEmptyData",
              "An item added without a secret has none (nil data); one added with empty data has empty data") { c in
            let s = try c.store()
            try s.add(NewItem(.genericPassword, [.service: "none", .account: "a"]))
            try s.add(NewItem(.genericPassword, [.service: "empty", .account: "a"], data: Data()))
            for limit in [MatchLimit.one, .all] {
                for returning: ReturnOptions in [.data, [.data, .attributes], [.data, .persistentRef], [.data, .attributes, .persistentRef]] {
                    let none = try s.items(matching: ItemQuery(.genericPassword, [.service: "none"], limit: limit, returning: returning))
                    try expectEqual(none.count, 1)
                    try expect(none[0].data == nil, "no secret: data must be nil, got \(String(describing: none[0].data))")
                    if returning.contains(.attributes) { try expectEqual(none[0].attributes?[.account], .string("a")) }
                    let empty = try s.items(matching: ItemQuery(.genericPassword, [.service: "empty"], limit: limit, returning: returning))
                    try expectEqual(empty.first?.data, Data(), "empty secret")
                }
            }
            // An add that returns data says the same.
            let added = try s.add(NewItem(.genericPassword, [.service: "none2"]), returning: [.data, .attributes])
            try expect(added.data == nil, "add returning data: nil for no secret")
            // An update that does not touch the secret keeps "none"; one that sets it gives it.
            try s.update(ItemQuery(.genericPassword, [.service: "none"]), with: ItemChanges([.label: "L"]))
            try expect(try s.data(query("none")) == nil, "an attribute update keeps the absence of a secret")
            try s.update(ItemQuery(.genericPassword, [.service: "none"]), with: ItemChanges(data: Data()))
            try expectEqual(try s.data(query("none")), Data(), "a secret set by update")
            try s.update(ItemQuery(.genericPassword, [.service: "empty"]), with: ItemChanges(data: Data("x".utf8)))
            try expectEqual(try s.data(query("empty")), Data("x".utf8))
        },
        .init("add.wrongTypeBeforeNoSuchAttribute",
              "A wrong-typed value of the class's attribute is param before another attribute the class lacks") { c in
            let s = try c.store(["g1"])
            try expectUnchanged(s) {
                // svce is a generic password attribute with a wrong value; srvr is not one of its attributes.
                let e = try expectError(.param) {
                    try s.add(NewItem(.genericPassword, [.service: .number(3), .server: "h"]))
                }
                try expectEqual(e.parameter, "svce", "parameter")
                let f = try expectError(.param) {
                    try s.add(NewItem(.internetPassword, [.service: "s", .port: .date(Date())]))
                }
                try expectEqual(f.parameter, "port", "parameter")
                // An attribute the class lacks is refused whatever its value (Apple never looks at it).
                let g = try expectError(.noSuchAttribute) { try s.add(NewItem(.genericPassword, [.service: "s", .port: .date(Date())])) }
                try expectEqual(g.parameter, "port", "parameter")
                // Values and class membership come before the access group.
                try expectError(.param) { try s.add(NewItem(.genericPassword, [.accessGroup: "foreign", .service: .number(1)])) }
                try expectError(.noSuchAttribute) { try s.add(NewItem(.genericPassword, [.accessGroup: "foreign", .server: "h"])) }
                try expectError(.missingEntitlement) { try s.add(NewItem(.genericPassword, [.accessGroup: "foreign", .service: "s"])) }
            }
            try s.add(NewItem(.genericPassword, [.service: "s"]))
            for (what, body) in [
                ("copy", { () throws -> Void in _ = try s.items(matching: ItemQuery(.genericPassword, [.service: .date(Date()), .server: "h"])) }),
                ("delete", { () throws -> Void in _ = try s.delete(ItemQuery(.genericPassword, [.service: .date(Date()), .server: "h"])) }),
                ("update", { () throws -> Void in
                    _ = try s.update(ItemQuery(.genericPassword, [.service: "s"]), with: ItemChanges([.account: .number(1), .server: "h"]))
                }),
            ] {
                try expectError(.param, what) { try body() }
            }
        },
    ]
}
