import SecureStoreCore
import Foundation

extension ConformanceCheck {
    static let limitChecks: [ConformanceCheck] = [
        .init("limits.secret", "A secret of exactly the limit is stored; one byte more gives param naming data and the limit, nothing stored") { c in
            let s = try c.store()
            let max = StoreLimits.maxSecretBytes
            var big = Data(repeating: 0x5A, count: max)
            big[0] = 1
            big[max - 1] = 2
            try s.add(NewItem(.genericPassword, [.service: "big", .account: "max"], data: big))
            try expectEqual(try s.data(query("big", "max")), big, "secret at the limit")
            try expectUnchanged(s) {
                let e = try expectError(.param) {
                    try s.add(NewItem(.genericPassword, [.service: "big", .account: "over"], data: big + Data([3])))
                }
                try expectEqual(e.parameter, "data")
                try expect(e.message.contains("\(max)"), "the message names the limit: \(e.message)")
            }
            try expectEqual(try s.items(matching: query("big", "over")).count, 0)
        },
        .init("limits.attribute", "An attribute value of exactly the limit is stored; one byte more gives param naming the attribute, nothing stored") { c in
            let s = try c.store()
            let max = StoreLimits.maxAttributeValueBytes
            let label = String(repeating: "é", count: max / 2)   // 2 UTF-8 bytes each: exactly the limit
            try s.add(genp("svc", "a", [.label: .string(label)]))
            try expectEqual(try s.count(query("svc", "a", [.label: .string(label)])), 1, "label at the limit")
            try expectUnchanged(s) {
                let e = try expectError(.param) { try s.add(genp("svc", "b", [.label: .string(label + "x")])) }
                try expectEqual(e.parameter, AttributeName.label.code)
                try expect(e.message.contains("\(max)"), "the message names the limit: \(e.message)")
                let d = try expectError(.param) {
                    try s.add(genp("svc", "c", [.generic: .data(Data(repeating: 7, count: max + 1))]))
                }
                try expectEqual(d.parameter, AttributeName.generic.code)
                let k = try expectError(.param) { try s.add(genp(String(repeating: "s", count: max + 1), "d")) }
                try expectEqual(k.parameter, AttributeName.service.code)
            }
        },
        .init("limits.nanDate", "A NaN date is no date: param naming the attribute, nothing stored") { c in
            let s = try c.store()
            try expectUnchanged(s) {
                let e = try expectError(.param) {
                    try s.add(NewItem(.key, [.applicationTag: .data(Data("t".utf8)),
                                             .startDate: .date(Date(timeIntervalSinceReferenceDate: .nan))]))
                }
                try expectEqual(e.parameter, AttributeName.startDate.code)
            }
            try s.add(NewItem(.key, [.applicationTag: .data(Data("t".utf8)), .endDate: .date(.distantFuture)]))
            try expectEqual(try s.count(ItemQuery(.key, [.endDate: .date(.distantFuture)])), 1)
        },
        .init("limits.update", "An update over a limit gives param and changes nothing") { c in
            let s = try c.store()
            try s.add(genp("svc", "a", data: "small"))
            try expectUnchanged(s) {
                let e = try expectError(.param) {
                    try s.update(query("svc", "a"), with: ItemChanges(data: Data(count: StoreLimits.maxSecretBytes + 1)))
                }
                try expectEqual(e.parameter, "data")
                let a = try expectError(.param) {
                    try s.update(query("svc", "a"), with: ItemChanges(
                        [.comment: .string(String(repeating: "c", count: StoreLimits.maxAttributeValueBytes + 1))]))
                }
                try expectEqual(a.parameter, AttributeName.comment.code)
            }
            try expectEqual(try s.data(query("svc", "a")), Data("small".utf8))
        },
    ]
}
