import SecureStoreCore
import Foundation

extension ConformanceCheck {
    static let roundTripChecks: [ConformanceCheck] = [
        .init("roundTrip.secrets", "Secrets come back byte for byte: unicode, empty, every byte value, 1 MiB") { c in
            let s = try c.store()
            var big = Data(count: 1 << 20)
            for i in 0..<big.count { big[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 7) }
            let secrets: [Data] = [Data("pässwörd 密码 🔑".utf8), Data(), Data((0...255).map { UInt8($0) }), Data([0, 0, 0]), big]
            for (i, secret) in secrets.enumerated() {
                try s.add(NewItem(.genericPassword, [.service: "svc", .account: .string("a\(i)")], data: secret))
            }
            for (i, secret) in secrets.enumerated() {
                try expectEqual(try s.data(query("svc", "a\(i)")), secret, "secret \(i)")
            }
        },
        .init("roundTrip.genericAttributes", "Every generic-password attribute comes back exactly") { c in
            let s = try c.store(["g.one", "g.two"])
            let attrs: [AttributeName: AttributeValue] = [
                .service: "sérvice ✓", .account: .data(Data([0, 1, 2, 255])), .label: "", .description: "desc\nline",
                .comment: "💬", .generic: .data(Data((0..<64).map { UInt8($0) })), .creator: 0x6170_706c, .type: -7,
                .isInvisible: true, .isNegative: false, .accessGroup: "g.two", .accessible: "cku", .synchronizable: true,
            ]
            let r = try s.add(NewItem(.genericPassword, attrs), returning: .attributes)
            guard let stored = r.attributes else { throw ConformanceFailure(message: "none", file: #fileID, line: #line) }
            for (k, v) in attrs { try expectEqual(stored[k], v, k.name) }
            let again = try s.items(matching: ItemQuery(.genericPassword, [.service: "sérvice ✓"], synchronizableAny: true, returning: .attributes))
            try expectEqual(again.first?.attributes, stored, "copy returns what add returned")
        },
        .init("roundTrip.internetAttributes", "Every internet-password attribute comes back exactly") { c in
            let s = try c.store()
            let attrs: [AttributeName: AttributeValue] = [
                .server: "例え.jp", .account: "user@example.com", .securityDomain: "Realm", .protocol: "ftp ",
                .authenticationType: "httd", .port: 65535, .path: "/a b/c?d", .label: "web", .comment: "c",
                .description: "d", .creator: 1, .type: 2, .isInvisible: false, .isNegative: true,
            ]
            try s.add(NewItem(.internetPassword, attrs, data: Data("pw".utf8)))
            let got = try s.items(matching: ItemQuery(.internetPassword, attrs, returning: [.attributes, .data]))
            guard got.count == 1, let item = got.first, let stored = item.attributes else {
                throw ConformanceFailure(message: "wrong items \(got)", file: #fileID, line: #line)
            }
            for (k, v) in attrs { try expectEqual(stored[k], v, k.name) }
            try expectEqual(item.data, Data("pw".utf8))
        },
        .init("roundTrip.keyAndCertificateAttributes", "Key, certificate and identity attributes come back exactly") { c in
            let s = try c.store()
            let start = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let key: [AttributeName: AttributeValue] = [
                .keyClass: 2, .keyType: 105, .applicationLabel: .data(Data([9, 9])), .applicationTag: .data(Data("tag".utf8)),
                .keySizeInBits: 256, .effectiveKeySize: 256, .isPermanent: true, .canEncrypt: true, .canDecrypt: false,
                .canDerive: true, .canSign: false, .canVerify: true, .canWrap: false, .canUnwrap: true,
                .isSensitive: true, .isExtractable: false, .startDate: .date(start), .label: "k",
            ]
            try s.add(NewItem(.key, key, data: Data(repeating: 0xAB, count: 32)))
            let k = try s.items(matching: ItemQuery(.key, [.applicationTag: .data(Data("tag".utf8))], returning: .attributes)).first?.attributes
            for (name, v) in key { try expectEqual(k?[name], v, name.name) }
            let cert: [AttributeName: AttributeValue] = [
                .certificateType: 3, .certificateEncoding: 3, .subject: .data(Data([1])), .issuer: .data(Data([2])),
                .serialNumber: .data(Data([3])), .subjectKeyID: .data(Data([4])), .publicKeyHash: .data(Data([5])),
            ]
            for cls in [ItemClass.certificate, .identity] {
                try s.add(NewItem(cls, cls == .identity ? cert.merging([.keyClass: 1]) { a, _ in a } : cert, data: Data([0x30])))
                let got = try s.items(matching: ItemQuery(cls, [.serialNumber: .data(Data([3]))], returning: .attributes)).first?.attributes
                for (name, v) in cert { try expectEqual(got?[name], v, "\(cls) \(name.name)") }
            }
        },
        .init("roundTrip.manyItems", "Hundreds of items are stored and found individually and together") { c in
            let s = try c.store()
            for i in 0..<300 { try s.add(genp("bulk", "acct-\(i)", data: "secret-\(i)")) }
            for i in stride(from: 0, to: 300, by: 37) {
                try expectEqual(try s.data(query("bulk", "acct-\(i)")), Data("secret-\(i)".utf8))
            }
            let all = try s.items(matching: ItemQuery(.genericPassword, [.service: "bulk"], limit: .all, returning: [.attributes, .data]))
            try expectEqual(all.count, 300)
            try expectEqual(all.last?.data, Data("secret-299".utf8))
        },
    ]
}
