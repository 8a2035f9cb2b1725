import { describe, expect, it } from 'vitest';
import {
  type BudgetInput,
  type ModelBudgets,
  applyBudgets,
  defaultModelBudgets,
} from './model-budgets.ts';
import type { ModelBackend, ModelRoute } from './model-types.ts';
import { serverSlots } from './server-slots.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';
import { plainBackendOptions } from '../../annotations/route-options.ts';

/** A backend of `endpoints` servers (slots: the next power of two of 1.25 × endpoints). */
function backend(namespace: string, service: string, endpoints: number): ModelBackend {
  const servers = Array.from({ length: endpoints }, (_, i) => {
    const address = `10.0.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
    return { name: `s${String(i)}`, address, port: 80, endpoint: `${address}:80` };
  });
  return {
    name: `${namespace}:${service}:http`,
    namespace,
    service,
    servicePort: 'http',
    servers,
    slots: serverSlots(servers),
    options: plainBackendOptions,
    protocol: 'HTTP',
  };
}

function ingress(namespace: string, name: string, tls: readonly string[] = []): ValidIngress {
  return {
    namespace,
    name,
    createdAt: undefined,
    annotations: {},
    findings: [],
    canary: undefined,
    routes: [],
    tls: tls.map((secretName, i) => ({
      field: `spec.tls[${String(i)}]`,
      hosts: [`${secretName}.example.com`],
      secretName,
    })),
  };
}

function route(ingress: ValidIngress, backend: ModelBackend): ModelRoute {
  const host = `${ingress.name}.example.com`;
  return {
    host,
    pathType: 'Prefix',
    path: '/',
    exactKey: `${host}/`,
    prefixKey: `${host}/`,
    backend: backend.name,
    ingress: `${ingress.namespace}/${ingress.name}`,
    canary: false,
  };
}

const budgets = (more: Partial<ModelBudgets>): ModelBudgets => ({
  ...defaultModelBudgets,
  ...more,
});

/** Services of 100 endpoints (128 slots) used by Ingresses `served` oldest first. */
function servers(uses: readonly (readonly [namespace: string, name: string])[]): BudgetInput {
  const served = uses.map(([namespace, name]) => ingress(namespace, name));
  const backends = uses.map(([namespace, name]) => backend(namespace, name, 100));
  return {
    backends: [...backends].sort((a, b) => (a.name < b.name ? -1 : 1)),
    routes: served.map((each, i) => route(each, backends[i] ?? backend('x', 'x', 0))),
    certificates: [],
    files: new Map(),
    served,
  };
}

describe('applyBudgets', () => {
  it('changes nothing while every namespace and the total fit', () => {
    const input = servers([
      ['app', 'a'],
      ['team', 'b'],
    ]);
    const result = applyBudgets(input, budgets({ serverSlotsPerNamespace: 128, serverSlots: 256 }));
    expect(result.backends).toBe(input.backends);
    expect(result.warnings).toEqual([]);
  });

  it("leaves out a namespace's newest backends over its server-slot budget, with a warning naming the budget, and no other namespace's", () => {
    const input = servers([
      ['app', 'old'],
      ['team', 'b'],
      ['app', 'mid'],
      ['app', 'new'],
    ]);
    const result = applyBudgets(input, budgets({ serverSlotsPerNamespace: 300 }));
    const served = Object.fromEntries(
      result.backends.map((each) => [
        each.name,
        `${String(each.servers.length)}/${String(each.slots.length)}`,
      ]),
    );
    expect(served).toEqual({
      'app:old:http': '100/128',
      'app:mid:http': '100/128',
      'app:new:http': '0/4',
      'team:b:http': '100/128',
    });
    expect(result.warnings).toEqual([
      {
        ingress: 'app/new',
        reason: 'BudgetExceeded',
        message:
          'Ingress app/new routes to Service app/new, whose 128 server slots would take namespace app over the budget of 300 server slots (controller.budgets.serverSlotsPerNamespace); its endpoints are left out and HAProxy answers 503 for it, newer objects first. Remove endpoints or Services, or have the operator raise controller.budgets.serverSlotsPerNamespace.',
      },
    ]);
  });

  it('leaves out the newest backends of any namespace over the total, after each namespace is within its own', () => {
    const input = servers([
      ['app', 'a'],
      ['team', 'b'],
      ['other', 'c'],
    ]);
    const result = applyBudgets(input, budgets({ serverSlots: 300 }));
    expect(result.backends.map((each) => each.servers.length)).toEqual([100, 0, 100]);
    expect(result.warnings.map((each) => each.message)).toEqual([
      expect.stringContaining(
        'would take all namespaces over the budget of 300 server slots (controller.budgets.serverSlots)',
      ),
    ]);
  });

  it("gives the newest certificates over a namespace's byte budget the default certificate, and counts a file once however many lines name it", () => {
    const shop = ingress('app', 'shop', ['old']);
    const late = ingress('app', 'late', ['new']);
    const other = ingress('team', 'other', ['theirs']);
    const pem = 'x'.repeat(1000);
    const input: BudgetInput = {
      backends: [],
      routes: [],
      certificates: [
        { file: 'ssl/app_new.pem', secret: 'app/new', hosts: ['new.example.com'] },
        { file: 'ssl/app_old.pem', secret: 'app/old', hosts: ['a.example.com'] },
        { file: 'ssl/app_old.pem', secret: 'app/old', hosts: ['b.example.com'] },
        { file: 'ssl/team_theirs.pem', secret: 'team/theirs', hosts: ['t.example.com'] },
      ],
      files: new Map([
        ['ssl/app_new.pem', pem],
        ['ssl/app_old.pem', pem],
        ['ssl/team_theirs.pem', pem],
        ['ssl/default.pem', pem],
      ]),
      served: [shop, other, late],
    };
    const result = applyBudgets(input, budgets({ certificateBytesPerNamespace: 1500 }));
    expect(result.certificates.map((each) => each.file)).toEqual([
      'ssl/app_old.pem',
      'ssl/app_old.pem',
      'ssl/team_theirs.pem',
    ]);
    expect([...result.files.keys()]).toEqual([
      'ssl/app_old.pem',
      'ssl/team_theirs.pem',
      'ssl/default.pem',
    ]);
    expect(result.warnings).toEqual([
      {
        ingress: 'app/late',
        reason: 'BudgetExceeded',
        message:
          'Ingress app/late uses the certificate of Secret app/new, whose 1000 bytes would take namespace app over the budget of 1500 certificate bytes (controller.budgets.certificateMiBPerNamespace); its hosts get the default certificate, newer Secrets first. Use smaller or fewer certificates, or have the operator raise controller.budgets.certificateMiBPerNamespace.',
      },
    ]);
  });

  it('counts certificate bytes as UTF-8, not as string length', () => {
    const one = ingress('app', 'one', ['a']);
    const input: BudgetInput = {
      backends: [],
      routes: [],
      certificates: [{ file: 'ssl/app_a.pem', secret: 'app/a', hosts: ['a.example.com'] }],
      files: new Map([['ssl/app_a.pem', 'é'.repeat(600)]]),
      served: [one],
    };
    expect(applyBudgets(input, budgets({ certificateBytes: 1000 })).certificates).toEqual([]);
    expect(applyBudgets(input, budgets({ certificateBytes: 1200 })).certificates).toHaveLength(1);
  });
});
