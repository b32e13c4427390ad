import Foundation

// Checking input: new records, changes, attribute sets and queries. Errors name the typed API's parameters
// (`limit`, `caseInsensitive`, …) and attributes by their code; the SecItem functions report Apple's keys.

extension Keychain {
    // MARK: Building records

    func newRecord(_ item: NewItem) throws(SecureStoreError) -> ItemRecord {
        let given = try validate(item.attributes, for: item.itemClass, writing: true)
        try StoreLimits.checkSecret(item.data?.count ?? 0)
        // The record's attributes straight into its entries (no dictionary): what was given, but the dates,
        // which are the store's, then the store's defaults for what was not given.
        var entries: [ItemRecord.Entry] = []
        entries.reserveCapacity(given.count + 5)
        var hasGroup = false, hasAccessible = false, hasSync = false
        for (name, value) in given {
            if name == .creationDate || name == .modificationDate { continue }
            if name == .accessGroup { hasGroup = true }
            if name == .accessible { hasAccessible = true }
            if name == .synchronizable { hasSync = true }
            entries.append(ItemRecord.Entry(name, value))
        }
        if !hasGroup { entries.append(ItemRecord.Entry(.accessGroup, .string(configuration.accessGroups[0]))) }
        if !hasAccessible {
            entries.append(ItemRecord.Entry(.accessible, .string(item.itemClass.defaultAccessibility.rawValue)))
        }
        if !hasSync { entries.append(ItemRecord.Entry(.synchronizable, .bool(false))) }
        let now = configuration.clock()
        entries.append(ItemRecord.Entry(.creationDate, .date(now)))
        entries.append(ItemRecord.Entry(.modificationDate, .date(now)))
        ItemRecord.sortByCode(&entries)   // in place: the array is this function's own
        return ItemRecord(persistentRef: backend.newPersistentRef(), itemClass: item.itemClass, ordered: entries, data: item.data)
    }

    func normalizeChanges(_ changes: ItemChanges, itemClass: ItemClass?) throws(SecureStoreError)
        -> [AttributeName: AttributeValue]
    {
        // Dates are the store's: creation never changes, modification becomes now.
        let settable = changes.attributes.filter { $0.key != .creationDate && $0.key != .modificationDate }
        return try validate(settable, for: itemClass, writing: true)
    }

    /// Checks and normalizes attributes. Errors come in a fixed order, so every backend reports the same
    /// error for the same input: first a bad value of an attribute the class defines (param: a value of the
    /// wrong type, or when `writing` a value over ``StoreLimits/maxAttributeValueBytes``, in code order), then
    /// an attribute the class lacks (noSuchAttribute; like Apple, its value is not looked at), then a foreign
    /// group (missingEntitlement). The secret's size is checked after the attributes.
    ///
    /// One set of rules (`normalize`, `StoreLimits`): the usual, valid input is taken in one pass in any order;
    /// only when something is wrong are the attributes walked again in code order to find the first error.
    /// Input already in normal form is returned as it is (a copy is made at the first value that changes).
    func validate(_ attributes: [AttributeName: AttributeValue], for itemClass: ItemClass?, writing: Bool = false)
        throws(SecureStoreError) -> [AttributeName: AttributeValue]
    {
        var summary = AttributeSummary()
        return try validate(attributes, for: itemClass, writing: writing, summary: &summary, summarizing: false)
    }

    /// ``validate(_:for:writing:)``, telling in the same pass what ``prepare(_:for:)`` reads of the attributes.
    /// `summarizing` false: only the group (what the checks need).
    @inline(__always)
    func validate(_ attributes: [AttributeName: AttributeValue], for itemClass: ItemClass?, writing: Bool,
                  summary: inout AttributeSummary, summarizing: Bool = true) throws(SecureStoreError) -> [AttributeName: AttributeValue]
    {
        var normalized = attributes
        let defined = itemClass?.definedAttributes, keyed = summarizing ? itemClass?.keyAttributesButGroupAndSync : nil
        for (name, value) in attributes {
            guard defined?.contains(name) ?? true, let clean = Self.accepted(name, value, writing: writing) else {
                throw firstError(attributes, for: itemClass, writing: writing)
            }
            if clean != value { normalized[name] = clean }
            if name == .accessGroup {
                summary.group = clean
            } else if !summarizing {
                continue
            } else if name == .synchronizable {
                summary.sync = clean
            } else if keyed?.contains(name) ?? false {
                summary.namedKeyAttributes += 1
            } else {
                summary.onlyKeyAttributes = false
            }
        }
        if let group = summary.group { try checkGroup(group) }
        return normalized
    }

    /// `value` normalized, or `nil` when `normalize` or (writing) the size limit refuses it.
    private static func accepted(_ name: AttributeName, _ value: AttributeValue, writing: Bool) -> AttributeValue? {
        do throws(SecureStoreError) {
            let clean = try name.normalize(value)
            if writing { try StoreLimits.checkAttribute(name, clean) }
            return clean
        } catch {
            return nil
        }
    }

    /// The error `validate` reports for attributes it refused: the first in the documented order.
    private func firstError(_ attributes: [AttributeName: AttributeValue], for itemClass: ItemClass?, writing: Bool)
        -> SecureStoreError
    {
        let names = attributes.keys.sorted()
        let defined = itemClass?.attributes
        for name in names where defined?.contains(name) ?? true {
            guard let value = attributes[name] else { continue }
            do throws(SecureStoreError) {
                let clean = try name.normalize(value)
                if writing { try StoreLimits.checkAttribute(name, clean) }
            } catch {
                return error
            }
        }
        if let itemClass, let defined, let name = names.first(where: { !defined.contains($0) }) {
            return SecureStoreError(.noSuchAttribute,
                "A \(itemClass) has no attribute \(name.name) (\(name.code)).", parameter: name.code)
        }
        return SecureStoreError(.internalError, "An attribute was refused without a reason.")
    }

    private func checkGroup(_ group: AttributeValue) throws(SecureStoreError) {
        guard let text = group.text, configuration.accessGroups.contains(text) else {
            throw SecureStoreError(.missingEntitlement,
                "Access group \(group) is not one of this store's groups \(configuration.accessGroups); "
                + "configure the store with it or leave the group out.", parameter: AttributeName.accessGroup.code)
        }
    }

    // MARK: Queries

    func prepare(_ query: ItemQuery, for operation: KeychainOperation) throws(SecureStoreError) -> PreparedQuery {
        switch operation {
        case .copyFirst:
            break   // the limit is ignored
        case .copy:
            if case .count(let n)? = query.limit, n < 1 {
                throw .param("limit", "The match limit must be one, all, or a positive number; got \(n).")
            }
        case .update, .delete:
            let verb = operation == .update ? "An update" : "A delete"
            if query.limit != nil {
                throw .param("limit", "\(verb) affects every matching item; remove the match limit.")
            }
            if query.caseInsensitive {
                throw .param("caseInsensitive", "\(verb) query may not match case-insensitively; remove that option.")
            }
            if operation == .update, !query.returning.isEmpty {
                throw .param("returning", "An update query may not ask for results; remove the return options.")
            }
        }
        if let ref = query.persistentRef {
            guard query.attributes.isEmpty, !query.synchronizableAny else {
                throw .param("persistentRef",
                    "A persistent reference identifies one item by itself; remove the other attributes from the query.")
            }
            var filter = RecordFilter(itemClass: query.itemClass, persistentRef: ref)
            Self.setReadNeeds(&filter, operation, query.returning, keyDecides: false)
            return PreparedQuery(itemClass: query.itemClass, attributes: [:], synchronizable: nil,
                                 groups: accessGroupSet, caseInsensitive: false, keyDecides: false, filter: filter)
        }
        guard let itemClass = query.itemClass else {
            throw .param("itemClass", "The query has no item class; set one (generic password, internet password, …).")
        }
        // One pass over the named attributes: their normal form, and synchronizable, group and how many of the
        // class's key attributes (but group and sync) the query names. Most queries name neither group nor sync,
        // and their attributes are then the query's own dictionary, not a copy.
        var summary = AttributeSummary()
        var attributes = try validate(query.attributes, for: itemClass, writing: false, summary: &summary)
        var synchronizable: Bool? = false
        if let sync = summary.sync {
            guard !query.synchronizableAny else {
                throw .param("synchronizableAny", "The query asks for synchronizable = \(sync) and for any; keep one.")
            }
            attributes.removeValue(forKey: .synchronizable)
            synchronizable = sync.integer == 1
        } else if query.synchronizableAny {
            synchronizable = nil
        }
        var groups = configuration.accessGroups
        if let group = summary.group {
            attributes.removeValue(forKey: .accessGroup)
            groups = [group.text ?? ""]
        }
        var filter = RecordFilter(itemClass: itemClass)
        var keyDecides = false
        if !query.caseInsensitive {
            filter.equalities = attributes
            // The query names the whole key when it names every key attribute but group and sync (which come
            // from `groups` and `synchronizable`).
            if summary.namedKeyAttributes == itemClass.keyAttributeCountButGroupAndSync {
                let named = attributes   // a constant: the closure below reads it without access checks
                func key(group: String, sync: Bool) -> UniqueKey {
                    UniqueKey(itemClass: itemClass) { name in
                        if name == .accessGroup { return .string(group) }
                        if name == .synchronizable { return .bool(sync) }
                        // A scan of the few named attributes costs less than hashing the name.
                        for (attribute, value) in named where attribute == name { return value }
                        return nil
                    }
                }
                if groups.count == 1, let synchronizable {
                    filter.uniqueKeys = [key(group: groups[0], sync: synchronizable)]   // the usual query: one key
                } else {
                    var keys: [UniqueKey] = []
                    keys.reserveCapacity(groups.count * (synchronizable == nil ? 2 : 1))
                    for group in groups {
                        if synchronizable != true { keys.append(key(group: group, sync: false)) }
                        if synchronizable != false { keys.append(key(group: group, sync: true)) }
                    }
                    filter.uniqueKeys = keys
                }
                keyDecides = summary.onlyKeyAttributes
            }
        }
        Self.setReadNeeds(&filter, operation, query.returning, keyDecides: keyDecides)
        return PreparedQuery(itemClass: itemClass, attributes: attributes,
                             synchronizable: synchronizable,
                             groups: summary.group == nil ? accessGroupSet : Set(groups),
                             caseInsensitive: query.caseInsensitive, keyDecides: keyDecides, filter: filter)
    }
}

extension Keychain {
    /// A read's filter (``KeychainOperation/copy``, ``KeychainOperation/copyFirst``) for what it returns: without
    /// data when it returns none, and without attributes when it returns none and the key decides the match
    /// (``matches(_:_:)`` then reads only the record's unique key). A delete's: without data, and without
    /// attributes when the key decides (it reads only references). An update sets its own.
    static func setReadNeeds(_ filter: inout RecordFilter, _ operation: KeychainOperation, _ returning: ReturnOptions,
                             keyDecides: Bool) {
        let decided = keyDecides && filter.uniqueKeys != nil
        switch operation {
        case .copy, .copyFirst:
            filter.needsData = returning.contains(.data)
            filter.needsAttributes = !decided || returning.contains(.attributes)
        case .delete:
            // Removed by reference: no secret is read (a damaged one included), nor attributes the key decides.
            filter.needsData = false
            filter.needsAttributes = !decided
        case .update:
            break   // the update sets its own (it reads whole records, and no secret when it sets a new one)
        }
    }
}

/// What ``Keychain/validate(_:for:writing:summary:)`` learns of a set of attributes on its way: the group
/// and synchronizable values, and how many of the others are in the class's unique key.
struct AttributeSummary {
    var group: AttributeValue?
    var sync: AttributeValue?
    /// Key attributes but group and synchronizable.
    var namedKeyAttributes = 0
    /// Whether every attribute but group and synchronizable is in the key.
    var onlyKeyAttributes = true
}

/// What a query is prepared for: `copyFirst` is ``Keychain/item(matching:)``, which ignores the limit.
enum KeychainOperation { case copy, copyFirst, update, delete }

/// A query checked and normalized once by ``Keychain/prepare(_:for:)``. Not nested in the generic
/// `Keychain`, so building one needs no generic metadata.
struct PreparedQuery {
    var itemClass: ItemClass?
    /// Every one must hold, so their order does not matter.
    var attributes: [AttributeName: AttributeValue]
    var synchronizable: Bool?   // nil: any
    var groups: Set<String>
    var caseInsensitive: Bool
    /// `filter.uniqueKeys` are the query: class, group, sync and every attribute it names are part of the
    /// key, compared by bytes. A record whose key is one of them matches (others are checked one by one).
    var keyDecides: Bool
    var filter: RecordFilter
}
