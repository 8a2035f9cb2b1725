/**
 * The one way into @peculiar/x509: every module uses `x509` from here, never the package
 * directly. Its exports load the package on first use (peculiar-x509.ts), so importing
 * src/pki costs nothing of it.
 */
export * as x509 from './peculiar-x509.ts';
