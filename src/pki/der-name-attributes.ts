/**
 * The short names OpenSSL prints for attribute types of distinguished names (`OBJ_nid2sn`),
 * so names read from DER (der-names.ts) show as Node's X509Certificate shows them: `CN`, `O`,
 * `emailAddress`. Read from Node 24's OpenSSL: der-names.test.ts prints every type of these
 * arcs both ways and holds each name listed here equal to OpenSSL's. A type not listed shows
 * as its OID, as OpenSSL shows types it does not know; the test accepts that, so a type
 * OpenSSL names but this table lacks prints as its OID (a difference in wording only).
 */

/** X.520 attribute types, 2.5.4.n, by n. */
const x520: Readonly<Record<number, string>> = {
  3: 'CN',
  4: 'SN',
  5: 'serialNumber',
  6: 'C',
  7: 'L',
  8: 'ST',
  9: 'street',
  10: 'O',
  11: 'OU',
  12: 'title',
  13: 'description',
  14: 'searchGuide',
  15: 'businessCategory',
  16: 'postalAddress',
  17: 'postalCode',
  18: 'postOfficeBox',
  19: 'physicalDeliveryOfficeName',
  20: 'telephoneNumber',
  21: 'telexNumber',
  22: 'teletexTerminalIdentifier',
  23: 'facsimileTelephoneNumber',
  24: 'x121Address',
  25: 'internationaliSDNNumber',
  26: 'registeredAddress',
  27: 'destinationIndicator',
  28: 'preferredDeliveryMethod',
  29: 'presentationAddress',
  30: 'supportedApplicationContext',
  31: 'member',
  32: 'owner',
  33: 'roleOccupant',
  34: 'seeAlso',
  35: 'userPassword',
  36: 'userCertificate',
  37: 'cACertificate',
  38: 'authorityRevocationList',
  39: 'certificateRevocationList',
  40: 'crossCertificatePair',
  41: 'name',
  42: 'GN',
  43: 'initials',
  44: 'generationQualifier',
  45: 'x500UniqueIdentifier',
  46: 'dnQualifier',
  47: 'enhancedSearchGuide',
  48: 'protocolInformation',
  49: 'distinguishedName',
  50: 'uniqueMember',
  51: 'houseIdentifier',
  52: 'supportedAlgorithms',
  53: 'deltaRevocationList',
  54: 'dmdName',
  65: 'pseudonym',
  72: 'role',
  97: 'organizationIdentifier',
  98: 'c3',
  99: 'n3',
  100: 'dnsName',
};

/** PKCS #9 attribute types, 1.2.840.113549.1.9.n, by n. */
const pkcs9: Readonly<Record<number, string>> = {
  1: 'emailAddress',
  2: 'unstructuredName',
  3: 'contentType',
  4: 'messageDigest',
  5: 'signingTime',
  6: 'countersignature',
  7: 'challengePassword',
  8: 'unstructuredAddress',
  9: 'extendedCertificateAttributes',
  14: 'extReq',
  15: 'SMIME-CAPS',
  16: 'SMIME',
  20: 'friendlyName',
  21: 'localKeyID',
};

/** Pilot (RFC 1274, RFC 4519) attribute types, 0.9.2342.19200300.100.1.n, by n. */
const pilot: Readonly<Record<number, string>> = {
  1: 'UID',
  2: 'textEncodedORAddress',
  3: 'mail',
  4: 'info',
  5: 'favouriteDrink',
  6: 'roomNumber',
  7: 'photo',
  8: 'userClass',
  9: 'host',
  10: 'manager',
  11: 'documentIdentifier',
  12: 'documentTitle',
  13: 'documentVersion',
  14: 'documentAuthor',
  15: 'documentLocation',
  20: 'homeTelephoneNumber',
  21: 'secretary',
  22: 'otherMailbox',
  23: 'lastModifiedTime',
  24: 'lastModifiedBy',
  25: 'DC',
  26: 'aRecord',
  27: 'pilotAttributeType27',
  28: 'mXRecord',
  29: 'nSRecord',
  30: 'sOARecord',
  31: 'cNAMERecord',
  37: 'associatedDomain',
  38: 'associatedName',
  39: 'homePostalAddress',
  40: 'personalTitle',
  41: 'mobileTelephoneNumber',
  42: 'pagerTelephoneNumber',
  43: 'friendlyCountryName',
  44: 'uid',
  45: 'organizationalStatus',
  46: 'janetMailbox',
  47: 'mailPreferenceOption',
  48: 'buildingName',
  49: 'dSAQuality',
  50: 'singleLevelQuality',
  51: 'subtreeMinimumQuality',
  52: 'subtreeMaximumQuality',
  53: 'personalSignature',
  54: 'dITRedirect',
  55: 'audio',
  56: 'documentPublisher',
};

/** EV jurisdiction attribute types, 1.3.6.1.4.1.311.60.2.1.n, by n. */
const jurisdiction: Readonly<Record<number, string>> = {
  1: 'jurisdictionL',
  2: 'jurisdictionST',
  3: 'jurisdictionC',
};

const families: readonly (readonly [prefix: string, names: Readonly<Record<number, string>>])[] = [
  ['2.5.4.', x520],
  ['1.2.840.113549.1.9.', pkcs9],
  ['0.9.2342.19200300.100.1.', pilot],
  ['1.3.6.1.4.1.311.60.2.1.', jurisdiction],
];

/** Every attribute type listed, by OID. */
const byOid = new Map<string, string>(
  families.flatMap(([prefix, names]) =>
    Object.entries(names).map(([arc, name]): [string, string] => [`${prefix}${arc}`, name]),
  ),
);

/** How OpenSSL names the attribute type `oid` when it prints a name: its short name, or the OID. */
export function attributeName(oid: string): string {
  return byOid.get(oid) ?? oid;
}
