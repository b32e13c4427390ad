// Apple's constant names and values, so Keychain code compiles unchanged: the kSec… strings of SecItem.h
// (values from Apple's SecItemConstants.c, iOS and macOS) and every status code of SecBase.h (with the
// text Apple's SecCopyErrorMessageString gives). The CF type names live in CoreFoundation.swift.
//
// The string constants are immutable NSStrings (`CFString`), declared `nonisolated(unsafe)` because
// Foundation on Linux does not mark NSString Sendable.

public import Foundation

// SecItem.h: classes, attributes, search, return and value keys, and their values.
nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
nonisolated(unsafe) public let kSecAttrPersistentReference: CFString = "persistref"
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"
nonisolated(unsafe) public let kSecAttrIsSensitive: CFString = "sens"
nonisolated(unsafe) public let kSecAttrIsExtractable: CFString = "extr"
nonisolated(unsafe) public let kSecAttrStartDate: CFString = "sdat"
nonisolated(unsafe) public let kSecAttrEndDate: CFString = "edat"
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_ItemList"
nonisolated(unsafe) public let kSecMatchPolicy: CFString = "m_Policy"
nonisolated(unsafe) public let kSecMatchSearchList: CFString = "m_SearchList"
nonisolated(unsafe) public let kSecMatchIssuers: CFString = "m_Issuers"
nonisolated(unsafe) public let kSecMatchEmailAddressIfPresent: CFString = "m_EmailAddressIfPresent"
nonisolated(unsafe) public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
nonisolated(unsafe) public let kSecMatchTrustedOnly: CFString = "m_TrustedOnly"
nonisolated(unsafe) public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
nonisolated(unsafe) public let kSecUseItemList: CFString = "u_ItemList"
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"

// SecItem.h constants of the token, macOS and key-generation sections (see MacOSDialect.md for what
// SecItemAdd & co. do with each).
nonisolated(unsafe) public let kSecAttrAccess: CFString = "acls"
nonisolated(unsafe) public let kSecAttrAccessGroupToken: CFString = "com.apple.token"
nonisolated(unsafe) public let kSecAttrPersistantReference: CFString = "persistref"
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"
nonisolated(unsafe) public let kSecAttrTokenIDSecureEnclave: CFString = "com.apple.setoken"
nonisolated(unsafe) public let kSecAttrSyncViewHint: CFString = "vwht"
nonisolated(unsafe) public let kSecAttrPRF: CFString = "prf"
nonisolated(unsafe) public let kSecAttrSalt: CFString = "salt"
nonisolated(unsafe) public let kSecAttrRounds: CFString = "rounds"
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA1: CFString = "hsha1"
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA224: CFString = "hsha224"
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA256: CFString = "hsha256"
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA384: CFString = "hsha384"
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA512: CFString = "hsha512"
nonisolated(unsafe) public let kSecAttrKeyTypeDES: CFString = "14"
nonisolated(unsafe) public let kSecAttrKeyType3DES: CFString = "17"
nonisolated(unsafe) public let kSecAttrKeyTypeRC2: CFString = "23"
nonisolated(unsafe) public let kSecAttrKeyTypeRC4: CFString = "25"
nonisolated(unsafe) public let kSecAttrKeyTypeDSA: CFString = "43"
nonisolated(unsafe) public let kSecAttrKeyTypeCAST: CFString = "56"
nonisolated(unsafe) public let kSecAttrKeyTypeECDSA: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeyTypeAES: CFString = "2147483649"
nonisolated(unsafe) public let kSecMatchSubjectStartsWith: CFString = "m_SubjectStartsWith"
nonisolated(unsafe) public let kSecMatchSubjectEndsWith: CFString = "m_SubjectEndsWith"
nonisolated(unsafe) public let kSecMatchSubjectWholeString: CFString = "m_SubjectWholeString"
nonisolated(unsafe) public let kSecMatchDiacriticInsensitive: CFString = "m_DiacriticInsensitive"
nonisolated(unsafe) public let kSecMatchWidthInsensitive: CFString = "m_WidthInsensitive"
nonisolated(unsafe) public let kSecUseKeychain: CFString = "u_Keychain"
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
nonisolated(unsafe) public let kSecPrivateKeyAttrs: CFString = "private"
nonisolated(unsafe) public let kSecPublicKeyAttrs: CFString = "public"

// SecBase.h: status codes.
public let errSecSuccess: OSStatus = 0
public let errSecUnimplemented: OSStatus = -4
public let errSecDiskFull: OSStatus = -34
public let errSecDskFull: OSStatus = -34
public let errSecIO: OSStatus = -36
public let errSecOpWr: OSStatus = -49
public let errSecParam: OSStatus = -50
public let errSecWrPerm: OSStatus = -61
public let errSecAllocate: OSStatus = -108
public let errSecUserCanceled: OSStatus = -128
public let errSecBadReq: OSStatus = -909
public let errSecInternalComponent: OSStatus = -2070
public let errSecCoreFoundationUnknown: OSStatus = -4960
public let errSecMissingEntitlement: OSStatus = -34018
public let errSecRestrictedAPI: OSStatus = -34020
public let errSecNotAvailable: OSStatus = -25291
public let errSecReadOnly: OSStatus = -25292
public let errSecAuthFailed: OSStatus = -25293
public let errSecNoSuchKeychain: OSStatus = -25294
public let errSecInvalidKeychain: OSStatus = -25295
public let errSecDuplicateKeychain: OSStatus = -25296
public let errSecDuplicateCallback: OSStatus = -25297
public let errSecInvalidCallback: OSStatus = -25298
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
public let errSecBufferTooSmall: OSStatus = -25301
public let errSecDataTooLarge: OSStatus = -25302
public let errSecNoSuchAttr: OSStatus = -25303
public let errSecInvalidItemRef: OSStatus = -25304
public let errSecInvalidSearchRef: OSStatus = -25305
public let errSecNoSuchClass: OSStatus = -25306
public let errSecNoDefaultKeychain: OSStatus = -25307
public let errSecInteractionNotAllowed: OSStatus = -25308
public let errSecReadOnlyAttr: OSStatus = -25309
public let errSecWrongSecVersion: OSStatus = -25310
public let errSecKeySizeNotAllowed: OSStatus = -25311
public let errSecNoStorageModule: OSStatus = -25312
public let errSecNoCertificateModule: OSStatus = -25313
public let errSecNoPolicyModule: OSStatus = -25314
public let errSecInteractionRequired: OSStatus = -25315
public let errSecDataNotAvailable: OSStatus = -25316
public let errSecDataNotModifiable: OSStatus = -25317
public let errSecCreateChainFailed: OSStatus = -25318
public let errSecInvalidPrefsDomain: OSStatus = -25319
public let errSecInDarkWake: OSStatus = -25320
public let errSecACLNotSimple: OSStatus = -25240
public let errSecPolicyNotFound: OSStatus = -25241
public let errSecInvalidTrustSetting: OSStatus = -25242
public let errSecNoAccessForItem: OSStatus = -25243
public let errSecInvalidOwnerEdit: OSStatus = -25244
public let errSecTrustNotAvailable: OSStatus = -25245
public let errSecUnsupportedFormat: OSStatus = -25256
public let errSecUnknownFormat: OSStatus = -25257
public let errSecKeyIsSensitive: OSStatus = -25258
public let errSecMultiplePrivKeys: OSStatus = -25259
public let errSecPassphraseRequired: OSStatus = -25260
public let errSecInvalidPasswordRef: OSStatus = -25261
public let errSecInvalidTrustSettings: OSStatus = -25262
public let errSecNoTrustSettings: OSStatus = -25263
public let errSecPkcs12VerifyFailure: OSStatus = -25264
public let errSecNotSigner: OSStatus = -26267
public let errSecDecode: OSStatus = -26275
public let errSecServiceNotAvailable: OSStatus = -67585
public let errSecInsufficientClientID: OSStatus = -67586
public let errSecDeviceReset: OSStatus = -67587
public let errSecDeviceFailed: OSStatus = -67588
public let errSecAppleAddAppACLSubject: OSStatus = -67589
public let errSecApplePublicKeyIncomplete: OSStatus = -67590
public let errSecAppleSignatureMismatch: OSStatus = -67591
public let errSecAppleInvalidKeyStartDate: OSStatus = -67592
public let errSecAppleInvalidKeyEndDate: OSStatus = -67593
public let errSecConversionError: OSStatus = -67594
public let errSecAppleSSLv2Rollback: OSStatus = -67595
public let errSecQuotaExceeded: OSStatus = -67596
public let errSecFileTooBig: OSStatus = -67597
public let errSecInvalidDatabaseBlob: OSStatus = -67598
public let errSecInvalidKeyBlob: OSStatus = -67599
public let errSecIncompatibleDatabaseBlob: OSStatus = -67600
public let errSecIncompatibleKeyBlob: OSStatus = -67601
public let errSecHostNameMismatch: OSStatus = -67602
public let errSecUnknownCriticalExtensionFlag: OSStatus = -67603
public let errSecNoBasicConstraints: OSStatus = -67604
public let errSecNoBasicConstraintsCA: OSStatus = -67605
public let errSecInvalidAuthorityKeyID: OSStatus = -67606
public let errSecInvalidSubjectKeyID: OSStatus = -67607
public let errSecInvalidKeyUsageForPolicy: OSStatus = -67608
public let errSecInvalidExtendedKeyUsage: OSStatus = -67609
public let errSecInvalidIDLinkage: OSStatus = -67610
public let errSecPathLengthConstraintExceeded: OSStatus = -67611
public let errSecInvalidRoot: OSStatus = -67612
public let errSecCRLExpired: OSStatus = -67613
public let errSecCRLNotValidYet: OSStatus = -67614
public let errSecCRLNotFound: OSStatus = -67615
public let errSecCRLServerDown: OSStatus = -67616
public let errSecCRLBadURI: OSStatus = -67617
public let errSecUnknownCertExtension: OSStatus = -67618
public let errSecUnknownCRLExtension: OSStatus = -67619
public let errSecCRLNotTrusted: OSStatus = -67620
public let errSecCRLPolicyFailed: OSStatus = -67621
public let errSecIDPFailure: OSStatus = -67622
public let errSecSMIMEEmailAddressesNotFound: OSStatus = -67623
public let errSecSMIMEBadExtendedKeyUsage: OSStatus = -67624
public let errSecSMIMEBadKeyUsage: OSStatus = -67625
public let errSecSMIMEKeyUsageNotCritical: OSStatus = -67626
public let errSecSMIMENoEmailAddress: OSStatus = -67627
public let errSecSMIMESubjAltNameNotCritical: OSStatus = -67628
public let errSecSSLBadExtendedKeyUsage: OSStatus = -67629
public let errSecOCSPBadResponse: OSStatus = -67630
public let errSecOCSPBadRequest: OSStatus = -67631
public let errSecOCSPUnavailable: OSStatus = -67632
public let errSecOCSPStatusUnrecognized: OSStatus = -67633
public let errSecEndOfData: OSStatus = -67634
public let errSecIncompleteCertRevocationCheck: OSStatus = -67635
public let errSecNetworkFailure: OSStatus = -67636
public let errSecOCSPNotTrustedToAnchor: OSStatus = -67637
public let errSecRecordModified: OSStatus = -67638
public let errSecOCSPSignatureError: OSStatus = -67639
public let errSecOCSPNoSigner: OSStatus = -67640
public let errSecOCSPResponderMalformedReq: OSStatus = -67641
public let errSecOCSPResponderInternalError: OSStatus = -67642
public let errSecOCSPResponderTryLater: OSStatus = -67643
public let errSecOCSPResponderSignatureRequired: OSStatus = -67644
public let errSecOCSPResponderUnauthorized: OSStatus = -67645
public let errSecOCSPResponseNonceMismatch: OSStatus = -67646
public let errSecCodeSigningBadCertChainLength: OSStatus = -67647
public let errSecCodeSigningNoBasicConstraints: OSStatus = -67648
public let errSecCodeSigningBadPathLengthConstraint: OSStatus = -67649
public let errSecCodeSigningNoExtendedKeyUsage: OSStatus = -67650
public let errSecCodeSigningDevelopment: OSStatus = -67651
public let errSecResourceSignBadCertChainLength: OSStatus = -67652
public let errSecResourceSignBadExtKeyUsage: OSStatus = -67653
public let errSecTrustSettingDeny: OSStatus = -67654
public let errSecInvalidSubjectName: OSStatus = -67655
public let errSecUnknownQualifiedCertStatement: OSStatus = -67656
public let errSecMobileMeRequestQueued: OSStatus = -67657
public let errSecMobileMeRequestRedirected: OSStatus = -67658
public let errSecMobileMeServerError: OSStatus = -67659
public let errSecMobileMeServerNotAvailable: OSStatus = -67660
public let errSecMobileMeServerAlreadyExists: OSStatus = -67661
public let errSecMobileMeServerServiceErr: OSStatus = -67662
public let errSecMobileMeRequestAlreadyPending: OSStatus = -67663
public let errSecMobileMeNoRequestPending: OSStatus = -67664
public let errSecMobileMeCSRVerifyFailure: OSStatus = -67665
public let errSecMobileMeFailedConsistencyCheck: OSStatus = -67666
public let errSecNotInitialized: OSStatus = -67667
public let errSecInvalidHandleUsage: OSStatus = -67668
public let errSecPVCReferentNotFound: OSStatus = -67669
public let errSecFunctionIntegrityFail: OSStatus = -67670
public let errSecInternalError: OSStatus = -67671
public let errSecMemoryError: OSStatus = -67672
public let errSecInvalidData: OSStatus = -67673
public let errSecMDSError: OSStatus = -67674
public let errSecInvalidPointer: OSStatus = -67675
public let errSecSelfCheckFailed: OSStatus = -67676
public let errSecFunctionFailed: OSStatus = -67677
public let errSecModuleManifestVerifyFailed: OSStatus = -67678
public let errSecInvalidGUID: OSStatus = -67679
public let errSecInvalidHandle: OSStatus = -67680
public let errSecInvalidDBList: OSStatus = -67681
public let errSecInvalidPassthroughID: OSStatus = -67682
public let errSecInvalidNetworkAddress: OSStatus = -67683
public let errSecCRLAlreadySigned: OSStatus = -67684
public let errSecInvalidNumberOfFields: OSStatus = -67685
public let errSecVerificationFailure: OSStatus = -67686
public let errSecUnknownTag: OSStatus = -67687
public let errSecInvalidSignature: OSStatus = -67688
public let errSecInvalidName: OSStatus = -67689
public let errSecInvalidCertificateRef: OSStatus = -67690
public let errSecInvalidCertificateGroup: OSStatus = -67691
public let errSecTagNotFound: OSStatus = -67692
public let errSecInvalidQuery: OSStatus = -67693
public let errSecInvalidValue: OSStatus = -67694
public let errSecCallbackFailed: OSStatus = -67695
public let errSecACLDeleteFailed: OSStatus = -67696
public let errSecACLReplaceFailed: OSStatus = -67697
public let errSecACLAddFailed: OSStatus = -67698
public let errSecACLChangeFailed: OSStatus = -67699
public let errSecInvalidAccessCredentials: OSStatus = -67700
public let errSecInvalidRecord: OSStatus = -67701
public let errSecInvalidACL: OSStatus = -67702
public let errSecInvalidSampleValue: OSStatus = -67703
public let errSecIncompatibleVersion: OSStatus = -67704
public let errSecPrivilegeNotGranted: OSStatus = -67705
public let errSecInvalidScope: OSStatus = -67706
public let errSecPVCAlreadyConfigured: OSStatus = -67707
public let errSecInvalidPVC: OSStatus = -67708
public let errSecEMMLoadFailed: OSStatus = -67709
public let errSecEMMUnloadFailed: OSStatus = -67710
public let errSecAddinLoadFailed: OSStatus = -67711
public let errSecInvalidKeyRef: OSStatus = -67712
public let errSecInvalidKeyHierarchy: OSStatus = -67713
public let errSecAddinUnloadFailed: OSStatus = -67714
public let errSecLibraryReferenceNotFound: OSStatus = -67715
public let errSecInvalidAddinFunctionTable: OSStatus = -67716
public let errSecInvalidServiceMask: OSStatus = -67717
public let errSecModuleNotLoaded: OSStatus = -67718
public let errSecInvalidSubServiceID: OSStatus = -67719
public let errSecAttributeNotInContext: OSStatus = -67720
public let errSecModuleManagerInitializeFailed: OSStatus = -67721
public let errSecModuleManagerNotFound: OSStatus = -67722
public let errSecEventNotificationCallbackNotFound: OSStatus = -67723
public let errSecInputLengthError: OSStatus = -67724
public let errSecOutputLengthError: OSStatus = -67725
public let errSecPrivilegeNotSupported: OSStatus = -67726
public let errSecDeviceError: OSStatus = -67727
public let errSecAttachHandleBusy: OSStatus = -67728
public let errSecNotLoggedIn: OSStatus = -67729
public let errSecAlgorithmMismatch: OSStatus = -67730
public let errSecKeyUsageIncorrect: OSStatus = -67731
public let errSecKeyBlobTypeIncorrect: OSStatus = -67732
public let errSecKeyHeaderInconsistent: OSStatus = -67733
public let errSecUnsupportedKeyFormat: OSStatus = -67734
public let errSecUnsupportedKeySize: OSStatus = -67735
public let errSecInvalidKeyUsageMask: OSStatus = -67736
public let errSecUnsupportedKeyUsageMask: OSStatus = -67737
public let errSecInvalidKeyAttributeMask: OSStatus = -67738
public let errSecUnsupportedKeyAttributeMask: OSStatus = -67739
public let errSecInvalidKeyLabel: OSStatus = -67740
public let errSecUnsupportedKeyLabel: OSStatus = -67741
public let errSecInvalidKeyFormat: OSStatus = -67742
public let errSecUnsupportedVectorOfBuffers: OSStatus = -67743
public let errSecInvalidInputVector: OSStatus = -67744
public let errSecInvalidOutputVector: OSStatus = -67745
public let errSecInvalidContext: OSStatus = -67746
public let errSecInvalidAlgorithm: OSStatus = -67747
public let errSecInvalidAttributeKey: OSStatus = -67748
public let errSecMissingAttributeKey: OSStatus = -67749
public let errSecInvalidAttributeInitVector: OSStatus = -67750
public let errSecMissingAttributeInitVector: OSStatus = -67751
public let errSecInvalidAttributeSalt: OSStatus = -67752
public let errSecMissingAttributeSalt: OSStatus = -67753
public let errSecInvalidAttributePadding: OSStatus = -67754
public let errSecMissingAttributePadding: OSStatus = -67755
public let errSecInvalidAttributeRandom: OSStatus = -67756
public let errSecMissingAttributeRandom: OSStatus = -67757
public let errSecInvalidAttributeSeed: OSStatus = -67758
public let errSecMissingAttributeSeed: OSStatus = -67759
public let errSecInvalidAttributePassphrase: OSStatus = -67760
public let errSecMissingAttributePassphrase: OSStatus = -67761
public let errSecInvalidAttributeKeyLength: OSStatus = -67762
public let errSecMissingAttributeKeyLength: OSStatus = -67763
public let errSecInvalidAttributeBlockSize: OSStatus = -67764
public let errSecMissingAttributeBlockSize: OSStatus = -67765
public let errSecInvalidAttributeOutputSize: OSStatus = -67766
public let errSecMissingAttributeOutputSize: OSStatus = -67767
public let errSecInvalidAttributeRounds: OSStatus = -67768
public let errSecMissingAttributeRounds: OSStatus = -67769
public let errSecInvalidAlgorithmParms: OSStatus = -67770
public let errSecMissingAlgorithmParms: OSStatus = -67771
public let errSecInvalidAttributeLabel: OSStatus = -67772
public let errSecMissingAttributeLabel: OSStatus = -67773
public let errSecInvalidAttributeKeyType: OSStatus = -67774
public let errSecMissingAttributeKeyType: OSStatus = -67775
public let errSecInvalidAttributeMode: OSStatus = -67776
public let errSecMissingAttributeMode: OSStatus = -67777
public let errSecInvalidAttributeEffectiveBits: OSStatus = -67778
public let errSecMissingAttributeEffectiveBits: OSStatus = -67779
public let errSecInvalidAttributeStartDate: OSStatus = -67780
public let errSecMissingAttributeStartDate: OSStatus = -67781
public let errSecInvalidAttributeEndDate: OSStatus = -67782
public let errSecMissingAttributeEndDate: OSStatus = -67783
public let errSecInvalidAttributeVersion: OSStatus = -67784
public let errSecMissingAttributeVersion: OSStatus = -67785
public let errSecInvalidAttributePrime: OSStatus = -67786
public let errSecMissingAttributePrime: OSStatus = -67787
public let errSecInvalidAttributeBase: OSStatus = -67788
public let errSecMissingAttributeBase: OSStatus = -67789
public let errSecInvalidAttributeSubprime: OSStatus = -67790
public let errSecMissingAttributeSubprime: OSStatus = -67791
public let errSecInvalidAttributeIterationCount: OSStatus = -67792
public let errSecMissingAttributeIterationCount: OSStatus = -67793
public let errSecInvalidAttributeDLDBHandle: OSStatus = -67794
public let errSecMissingAttributeDLDBHandle: OSStatus = -67795
public let errSecInvalidAttributeAccessCredentials: OSStatus = -67796
public let errSecMissingAttributeAccessCredentials: OSStatus = -67797
public let errSecInvalidAttributePublicKeyFormat: OSStatus = -67798
public let errSecMissingAttributePublicKeyFormat: OSStatus = -67799
public let errSecInvalidAttributePrivateKeyFormat: OSStatus = -67800
public let errSecMissingAttributePrivateKeyFormat: OSStatus = -67801
public let errSecInvalidAttributeSymmetricKeyFormat: OSStatus = -67802
public let errSecMissingAttributeSymmetricKeyFormat: OSStatus = -67803
public let errSecInvalidAttributeWrappedKeyFormat: OSStatus = -67804
public let errSecMissingAttributeWrappedKeyFormat: OSStatus = -67805
public let errSecStagedOperationInProgress: OSStatus = -67806
public let errSecStagedOperationNotStarted: OSStatus = -67807
public let errSecVerifyFailed: OSStatus = -67808
public let errSecQuerySizeUnknown: OSStatus = -67809
public let errSecBlockSizeMismatch: OSStatus = -67810
public let errSecPublicKeyInconsistent: OSStatus = -67811
public let errSecDeviceVerifyFailed: OSStatus = -67812
public let errSecInvalidLoginName: OSStatus = -67813
public let errSecAlreadyLoggedIn: OSStatus = -67814
public let errSecInvalidDigestAlgorithm: OSStatus = -67815
public let errSecInvalidCRLGroup: OSStatus = -67816
public let errSecCertificateCannotOperate: OSStatus = -67817
public let errSecCertificateExpired: OSStatus = -67818
public let errSecCertificateNotValidYet: OSStatus = -67819
public let errSecCertificateRevoked: OSStatus = -67820
public let errSecCertificateSuspended: OSStatus = -67821
public let errSecInsufficientCredentials: OSStatus = -67822
public let errSecInvalidAction: OSStatus = -67823
public let errSecInvalidAuthority: OSStatus = -67824
public let errSecVerifyActionFailed: OSStatus = -67825
public let errSecInvalidCertAuthority: OSStatus = -67826
public let errSecInvaldCRLAuthority: OSStatus = -67827
public let errSecInvalidCRLAuthority: OSStatus = -67827
public let errSecInvalidCRLEncoding: OSStatus = -67828
public let errSecInvalidCRLType: OSStatus = -67829
public let errSecInvalidCRL: OSStatus = -67830
public let errSecInvalidFormType: OSStatus = -67831
public let errSecInvalidID: OSStatus = -67832
public let errSecInvalidIdentifier: OSStatus = -67833
public let errSecInvalidIndex: OSStatus = -67834
public let errSecInvalidPolicyIdentifiers: OSStatus = -67835
public let errSecInvalidTimeString: OSStatus = -67836
public let errSecInvalidReason: OSStatus = -67837
public let errSecInvalidRequestInputs: OSStatus = -67838
public let errSecInvalidResponseVector: OSStatus = -67839
public let errSecInvalidStopOnPolicy: OSStatus = -67840
public let errSecInvalidTuple: OSStatus = -67841
public let errSecMultipleValuesUnsupported: OSStatus = -67842
public let errSecNotTrusted: OSStatus = -67843
public let errSecNoDefaultAuthority: OSStatus = -67844
public let errSecRejectedForm: OSStatus = -67845
public let errSecRequestLost: OSStatus = -67846
public let errSecRequestRejected: OSStatus = -67847
public let errSecUnsupportedAddressType: OSStatus = -67848
public let errSecUnsupportedService: OSStatus = -67849
public let errSecInvalidTupleGroup: OSStatus = -67850
public let errSecInvalidBaseACLs: OSStatus = -67851
public let errSecInvalidTupleCredendtials: OSStatus = -67852
public let errSecInvalidTupleCredentials: OSStatus = -67852
public let errSecInvalidEncoding: OSStatus = -67853
public let errSecInvalidValidityPeriod: OSStatus = -67854
public let errSecInvalidRequestor: OSStatus = -67855
public let errSecRequestDescriptor: OSStatus = -67856
public let errSecInvalidBundleInfo: OSStatus = -67857
public let errSecInvalidCRLIndex: OSStatus = -67858
public let errSecNoFieldValues: OSStatus = -67859
public let errSecUnsupportedFieldFormat: OSStatus = -67860
public let errSecUnsupportedIndexInfo: OSStatus = -67861
public let errSecUnsupportedLocality: OSStatus = -67862
public let errSecUnsupportedNumAttributes: OSStatus = -67863
public let errSecUnsupportedNumIndexes: OSStatus = -67864
public let errSecUnsupportedNumRecordTypes: OSStatus = -67865
public let errSecFieldSpecifiedMultiple: OSStatus = -67866
public let errSecIncompatibleFieldFormat: OSStatus = -67867
public let errSecInvalidParsingModule: OSStatus = -67868
public let errSecDatabaseLocked: OSStatus = -67869
public let errSecDatastoreIsOpen: OSStatus = -67870
public let errSecMissingValue: OSStatus = -67871
public let errSecUnsupportedQueryLimits: OSStatus = -67872
public let errSecUnsupportedNumSelectionPreds: OSStatus = -67873
public let errSecUnsupportedOperator: OSStatus = -67874
public let errSecInvalidDBLocation: OSStatus = -67875
public let errSecInvalidAccessRequest: OSStatus = -67876
public let errSecInvalidIndexInfo: OSStatus = -67877
public let errSecInvalidNewOwner: OSStatus = -67878
public let errSecInvalidModifyMode: OSStatus = -67879
public let errSecMissingRequiredExtension: OSStatus = -67880
public let errSecExtendedKeyUsageNotCritical: OSStatus = -67881
public let errSecTimestampMissing: OSStatus = -67882
public let errSecTimestampInvalid: OSStatus = -67883
public let errSecTimestampNotTrusted: OSStatus = -67884
public let errSecTimestampServiceNotAvailable: OSStatus = -67885
public let errSecTimestampBadAlg: OSStatus = -67886
public let errSecTimestampBadRequest: OSStatus = -67887
public let errSecTimestampBadDataFormat: OSStatus = -67888
public let errSecTimestampTimeNotAvailable: OSStatus = -67889
public let errSecTimestampUnacceptedPolicy: OSStatus = -67890
public let errSecTimestampUnacceptedExtension: OSStatus = -67891
public let errSecTimestampAddInfoNotAvailable: OSStatus = -67892
public let errSecTimestampSystemFailure: OSStatus = -67893
public let errSecSigningTimeMissing: OSStatus = -67894
public let errSecTimestampRejection: OSStatus = -67895
public let errSecTimestampWaiting: OSStatus = -67896
public let errSecTimestampRevocationWarning: OSStatus = -67897
public let errSecTimestampRevocationNotification: OSStatus = -67898
public let errSecCertificatePolicyNotAllowed: OSStatus = -67899
public let errSecCertificateNameNotAllowed: OSStatus = -67900
public let errSecCertificateValidityPeriodTooLong: OSStatus = -67901
public let errSecCertificateIsCA: OSStatus = -67902
public let errSecCertificateDuplicateExtension: OSStatus = -67903

// SecBase.h: the SecureTransport status codes (no TLS here: the numbers, for code that compares them).
public let errSSLProtocol: OSStatus = -9800
public let errSSLNegotiation: OSStatus = -9801
public let errSSLFatalAlert: OSStatus = -9802
public let errSSLWouldBlock: OSStatus = -9803
public let errSSLSessionNotFound: OSStatus = -9804
public let errSSLClosedGraceful: OSStatus = -9805
public let errSSLClosedAbort: OSStatus = -9806
public let errSSLXCertChainInvalid: OSStatus = -9807
public let errSSLBadCert: OSStatus = -9808
public let errSSLCrypto: OSStatus = -9809
public let errSSLInternal: OSStatus = -9810
public let errSSLModuleAttach: OSStatus = -9811
public let errSSLUnknownRootCert: OSStatus = -9812
public let errSSLNoRootCert: OSStatus = -9813
public let errSSLCertExpired: OSStatus = -9814
public let errSSLCertNotYetValid: OSStatus = -9815
public let errSSLClosedNoNotify: OSStatus = -9816
public let errSSLBufferOverflow: OSStatus = -9817
public let errSSLBadCipherSuite: OSStatus = -9818
public let errSSLPeerUnexpectedMsg: OSStatus = -9819
public let errSSLPeerBadRecordMac: OSStatus = -9820
public let errSSLPeerDecryptionFail: OSStatus = -9821
public let errSSLPeerRecordOverflow: OSStatus = -9822
public let errSSLPeerDecompressFail: OSStatus = -9823
public let errSSLPeerHandshakeFail: OSStatus = -9824
public let errSSLPeerBadCert: OSStatus = -9825
public let errSSLPeerUnsupportedCert: OSStatus = -9826
public let errSSLPeerCertRevoked: OSStatus = -9827
public let errSSLPeerCertExpired: OSStatus = -9828
public let errSSLPeerCertUnknown: OSStatus = -9829
public let errSSLIllegalParam: OSStatus = -9830
public let errSSLPeerUnknownCA: OSStatus = -9831
public let errSSLPeerAccessDenied: OSStatus = -9832
public let errSSLPeerDecodeError: OSStatus = -9833
public let errSSLPeerDecryptError: OSStatus = -9834
public let errSSLPeerExportRestriction: OSStatus = -9835
public let errSSLPeerProtocolVersion: OSStatus = -9836
public let errSSLPeerInsufficientSecurity: OSStatus = -9837
public let errSSLPeerInternalError: OSStatus = -9838
public let errSSLPeerUserCancelled: OSStatus = -9839
public let errSSLPeerNoRenegotiation: OSStatus = -9840
public let errSSLPeerAuthCompleted: OSStatus = -9841
public let errSSLClientCertRequested: OSStatus = -9842
public let errSSLHostNameMismatch: OSStatus = -9843
public let errSSLConnectionRefused: OSStatus = -9844
public let errSSLDecryptionFail: OSStatus = -9845
public let errSSLBadRecordMac: OSStatus = -9846
public let errSSLRecordOverflow: OSStatus = -9847
public let errSSLBadConfiguration: OSStatus = -9848
public let errSSLUnexpectedRecord: OSStatus = -9849
public let errSSLWeakPeerEphemeralDHKey: OSStatus = -9850
public let errSSLClientHelloReceived: OSStatus = -9851
public let errSSLTransportReset: OSStatus = -9852
public let errSSLNetworkTimeout: OSStatus = -9853
public let errSSLConfigurationFailed: OSStatus = -9854
public let errSSLUnsupportedExtension: OSStatus = -9855
public let errSSLUnexpectedMessage: OSStatus = -9856
public let errSSLDecompressFail: OSStatus = -9857
public let errSSLHandshakeFail: OSStatus = -9858
public let errSSLDecodeError: OSStatus = -9859
public let errSSLInappropriateFallback: OSStatus = -9860
public let errSSLMissingExtension: OSStatus = -9861
public let errSSLBadCertificateStatusResponse: OSStatus = -9862
public let errSSLCertificateRequired: OSStatus = -9863
public let errSSLUnknownPSKIdentity: OSStatus = -9864
public let errSSLUnrecognizedName: OSStatus = -9865
public let errSSLATSViolation: OSStatus = -9880
public let errSSLATSMinimumVersionViolation: OSStatus = -9881
public let errSSLATSCiphersuiteViolation: OSStatus = -9882
public let errSSLATSMinimumKeySizeViolation: OSStatus = -9883
public let errSSLATSLeafCertificateHashAlgorithmViolation: OSStatus = -9884
public let errSSLATSCertificateHashAlgorithmViolation: OSStatus = -9885
public let errSSLATSCertificateTrustViolation: OSStatus = -9886
public let errSSLEarlyDataRejected: OSStatus = -9890

/// Apple's text for each status (SecBase.h, the source of SecErrorMessages.strings).
let statusMessages: [OSStatus: String] = [
    0: "No error.",
    -9800: "SSL protocol error",
    -9801: "Cipher Suite negotiation failure",
    -9802: "Fatal alert",
    -9803: "I/O would block (not fatal)",
    -9804: "attempt to restore an unknown session",
    -9805: "connection closed gracefully",
    -9806: "connection closed via error",
    -9807: "invalid certificate chain",
    -9808: "bad certificate format",
    -9809: "underlying cryptographic error",
    -9810: "Internal error",
    -9811: "module attach failure",
    -9812: "valid cert chain, untrusted root",
    -9813: "cert chain not verified by root",
    -9814: "chain had an expired cert",
    -9815: "chain had a cert not yet valid",
    -9816: "server closed session with no notification",
    -9817: "insufficient buffer provided",
    -9818: "bad SSLCipherSuite",
    -9819: "unexpected message received",
    -9820: "bad MAC",
    -9821: "decryption failed",
    -9822: "record overflow",
    -9823: "decompression failure",
    -9824: "handshake failure",
    -9825: "misc. bad certificate",
    -9826: "bad unsupported cert format",
    -9827: "certificate revoked",
    -9828: "certificate expired",
    -9829: "unknown certificate",
    -9830: "illegal parameter",
    -9831: "unknown Cert Authority",
    -9832: "access denied",
    -9833: "decoding error",
    -9834: "decryption error",
    -9835: "export restriction",
    -9836: "bad protocol version",
    -9837: "insufficient security",
    -9838: "internal error",
    -9839: "user canceled",
    -9840: "no renegotiation allowed",
    -9841: "peer cert is valid, or was ignored if verification disabled",
    -9842: "server has requested a client cert",
    -9843: "peer host name mismatch",
    -9844: "peer dropped connection before responding",
    -9845: "decryption failure",
    -9846: "bad MAC",
    -9847: "record overflow",
    -9848: "configuration error",
    -9849: "unexpected (skipped) record in DTLS",
    -9850: "weak ephemeral dh key",
    -9851: "SNI",
    -9852: "transport (socket) shutdown, e.g., TCP RST or FIN.",
    -9853: "network timeout triggered",
    -9854: "TLS configuration failed",
    -9855: "unsupported TLS extension",
    -9856: "peer rejected unexpected message",
    -9857: "decompression failed",
    -9858: "handshake failed",
    -9859: "decode failed",
    -9860: "inappropriate fallback",
    -9861: "missing extension",
    -9862: "bad OCSP response",
    -9863: "certificate required",
    -9864: "unknown PSK identity",
    -9865: "unknown or unrecognized name",
    -9880: "ATS violation",
    -9881: "ATS violation: minimum protocol version is not ATS compliant",
    -9882: "ATS violation: selected ciphersuite is not ATS compliant",
    -9883: "ATS violation: peer key size is not ATS compliant",
    -9884: "ATS violation: peer leaf certificate hash algorithm is not ATS compliant",
    -9885: "ATS violation: peer certificate hash algorithm is not ATS compliant",
    -9886: "ATS violation: peer certificate is not issued by trusted peer",
    -9890: "Early application data rejected by peer",
    -4: "Function or operation not implemented.",
    -34: "The disk is full.",
    -36: "I/O error.",
    -49: "File already open with write permission.",
    -50: "One or more parameters passed to a function were not valid.",
    -61: "Write permissions error.",
    -108: "Failed to allocate memory.",
    -128: "User canceled the operation.",
    -909: "Bad parameter or invalid state for operation.",
    -34018: "A required entitlement isn't present.",
    -34020: "Client is restricted and is not permitted to perform this operation.",
    -25291: "No keychain is available. You may need to restart your computer.",
    -25292: "This keychain cannot be modified.",
    -25293: "The user name or passphrase you entered is not correct.",
    -25294: "The specified keychain could not be found.",
    -25295: "The specified keychain is not a valid keychain file.",
    -25296: "A keychain with the same name already exists.",
    -25297: "The specified callback function is already installed.",
    -25298: "The specified callback function is not valid.",
    -25299: "The specified item already exists in the keychain.",
    -25300: "The specified item could not be found in the keychain.",
    -25301: "There is not enough memory available to use the specified item.",
    -25302: "This item contains information which is too large or in a format that cannot be displayed.",
    -25303: "The specified attribute does not exist.",
    -25304: "The specified item is no longer valid. It may have been deleted from the keychain.",
    -25305: "Unable to search the current keychain.",
    -25306: "The specified item does not appear to be a valid keychain item.",
    -25307: "A default keychain could not be found.",
    -25308: "User interaction is not allowed.",
    -25309: "The specified attribute could not be modified.",
    -25310: "This keychain was created by a different version of the system software and cannot be opened.",
    -25311: "This item specifies a key size which is too large or too small.",
    -25312: "A required component (data storage module) could not be loaded. You may need to restart your computer.",
    -25313: "A required component (certificate module) could not be loaded. You may need to restart your computer.",
    -25314: "A required component (policy module) could not be loaded. You may need to restart your computer.",
    -25315: "User interaction is required, but is currently not allowed.",
    -25316: "The contents of this item cannot be retrieved.",
    -25317: "The contents of this item cannot be modified.",
    -25318: "One or more certificates required to validate this certificate cannot be found.",
    -25319: "The specified preferences domain is not valid.",
    -25320: "In dark wake, no UI possible",
    -25240: "The specified access control list is not in standard (simple) form.",
    -25241: "The specified policy cannot be found.",
    -25242: "The specified trust setting is invalid.",
    -25243: "The specified item has no access control.",
    -25244: "Invalid attempt to change the owner of this item.",
    -25245: "No trust results are available.",
    -25256: "Import/Export format unsupported.",
    -25257: "Unknown format in import.",
    -25258: "Key material must be wrapped for export.",
    -25259: "An attempt was made to import multiple private keys.",
    -25260: "Passphrase is required for import/export.",
    -25261: "The password reference was invalid.",
    -25262: "The Trust Settings Record was corrupted.",
    -25263: "No Trust Settings were found.",
    -25264: "MAC verification failed during PKCS12 import (wrong password?)",
    -26267: "A certificate was not signed by its proposed parent.",
    -26275: "Unable to decode the provided data.",
    -67585: "The required service is not available.",
    -67586: "The client ID is not correct.",
    -67587: "A device reset has occurred.",
    -67588: "A device failure has occurred.",
    -67589: "Adding an application ACL subject failed.",
    -67590: "The public key is incomplete.",
    -67591: "A signature mismatch has occurred.",
    -67592: "The specified key has an invalid start date.",
    -67593: "The specified key has an invalid end date.",
    -67594: "A conversion error has occurred.",
    -67595: "A SSLv2 rollback error has occurred.",
    -67596: "The quota was exceeded.",
    -67597: "The file is too big.",
    -67598: "The specified database has an invalid blob.",
    -67599: "The specified database has an invalid key blob.",
    -67600: "The specified database has an incompatible blob.",
    -67601: "The specified database has an incompatible key blob.",
    -67602: "A host name mismatch has occurred.",
    -67603: "There is an unknown critical extension flag.",
    -67604: "No basic constraints were found.",
    -67605: "No basic CA constraints were found.",
    -67606: "The authority key ID is not valid.",
    -67607: "The subject key ID is not valid.",
    -67608: "The key usage is not valid for the specified policy.",
    -67609: "The extended key usage is not valid.",
    -67610: "The ID linkage is not valid.",
    -67611: "The path length constraint was exceeded.",
    -67612: "The root or anchor certificate is not valid.",
    -67613: "The CRL has expired.",
    -67614: "The CRL is not yet valid.",
    -67615: "The CRL was not found.",
    -67616: "The CRL server is down.",
    -67617: "The CRL has a bad Uniform Resource Identifier.",
    -67618: "An unknown certificate extension was encountered.",
    -67619: "An unknown CRL extension was encountered.",
    -67620: "The CRL is not trusted.",
    -67621: "The CRL policy failed.",
    -67622: "The issuing distribution point was not valid.",
    -67623: "An email address mismatch was encountered.",
    -67624: "The appropriate extended key usage for SMIME was not found.",
    -67625: "The key usage is not compatible with SMIME.",
    -67626: "The key usage extension is not marked as critical.",
    -67627: "No email address was found in the certificate.",
    -67628: "The subject alternative name extension is not marked as critical.",
    -67629: "The appropriate extended key usage for SSL was not found.",
    -67630: "The OCSP response was incorrect or could not be parsed.",
    -67631: "The OCSP request was incorrect or could not be parsed.",
    -67632: "OCSP service is unavailable.",
    -67633: "The OCSP server did not recognize this certificate.",
    -67634: "An end-of-data was detected.",
    -67635: "An incomplete certificate revocation check occurred.",
    -67636: "A network failure occurred.",
    -67637: "The OCSP response was not trusted to a root or anchor certificate.",
    -67638: "The record was modified.",
    -67639: "The OCSP response had an invalid signature.",
    -67640: "The OCSP response had no signer.",
    -67641: "The OCSP responder was given a malformed request.",
    -67642: "The OCSP responder encountered an internal error.",
    -67643: "The OCSP responder is busy, try again later.",
    -67644: "The OCSP responder requires a signature.",
    -67645: "The OCSP responder rejected this request as unauthorized.",
    -67646: "The OCSP response nonce did not match the request.",
    -67647: "Code signing encountered an incorrect certificate chain length.",
    -67648: "Code signing found no basic constraints.",
    -67649: "Code signing encountered an incorrect path length constraint.",
    -67650: "Code signing found no extended key usage.",
    -67651: "Code signing indicated use of a development-only certificate.",
    -67652: "Resource signing has encountered an incorrect certificate chain length.",
    -67653: "Resource signing has encountered an error in the extended key usage.",
    -67654: "The trust setting for this policy was set to Deny.",
    -67655: "An invalid certificate subject name was encountered.",
    -67656: "An unknown qualified certificate statement was encountered.",
    -67667: "A function was called without initializing CSSM.",
    -67668: "The CSSM handle does not match with the service type.",
    -67669: "A reference to the calling module was not found in the list of authorized callers.",
    -67670: "A function address was not within the verified module.",
    -67671: "An internal error has occurred.",
    -67672: "A memory error has occurred.",
    -67673: "Invalid data was encountered.",
    -67674: "A Module Directory Service error has occurred.",
    -67675: "An invalid pointer was encountered.",
    -67676: "Self-check has failed.",
    -67677: "A function has failed.",
    -67678: "A module manifest verification failure has occurred.",
    -67679: "An invalid GUID was encountered.",
    -67680: "An invalid handle was encountered.",
    -67681: "An invalid DB list was encountered.",
    -67682: "An invalid passthrough ID was encountered.",
    -67683: "An invalid network address was encountered.",
    -67684: "The certificate revocation list is already signed.",
    -67685: "An invalid number of fields were encountered.",
    -67686: "A verification failure occurred.",
    -67687: "An unknown tag was encountered.",
    -67688: "An invalid signature was encountered.",
    -67689: "An invalid name was encountered.",
    -67690: "An invalid certificate reference was encountered.",
    -67691: "An invalid certificate group was encountered.",
    -67692: "The specified tag was not found.",
    -67693: "The specified query was not valid.",
    -67694: "An invalid value was detected.",
    -67695: "A callback has failed.",
    -67696: "An ACL delete operation has failed.",
    -67697: "An ACL replace operation has failed.",
    -67698: "An ACL add operation has failed.",
    -67699: "An ACL change operation has failed.",
    -67700: "Invalid access credentials were encountered.",
    -67701: "An invalid record was encountered.",
    -67702: "An invalid ACL was encountered.",
    -67703: "An invalid sample value was encountered.",
    -67704: "An incompatible version was encountered.",
    -67705: "The privilege was not granted.",
    -67706: "An invalid scope was encountered.",
    -67707: "The PVC is already configured.",
    -67708: "An invalid PVC was encountered.",
    -67709: "The EMM load has failed.",
    -67710: "The EMM unload has failed.",
    -67711: "The add-in load operation has failed.",
    -67712: "An invalid key was encountered.",
    -67713: "An invalid key hierarchy was encountered.",
    -67714: "The add-in unload operation has failed.",
    -67715: "A library reference was not found.",
    -67716: "An invalid add-in function table was encountered.",
    -67717: "An invalid service mask was encountered.",
    -67718: "A module was not loaded.",
    -67719: "An invalid subservice ID was encountered.",
    -67720: "An attribute was not in the context.",
    -67721: "A module failed to initialize.",
    -67722: "A module was not found.",
    -67723: "An event notification callback was not found.",
    -67724: "An input length error was encountered.",
    -67725: "An output length error was encountered.",
    -67726: "The privilege is not supported.",
    -67727: "A device error was encountered.",
    -67728: "The CSP handle was busy.",
    -67729: "You are not logged in.",
    -67730: "An algorithm mismatch was encountered.",
    -67731: "The key usage is incorrect.",
    -67732: "The key blob type is incorrect.",
    -67733: "The key header is inconsistent.",
    -67734: "The key header format is not supported.",
    -67735: "The key size is not supported.",
    -67736: "The key usage mask is not valid.",
    -67737: "The key usage mask is not supported.",
    -67738: "The key attribute mask is not valid.",
    -67739: "The key attribute mask is not supported.",
    -67740: "The key label is not valid.",
    -67741: "The key label is not supported.",
    -67742: "The key format is not valid.",
    -67743: "The vector of buffers is not supported.",
    -67744: "The input vector is not valid.",
    -67745: "The output vector is not valid.",
    -67746: "An invalid context was encountered.",
    -67747: "An invalid algorithm was encountered.",
    -67748: "A key attribute was not valid.",
    -67749: "A key attribute was missing.",
    -67750: "An init vector attribute was not valid.",
    -67751: "An init vector attribute was missing.",
    -67752: "A salt attribute was not valid.",
    -67753: "A salt attribute was missing.",
    -67754: "A padding attribute was not valid.",
    -67755: "A padding attribute was missing.",
    -67756: "A random number attribute was not valid.",
    -67757: "A random number attribute was missing.",
    -67758: "A seed attribute was not valid.",
    -67759: "A seed attribute was missing.",
    -67760: "A passphrase attribute was not valid.",
    -67761: "A passphrase attribute was missing.",
    -67762: "A key length attribute was not valid.",
    -67763: "A key length attribute was missing.",
    -67764: "A block size attribute was not valid.",
    -67765: "A block size attribute was missing.",
    -67766: "An output size attribute was not valid.",
    -67767: "An output size attribute was missing.",
    -67768: "The number of rounds attribute was not valid.",
    -67769: "The number of rounds attribute was missing.",
    -67770: "An algorithm parameters attribute was not valid.",
    -67771: "An algorithm parameters attribute was missing.",
    -67772: "A label attribute was not valid.",
    -67773: "A label attribute was missing.",
    -67774: "A key type attribute was not valid.",
    -67775: "A key type attribute was missing.",
    -67776: "A mode attribute was not valid.",
    -67777: "A mode attribute was missing.",
    -67778: "An effective bits attribute was not valid.",
    -67779: "An effective bits attribute was missing.",
    -67780: "A start date attribute was not valid.",
    -67781: "A start date attribute was missing.",
    -67782: "An end date attribute was not valid.",
    -67783: "An end date attribute was missing.",
    -67784: "A version attribute was not valid.",
    -67785: "A version attribute was missing.",
    -67786: "A prime attribute was not valid.",
    -67787: "A prime attribute was missing.",
    -67788: "A base attribute was not valid.",
    -67789: "A base attribute was missing.",
    -67790: "A subprime attribute was not valid.",
    -67791: "A subprime attribute was missing.",
    -67792: "An iteration count attribute was not valid.",
    -67793: "An iteration count attribute was missing.",
    -67794: "A database handle attribute was not valid.",
    -67795: "A database handle attribute was missing.",
    -67796: "An access credentials attribute was not valid.",
    -67797: "An access credentials attribute was missing.",
    -67798: "A public key format attribute was not valid.",
    -67799: "A public key format attribute was missing.",
    -67800: "A private key format attribute was not valid.",
    -67801: "A private key format attribute was missing.",
    -67802: "A symmetric key format attribute was not valid.",
    -67803: "A symmetric key format attribute was missing.",
    -67804: "A wrapped key format attribute was not valid.",
    -67805: "A wrapped key format attribute was missing.",
    -67806: "A staged operation is in progress.",
    -67807: "A staged operation was not started.",
    -67808: "A cryptographic verification failure has occurred.",
    -67809: "The query size is unknown.",
    -67810: "A block size mismatch occurred.",
    -67811: "The public key was inconsistent.",
    -67812: "A device verification failure has occurred.",
    -67813: "An invalid login name was detected.",
    -67814: "The user is already logged in.",
    -67815: "An invalid digest algorithm was detected.",
    -67816: "An invalid CRL group was detected.",
    -67817: "The certificate cannot operate.",
    -67818: "An expired certificate was detected.",
    -67819: "The certificate is not yet valid.",
    -67820: "The certificate was revoked.",
    -67821: "The certificate was suspended.",
    -67822: "Insufficient credentials were detected.",
    -67823: "The action was not valid.",
    -67824: "The authority was not valid.",
    -67825: "A verify action has failed.",
    -67826: "The certificate authority was not valid.",
    -67827: "The CRL authority was not valid.",
    -67828: "The CRL encoding was not valid.",
    -67829: "The CRL type was not valid.",
    -67830: "The CRL was not valid.",
    -67831: "The form type was not valid.",
    -67832: "The ID was not valid.",
    -67833: "The identifier was not valid.",
    -67834: "The index was not valid.",
    -67835: "The policy identifiers are not valid.",
    -67836: "The time specified was not valid.",
    -67837: "The trust policy reason was not valid.",
    -67838: "The request inputs are not valid.",
    -67839: "The response vector was not valid.",
    -67840: "The stop-on policy was not valid.",
    -67841: "The tuple was not valid.",
    -67842: "Multiple values are not supported.",
    -67843: "The certificate was not trusted.",
    -67844: "No default authority was detected.",
    -67845: "The trust policy had a rejected form.",
    -67846: "The request was lost.",
    -67847: "The request was rejected.",
    -67848: "The address type is not supported.",
    -67849: "The service is not supported.",
    -67850: "The tuple group was not valid.",
    -67851: "The base ACLs are not valid.",
    -67852: "The tuple credentials are not valid.",
    -67853: "The encoding was not valid.",
    -67854: "The validity period was not valid.",
    -67855: "The requestor was not valid.",
    -67856: "The request descriptor was not valid.",
    -67857: "The bundle information was not valid.",
    -67858: "The CRL index was not valid.",
    -67859: "No field values were detected.",
    -67860: "The field format is not supported.",
    -67861: "The index information is not supported.",
    -67862: "The locality is not supported.",
    -67863: "The number of attributes is not supported.",
    -67864: "The number of indexes is not supported.",
    -67865: "The number of record types is not supported.",
    -67866: "Too many fields were specified.",
    -67867: "The field format was incompatible.",
    -67868: "The parsing module was not valid.",
    -67869: "The database is locked.",
    -67870: "The data store is open.",
    -67871: "A missing value was detected.",
    -67872: "The query limits are not supported.",
    -67873: "The number of selection predicates is not supported.",
    -67874: "The operator is not supported.",
    -67875: "The database location is not valid.",
    -67876: "The access request is not valid.",
    -67877: "The index information is not valid.",
    -67878: "The new owner is not valid.",
    -67879: "The modify mode is not valid.",
    -67880: "A required certificate extension is missing.",
    -67881: "The extended key usage extension was not marked critical.",
    -67882: "A timestamp was expected but was not found.",
    -67883: "The timestamp was not valid.",
    -67884: "The timestamp was not trusted.",
    -67885: "The timestamp service is not available.",
    -67886: "An unrecognized or unsupported Algorithm Identifier in timestamp.",
    -67887: "The timestamp transaction is not permitted or supported.",
    -67888: "The timestamp data submitted has the wrong format.",
    -67889: "The time source for the Timestamp Authority is not available.",
    -67890: "The requested policy is not supported by the Timestamp Authority.",
    -67891: "The requested extension is not supported by the Timestamp Authority.",
    -67892: "The additional information requested is not available.",
    -67893: "The timestamp request cannot be handled due to system failure.",
    -67894: "A signing time was expected but was not found.",
    -67895: "A timestamp transaction was rejected.",
    -67896: "A timestamp transaction is waiting.",
    -67897: "A timestamp authority revocation warning was issued.",
    -67898: "A timestamp authority revocation notification was issued.",
    -67899: "The requested policy is not allowed for this certificate.",
    -67900: "The requested name is not allowed for this certificate.",
    -67901: "The validity period in the certificate exceeds the maximum allowed.",
    -67902: "The verified certificate is a CA rather than an end-entity.",
    -67903: "The certificate contains multiple extensions with the same extension ID.",
    // errSecInternal (SecBasePriv.h): what iOS returns for an internal failure, and what this module returns.
    -26276: "An internal error occurred in the Security framework.",
    -26277: "The outcome is unknown: the change was committed on the primary but not confirmed by a synchronous standby (SecureStore's own status).",
]
