/**
 * X.509 and keys for the product: issue, parse, verify. Pure apart from randomness. Every
 * certificate is read as a Certificate (certificate.ts).
 */
export { Certificate } from './certificate.ts';
export {
  type CryptoKey,
  type CryptoKeyPair,
  type PublicKeySource,
  type ReadPrivateKey,
  decodePrivateKey,
  encodePrivateKey,
  generateKeyPair,
  keyMatchesCertificate,
  publicKeyInfoMatchesCertificate,
  publicKeysEqual,
  readPrivateKey,
  readPrivateKeyLazily,
} from './keys.ts';
export {
  type CertificateAuthority,
  type CrossSignCaOptions,
  type IssueCaOptions,
  type IssueLeafOptions,
  type IssuedCertificate,
  type LeafRole,
  backdateMs,
  crossSignCa,
  issueCa,
  issueLeaf,
  leafPurposes,
} from './generate.ts';
export { decodeCertificateChain, encodeCertificateChain } from './parse.ts';
export {
  type ChainFailureReason,
  type ChainVerification,
  type Purpose,
  type VerifyChainOptions,
  chainFailureReasons,
  verifyChain,
} from './chain.ts';
export { certificateFingerprint, sha256Fingerprint } from './fingerprint.ts';
export { isSignedBy } from './signature-check.ts';
export { type KeyDetails, type PublicKeyShape, keyDetails } from './key-details.ts';
