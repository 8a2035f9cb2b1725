import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Who may import whom: the rules of docs/design.md, "Source layout and dependencies"; each
// message names the rule it enforces. One block per zone, so no two blocks set the same rule
// for a file (flat config keeps only the last one's options).
const rule = (name) => `docs/design.md, "Source layout and dependencies", rule "${name}"`;
const pure = rule('Pure core');

/** An import of another src/ directory (`../name/…`). */
const directory = (name) => `^(\\.\\./)+${name}/`;

/** Modules with I/O (network, files, processes) or an environment, forbidden in pure code. */
const ioBuiltins = [
  'child_process',
  'cluster',
  'dgram',
  'dns',
  'dns/promises',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'os',
  'readline',
  'tls',
  'worker_threads',
];
const pureIo = `${pure}: validation, annotations, haproxy, pki, secrets, agent-api, net, the routing model and the certificate policy do no I/O (network, files, processes, environment); an edge module passes the data in.`;
const pureImports = {
  paths: [
    ...ioBuiltins.flatMap((name) =>
      [name, `node:${name}`].map((specifier) => ({ name: specifier, message: pureIo })),
    ),
    ...['net', 'node:net'].map((name) => ({
      name,
      // Address arithmetic only: BlockList and isIP* open nothing.
      allowImportNames: ['BlockList', 'isIP', 'isIPv4', 'isIPv6'],
      message: `${pure}: of node:net, pure code uses only the address helpers BlockList, isIP, isIPv4 and isIPv6; sockets belong to the edges.`,
    })),
    { name: 'execa', message: pureIo },
    { name: 'express', message: pureIo },
    {
      name: '@kubernetes/client-node',
      // Its model types (V1Secret …) describe the data pure rules judge; its clients are I/O.
      allowTypeImports: true,
      message: `${pure}: pure code imports only the client's types (import type); its clients and values belong to src/kube and the reconcilers.`,
    },
  ],
  patterns: [
    {
      regex: directory(
        '(kube|render|webhook|agent|controller|sandbox|lifecycle|cli|status|delivery|watch|pipeline|admission)',
      ),
      message: `${pure}: the I/O edges (kube, render, webhook, agent, controller and its wings other than routing, sandbox, lifecycle, cli) import pure modules, never the reverse.`,
    },
    {
      regex: '^(\\.\\./)+(version|logger|stop-on-signal)\\.ts$',
      message: `${pure}: version.ts reads a file, logger.ts writes logs, stop-on-signal.ts handles signals; pure code takes what they give as arguments.`,
    },
    {
      regex:
        '^(\\./|\\.\\./certs/)(check-command|renew-command|expiry-sources|replica-reports|reconciler|webhook-certificate)\\.ts$',
      message: `${pure}: check-command, renew-command, expiry-sources, replica-reports, reconciler and webhook-certificate are the certificate providers' Kubernetes I/O; pure code uses the policy files of src/certs.`,
    },
  ],
};

/** The certificate provider's files that do I/O; every other file of src/certs is pure. */
const certsEdges = [
  'src/certs/check-command.ts',
  'src/certs/renew-command.ts',
  'src/certs/expiry-sources.ts',
  'src/certs/replica-reports.ts',
  'src/certs/reconciler.ts',
  'src/certs/webhook-certificate.ts',
];

/** no-restricted-imports sees static imports and re-exports only; src/cli alone loads lazily. */
const staticImports = {
  selector: 'ImportExpression',
  message: `${rule('Static imports')}: outside src/cli, import statically, so the import rules see every dependency.`,
};
const pureSyntax = [
  staticImports,
  {
    selector: "MemberExpression[object.name='process']",
    message: `${pure}: no environment, arguments or exit; an edge module passes settings in.`,
  },
  {
    selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
    message: `${pure}: no clock; take \`now\` as an argument.`,
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: `${pure}: no clock; take \`now\` as an argument.`,
  },
];

const meet = rule('Controller and agent meet in agent-api');
const sharedHomes =
  'the agent API contract (paths, bodies, encoding, request parsing, limits, reasons) is src/agent-api, listen addresses src/net/listen-address.ts, the HAProxy check src/sandbox/check-client.ts';

/** One zone's import restrictions: `[regex, message]` pairs. */
const restrict = (...patterns) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    { patterns: patterns.map(([regex, message]) => ({ regex, message })) },
  ],
});

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tools/', '.demo/', '.gitops/', '.image/', 'tools/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // @kubernetes/client-node models are generated classes that are plain data in practice;
      // its own documentation passes object literals, so this rule would flag every call.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: { 'no-restricted-syntax': ['error', staticImports] },
  },
  {
    files: ['src/controller/**/*.ts'],
    rules: restrict([
      directory('agent'),
      `${meet}: src/controller never imports src/agent; ${sharedHomes}.`,
    ]),
  },
  {
    files: ['src/agent/**/*.ts'],
    rules: restrict([
      directory('controller'),
      `${meet}: src/agent never imports src/controller; ${sharedHomes}.`,
    ]),
  },
  {
    files: ['src/sandbox/**/*.ts'],
    rules: restrict([
      directory('(agent|controller)'),
      `${meet}: the check sandbox serves the agent and the controller alike and imports neither; ${sharedHomes}.`,
    ]),
  },
  {
    files: [
      'src/pki/**/*.ts',
      'src/validation/**/*.ts',
      'src/annotations/**/*.ts',
      'src/haproxy/**/*.ts',
      'src/controller/routing/**/*.ts',
      'src/agent-api/**/*.ts',
      'src/net/**/*.ts',
      'src/certs/**/*.ts',
      'src/secrets/**/*.ts',
      'src/problem.ts',
      'src/is-record.ts',
      // The pure readers of rooms that also do I/O, which the pure core may import.
      'src/api/template-config.ts',
      'src/api/tls-state-entry.ts',
      'src/api/ready-condition.ts',
      'src/tls/loaded-report.ts',
    ],
    // Tests of pure code may run real tools (openssl) and real TLS against it.
    ignores: ['**/*.test.ts', ...certsEdges],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', pureImports],
      'no-restricted-syntax': ['error', ...pureSyntax],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
