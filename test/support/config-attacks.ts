/**
 * Attacks on the HAProxy configuration: issue 12's (§1 whitespace HAProxy reads and the old
 * lint did not, §2 `no lua-load`, §4 file contents in messages, §5 directives that read or
 * expose) and more of our own, as one table that every door's test feeds through: the lint and
 * `haptic config check`, the controller (template and Ingress), the webhook and the agent.
 *
 * Each attack is a few lines added at the end of the global section or at the start of a
 * frontend, and sometimes a file beside them. The Lua ones load `files/x.lua`, which the tests
 * write with {@link luaMarkerScript}: when HAProxy runs it, a marker file appears, so its
 * absence proves no code ran.
 */

/** Content of the secret file the `-f` and `file` attacks name: it must reach no message. */
export const attackSecret = 'TOPSECRET-8c1f hunter2';

export interface ConfigAttack {
  readonly name: string;
  /** Lines added at the end of the global section. */
  readonly global?: readonly string[];
  /** Lines added at the start of a frontend. */
  readonly frontend?: readonly string[];
  /** Files of the configuration beside haproxy.cfg, path → content (`ssl/evil.list`). */
  readonly files?: Readonly<Record<string, string>>;
  /** The directive the refusal names (as the lint prints it). */
  readonly directive: string;
  /** Index of the refused line among the added lines (or in `file`). @default 0 */
  readonly offset?: number;
  /** The file of the refused line, when it is not haproxy.cfg. */
  readonly file?: string;
  /** Plain `haproxy -c` runs files/x.lua with these lines (the controls show it). */
  readonly runsLua?: boolean;
}

/** A file name for an attack (markers, directories, Ingress names). */
export function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** files/x.lua: creates `marker` when HAProxy loads it. */
export function luaMarkerScript(marker: string): string {
  return `local f = io.open(${JSON.stringify(marker)}, "w")\nif f then f:close() end\n`;
}

/**
 * The attacks. `outside` is a directory outside every configuration directory holding
 * `secret.txt` (the secret), `secret.pem` and `page.http` (a valid HTTP response, so HAProxy
 * would accept it as an error file): see {@link outsideFiles}.
 */
export function configAttacks(outside: string): readonly ConfigAttack[] {
  return [
    {
      name: 'lua-load',
      global: ['  lua-load files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: '§1 VT before lua-load',
      global: ['\vlua-load files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: '§1 FF before lua-load',
      global: ['\flua-load files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: '§2 no lua-load',
      global: ['  no lua-load files/x.lua'],
      directive: 'no lua-load',
      runsLua: true,
    },
    {
      name: '§2 no lua-load-per-thread',
      global: ['  no lua-load-per-thread files/x.lua'],
      directive: 'no lua-load-per-thread',
      runsLua: true,
    },
    {
      name: '§4 acl -f reading /etc/passwd',
      frontend: ['  acl x src -f /etc/passwd'],
      directive: '-f /etc/passwd',
    },
    {
      name: '§4 acl -f reading a secret outside',
      frontend: [`  acl x src -f ${outside}/secret.txt`],
      directive: `-f ${outside}/secret.txt`,
    },
    {
      name: '§5 return file',
      frontend: [
        `  http-request return status 200 content-type text/plain file ${outside}/secret.txt`,
      ],
      directive: `file ${outside}/secret.txt`,
    },
    {
      name: '§5 stats socket',
      global: ['  stats socket ipv4@127.0.0.1:19999 level admin'],
      directive: 'stats socket',
    },
    {
      name: '§5 env() in a response',
      frontend: [
        '  http-request return status 200 content-type text/plain lf-string "%[env(PATH)]"',
      ],
      directive: 'env()',
    },
    {
      name: 'an escaped lua-load',
      global: ['  lua\\x2dload files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: 'lua-load escaped inside quotes',
      global: ['  "\\x6cua\\x2dload" files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: 'lua-load assembled from quoted parts',
      global: ['  lua"-"load files/x.lua'],
      directive: 'lua-load',
      runsLua: true,
    },
    {
      name: 'lua-load assembled from an environment variable',
      global: ['  "${HAPTIC_LISTEN_ADDRESS}lua-load" files/x.lua'],
      directive: '${HAPTIC_LISTEN_ADDRESS}lua-load',
      runsLua: true,
    },
    {
      name: 'lua-load as the default of a variable',
      global: ['  "${HAPTIC_LISTEN_ADDRESS-lua-load}" files/x.lua'],
      directive: '${HAPTIC_LISTEN_ADDRESS}',
    },
    {
      name: 'lua-load inside a false .if',
      global: ['.if 0', '  lua-load files/x.lua', '.endif'],
      directive: 'lua-load',
      offset: 1,
    },
    {
      name: 'lua-load in the .else of a true .if',
      global: ['.if 1', '.else', '  lua-load files/x.lua', '.endif'],
      directive: 'lua-load',
      offset: 2,
    },
    {
      name: 'a global section opened inside .if in a frontend',
      frontend: ['.if 1', 'global', '.endif', '  lua-load files/x.lua'],
      directive: 'global',
      offset: 1,
      runsLua: true,
    },
    {
      name: 'a relative path leaving the directory',
      frontend: ['  acl x src -f ../outside/secret.txt'],
      directive: '-f ../outside/secret.txt',
    },
    {
      name: 'a map converter reading a secret',
      frontend: [`  http-request set-var(txn.x) src,map_ip(${outside}/secret.txt)`],
      directive: `map ${outside}/secret.txt`,
    },
    {
      name: 'a bind setting with a parenthesis',
      frontend: [`  bind :8443 ssl crt(x) ${outside}/secret.txt`],
      directive: 'bind crt(x)',
    },
    {
      name: 'a Lua service',
      frontend: ['  http-request use-service lua.x'],
      directive: 'http-request use-service lua.x',
    },
    {
      name: 'a variable outside the allow-list',
      frontend: ['  http-request set-header X "${PATH}x"'],
      directive: '${PATH}',
    },
    {
      name: '.alert printing an environment variable',
      global: ['.alert "${PATH}"'],
      directive: '${PATH}',
    },
    {
      name: 'a crt-list line naming a key outside',
      frontend: ['  bind 127.0.0.1:18444 ssl crt-list ssl/evil.list'],
      files: { 'ssl/evil.list': `${outside}/secret.pem\n` },
      file: 'ssl/evil.list',
      directive: `${outside}/secret.pem`,
    },
    {
      name: 'a crt-list named through ./ naming a key outside',
      frontend: ['  bind 127.0.0.1:18444 ssl crt-list ./ssl/evil.list'],
      files: { 'ssl/evil.list': `${outside}/secret.pem\n` },
      file: 'ssl/evil.list',
      directive: `${outside}/secret.pem`,
    },
    {
      name: 'errorfile with an absolute path',
      frontend: [`  errorfile 503 ${outside}/page.http`],
      directive: `errorfile ${outside}/page.http`,
    },
    {
      name: 'ssl-engine',
      global: ['  ssl-engine rdrand'],
      directive: 'ssl-engine',
    },
    {
      name: 'filter spoe',
      frontend: [`  filter spoe engine x config ${outside}/spoe.conf`],
      directive: 'filter spoe',
    },
    {
      name: 'external-check',
      global: ['  external-check'],
      directive: 'external-check',
    },
  ];
}

/** Page served by the error-file attack: a valid HTTP response carrying the secret. */
export function outsideFiles(): Readonly<Record<string, string>> {
  return {
    'secret.txt': `${attackSecret}\n`,
    'secret.pem': `-----BEGIN PRIVATE KEY-----\n${attackSecret}\n-----END PRIVATE KEY-----\n`,
    'page.http': `HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\n${attackSecret}\n`,
    'spoe.conf': `[x]\nspoe-agent x\n`,
  };
}

/** Where an attack's refused line is: `haproxy.cfg: line 12` or `ssl/evil.list: line 1`. */
export function refusedAt(attack: ConfigAttack, firstAddedLine: number): string {
  const offset = attack.offset ?? 0;
  return attack.file === undefined
    ? `haproxy.cfg: line ${String(firstAddedLine + offset)}`
    : `${attack.file}: line ${String(offset + 1)}`;
}

/** What every door's refusal must contain: `haproxy.cfg: line 12: "lua-load"`. */
export function refusalText(attack: ConfigAttack, firstAddedLine: number): string {
  return `${refusedAt(attack, firstAddedLine)}: "${attack.directive}"`;
}

const corpusGlobal = ['global', '  default-path config', '  log stderr format raw local0'];
const corpusDefaults = [
  'defaults',
  '  mode http',
  '  timeout connect 1s',
  '  timeout client 1s',
  '  timeout server 1s',
];
const corpusRest = [
  '  bind 127.0.0.1:18443',
  '  default_backend be',
  'backend be',
  '  server s1 127.0.0.1:1',
];

/**
 * A small configuration the lint and HAProxy accept, with the attack's lines added, and the
 * line number of the first added line.
 */
export function corpusConfig(attack: Pick<ConfigAttack, 'global' | 'frontend'>): {
  readonly config: string;
  readonly firstAddedLine: number;
} {
  const global = attack.global ?? [];
  const frontend = attack.frontend ?? [];
  const lines = [
    ...corpusGlobal,
    ...global,
    ...corpusDefaults,
    'frontend fe',
    ...frontend,
    ...corpusRest,
  ];
  const firstAddedLine =
    global.length > 0 ? corpusGlobal.length + 1 : corpusGlobal.length + corpusDefaults.length + 2;
  return { config: `${lines.join('\n')}\n`, firstAddedLine };
}
