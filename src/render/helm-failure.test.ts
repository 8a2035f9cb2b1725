import { describe, expect, it } from 'vitest';
import { errorCodes } from '../errors.ts';
import { describeHelmFailure } from './helm-failure.ts';

const cases: readonly {
  readonly name: string;
  readonly stderr: string;
  readonly code: string;
  readonly message: string;
}[] = [
  {
    name: 'shows the chart value rules without helm decoration',
    stderr:
      'Error: execution error at (haptic/templates/values-check.yaml:2:4): invalid values for release "haptic":\n- a is required.\n- b must differ.\n\nUse --debug flag to render out invalid YAML\n',
    code: errorCodes.RENDER_VALUES_INVALID,
    message: 'invalid values for release "haptic":\n- a is required.\n- b must differ.',
  },
  {
    name: "keeps helm's own schema message with each path",
    stderr:
      "Error: values don't meet the specifications of the schema(s) in the following chart(s):\nhaptic:\n- at '/haproxy/agent/tls': additional properties 'foo' not allowed\n\n",
    code: errorCodes.RENDER_VALUES_INVALID,
    message:
      "helm rejected the values of release \"haptic\": values don't meet the specifications of the schema(s) in the following chart(s):\nhaptic:\n- at '/haproxy/agent/tls': additional properties 'foo' not allowed",
  },
  {
    name: 'treats an unparseable values file as invalid values',
    stderr:
      'Error: failed to parse /tmp/v.yaml: error converting YAML to JSON: yaml: line 1: did not find expected node content\n',
    code: errorCodes.RENDER_VALUES_INVALID,
    message:
      'helm rejected the values of release "haptic": failed to parse /tmp/v.yaml: error converting YAML to JSON: yaml: line 1: did not find expected node content',
  },
  {
    name: 'keeps the template location of other execution errors',
    stderr:
      'Error: template: haptic/templates/x.yaml:3:7: executing "haptic/templates/x.yaml" at <.Values.a.b>: nil pointer evaluating interface {}.b\n',
    code: errorCodes.RENDER_FAILED,
    message:
      'helm template failed for release "haptic": template: haptic/templates/x.yaml:3:7: executing "haptic/templates/x.yaml" at <.Values.a.b>: nil pointer evaluating interface {}.b',
  },
  {
    name: 'reports a missing chart as a render failure',
    stderr: 'Error: path "/nonexistent" not found\n',
    code: errorCodes.RENDER_FAILED,
    message: 'helm template failed for release "haptic": path "/nonexistent" not found',
  },
  {
    name: 'says so when helm printed nothing',
    stderr: '',
    code: errorCodes.RENDER_FAILED,
    message: 'helm template failed for release "haptic": no error message',
  },
];

describe('describeHelmFailure', () => {
  it.each(cases)('$name', ({ stderr, code, message }) => {
    expect(describeHelmFailure(stderr, 'haptic')).toEqual({ code, message });
  });
});
