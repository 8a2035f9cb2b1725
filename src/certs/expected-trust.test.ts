import { describe, expect, it } from 'vitest';
import { errorCodes } from '../errors.ts';
import { certificateSerial } from '../tls/loaded-report.ts';
import {
  b64,
  hourMs,
  identityData,
  makeCa,
  makeLeaf,
  now,
} from '../../test/unit/validation/material.ts';
import { encodedFingerprints, expectedTrustOf } from './expected-trust.ts';

const ca = await makeCa('haptic-agent-ca-2');
const previous = await makeCa('haptic-agent-ca-1');
const leaf = await makeLeaf('agent', 'haptic-agent', ca);
const at = (offsetMs: number): string =>
  new Date(now.getTime() + offsetMs).toISOString().replace(/\.\d+Z$/, 'Z');

describe('expectedTrustOf', () => {
  it('names ca.crt, previous-ca.crt while its deadline lies ahead, and the serial of tls.crt', () => {
    const data = identityData({
      leaf,
      trust: [ca.certificate],
      previous: [previous.certificate],
      until: at(hourMs),
    });
    expect(expectedTrustOf('haptic/agent', data, now)).toEqual({
      secret: 'haptic/agent',
      cas: [ca.certificate.sha256],
      previousCas: [previous.certificate.sha256],
      leafSerial: certificateSerial(leaf.certificate),
    });
  });

  it.each([
    ['has passed', at(-hourMs)],
    ['lies more than 24 hours ahead', at(25 * hourMs)],
    ['is no timestamp', 'tomorrow'],
  ])('leaves previous-ca.crt out when previous-ca-until %s', (_, until) => {
    const data = identityData({ leaf, trust: [ca.certificate], previous: [ca.certificate], until });
    expect(expectedTrustOf('haptic/agent', data, now).previousCas).toEqual([]);
  });

  it('reads absent and empty values as no certificates', () => {
    expect(expectedTrustOf('haptic/agent', { 'ca.crt': '' }, now)).toEqual({
      secret: 'haptic/agent',
      cas: [],
      previousCas: [],
      leafSerial: undefined,
    });
  });
});

describe('encodedFingerprints', () => {
  it('throws PKI_CERTIFICATE_INVALID for a value that holds no certificate', () => {
    expect(() => encodedFingerprints(b64('no certificate'))).toThrow(
      expect.objectContaining({
        code: errorCodes.PKI_CERTIFICATE_INVALID,
        message: 'The certificate data contains no PEM CERTIFICATE block.',
      }),
    );
  });
});
