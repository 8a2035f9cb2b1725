/**
 * Addresses a backend server may never use, whatever an EndpointSlice says. HAProxy runs on a
 * host with its own services (the agent, the master socket, and locally the controllers'
 * health and metrics ports), and its own Pods and the controller's listen in the cluster: an
 * endpoint pointing back at any of them makes HAProxy send requests to itself (one request
 * to a backend at HAProxy's own :8080 looped 98 times, and 40 of them made every tenant's
 * requests time out). So, in order, the first that applies naming the refusal:
 *
 * 1. not an IP address, or one with a zone index;
 * 2. a fixed range: loopback, unspecified, link-local, multicast, reserved, IPv4-compatible;
 * 3. an address of one of the release's own Pods (HAProxy and the controller);
 * 4. an IPv6 form that carries an IPv4 address refused by 2 or 3: NAT64, 6to4, Teredo, SIIT
 *    (an IPv4-mapped address is judged as the IPv4 address it is, by every rule);
 * 5. outside every range endpoints may use: the cluster's Pod CIDRs (the Nodes'
 *    spec.podCIDRs, or a value) and the ranges the operator allows besides.
 *
 * The API server already refuses some of these in IPv4 and IPv6 slices; FQDN slices name
 * hosts whose addresses only the resolver knows, so every resolved address is checked too.
 * Pure: the Pods and ranges come in as `EndpointRules`.
 */
import {
  type Cidr,
  type IpBytes,
  formatIp,
  inCidr,
  parseCidr,
  parseIp,
  sameIp,
} from './ip-address.ts';

/** Why an address is refused, and what to do about it. */
export interface EndpointRefusal {
  /** What the address is, to follow "lists <address>, ". */
  readonly why: string;
  /** A sentence saying what to do. */
  readonly fix: string;
}

/** One of the release's own Pods: HAProxy or the controller. */
export interface OwnPod {
  /** `namespace/name`. */
  readonly name: string;
  readonly addresses: readonly string[];
}

/** What the address rules need to know of the cluster. */
export interface EndpointRules {
  /** The release's own Pods, whose addresses no backend may use. */
  readonly ownPods: readonly OwnPod[];
  /** The cluster's Pod CIDRs; none when no Node has spec.podCIDRs and no value names them. */
  readonly podCIDRs: readonly string[];
  /** Where the Pod CIDRs come from: the Node objects, or a value (`--pod-cidrs`). */
  readonly podCIDRsFrom: 'nodes' | 'value';
  /** Further ranges endpoints may use (`--allowed-endpoint-cidrs`). */
  readonly allowedCIDRs: readonly string[];
}

/**
 * Rules for checks outside a cluster (`haptic config check`, tests): no own Pods, every range
 * allowed, so only the fixed ranges refuse.
 */
export const anyRangeEndpointRules: EndpointRules = {
  ownPods: [],
  podCIDRs: ['0.0.0.0/0', '::/0'],
  podCIDRsFrom: 'value',
  allowedCIDRs: [],
};

const realEndpoints = "List the addresses of the Service's real endpoints.";

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

/** In order; the first range that holds an address names the refusal. */
const fixedRanges: readonly { readonly what: string; readonly ranges: readonly Cidr[] }[] = [
  {
    what: 'a loopback address (the HAProxy host itself)',
    ranges: [cidr('127.0.0.0/8'), cidr('::1/128')],
  },
  {
    what: 'an unspecified address (no host, which HAProxy may take as its own)',
    ranges: [cidr('0.0.0.0/8'), cidr('::/128')],
  },
  {
    what: 'a link-local address (the HAProxy host’s own link, e.g. a cloud metadata service)',
    ranges: [cidr('169.254.0.0/16'), cidr('fe80::/10')],
  },
  { what: 'a multicast address', ranges: [cidr('224.0.0.0/4'), cidr('ff00::/8')] },
  { what: 'a reserved or broadcast address', ranges: [cidr('240.0.0.0/4')] },
  {
    what: 'an IPv4-compatible IPv6 address (deprecated; write the IPv4 address)',
    ranges: [cidr('::/96')],
  },
];

const ipv4Mapped = cidr('::ffff:0:0/96');

/**
 * IPv6 forms that carry an IPv4 address, with the bytes each may hold it in. Packets for such
 * an address reach that IPv4 address (through a NAT64 gateway, a 6to4 or Teredo relay, a
 * SIIT translator). The local-use NAT64 prefix may be split into /56, /64 or /96 networks
 * (RFC 8215), so every position RFC 6052 defines within it counts, except where it holds an
 * address of 0.0.0.0/8: that is the zero padding of the other positions' networks (and no
 * translator sends there). A Teredo address carries its server's address and its client's
 * (inverted).
 */
const embeddings: readonly {
  readonly form: string;
  readonly range: Cidr;
  readonly positions: readonly (readonly number[])[];
  readonly inverted?: readonly (readonly number[])[];
  readonly padded?: true;
}[] = [
  {
    form: 'an IPv4-translated (SIIT) address',
    range: cidr('::ffff:0:0:0/96'),
    positions: [[12, 13, 14, 15]],
  },
  {
    form: 'a NAT64 address (64:ff9b::/96)',
    range: cidr('64:ff9b::/96'),
    positions: [[12, 13, 14, 15]],
  },
  {
    form: 'a NAT64 address (64:ff9b:1::/48)',
    range: cidr('64:ff9b:1::/48'),
    positions: [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ],
    padded: true,
  },
  { form: 'a 6to4 address (2002::/16)', range: cidr('2002::/16'), positions: [[2, 3, 4, 5]] },
  {
    form: 'a Teredo address (2001::/32)',
    range: cidr('2001::/32'),
    positions: [[4, 5, 6, 7]],
    inverted: [[12, 13, 14, 15]],
  },
];

interface CompiledRules {
  readonly own: readonly { readonly pod: string; readonly bytes: IpBytes }[];
  readonly ranges: readonly Cidr[];
  readonly rangeText: string;
  readonly podCIDRsKnown: boolean;
  readonly from: EndpointRules['podCIDRsFrom'];
  readonly allowedText: string;
}

const compiled = new WeakMap<EndpointRules, CompiledRules>();

function compile(rules: EndpointRules): CompiledRules {
  let found = compiled.get(rules);
  if (found !== undefined) return found;
  const own: { pod: string; bytes: IpBytes }[] = [];
  for (const pod of rules.ownPods) {
    for (const address of pod.addresses) {
      const bytes = parseIp(address);
      if (bytes !== undefined) own.push({ pod: pod.name, bytes: unmapped(bytes) });
    }
  }
  const parsed = (list: readonly string[]): Cidr[] =>
    list.map(parseCidr).filter((each): each is Cidr => typeof each !== 'string');
  const pods = parsed(rules.podCIDRs);
  const allowed = parsed(rules.allowedCIDRs);
  found = {
    own,
    ranges: [...pods, ...allowed],
    rangeText: pods.map((each) => each.text).join(', '),
    podCIDRsKnown: pods.length > 0,
    from: rules.podCIDRsFrom,
    allowedText: allowed.map((each) => each.text).join(', '),
  };
  compiled.set(rules, found);
  return found;
}

/** An IPv4-mapped address as the IPv4 address it is; any other as it is. */
function unmapped(bytes: IpBytes): IpBytes {
  return inCidr(bytes, ipv4Mapped) ? bytes.slice(12) : bytes;
}

interface Subject {
  readonly bytes: IpBytes;
  readonly rules: CompiledRules;
}

type EndpointCheck = (subject: Subject) => EndpointRefusal | undefined;

const inFixedRange: EndpointCheck = ({ bytes }) => {
  const what = fixedRanges.find(({ ranges }) => ranges.some((range) => inCidr(bytes, range)));
  return what === undefined ? undefined : { why: what.what, fix: realEndpoints };
};

const ownPodAddress: EndpointCheck = ({ bytes, rules }) => {
  const own = rules.own.find((each) => sameIp(each.bytes, bytes));
  return own === undefined
    ? undefined
    : {
        why: `the address of Pod ${own.pod}, one of the ingress controller's own Pods (HAProxy or its controller), so requests sent there would come back into HAProxy`,
        fix: realEndpoints,
      };
};

function ipv4At(bytes: IpBytes, positions: readonly number[], invert: boolean): IpBytes {
  return Uint8Array.from(
    positions.map((at) => (invert ? ~(bytes[at] ?? 0) & 0xff : (bytes[at] ?? 0))),
  );
}

/** The IPv4 addresses an IPv6 address carries, with the form that carries them. */
export function embeddedIpv4(address: string): readonly { form: string; ipv4: string }[] {
  const bytes = parseIp(address);
  return bytes === undefined
    ? []
    : carried(bytes).map(({ form, ipv4 }) => ({ form, ipv4: formatIp(ipv4) }));
}

function carried(bytes: IpBytes): { form: string; ipv4: IpBytes }[] {
  const found: { form: string; ipv4: IpBytes }[] = [];
  for (const { form, range, positions, inverted, padded } of embeddings) {
    if (!inCidr(bytes, range)) continue;
    for (const at of positions) {
      const ipv4 = ipv4At(bytes, at, false);
      if (padded !== true || ipv4[0] !== 0) found.push({ form, ipv4 });
    }
    for (const at of inverted ?? []) found.push({ form, ipv4: ipv4At(bytes, at, true) });
  }
  return found;
}

const carriesRefused: EndpointCheck = ({ bytes, rules }) => {
  for (const { form, ipv4 } of carried(bytes)) {
    const inner = { bytes: ipv4, rules };
    const refusal = inFixedRange(inner) ?? ownPodAddress(inner);
    if (refusal !== undefined) {
      return { why: `${form} that carries ${formatIp(ipv4)}, ${refusal.why}`, fix: refusal.fix };
    }
  }
  return undefined;
};

const outsideRanges: EndpointCheck = ({ bytes, rules }) => {
  if (rules.ranges.some((range) => inCidr(bytes, range))) return undefined;
  const allowed =
    rules.allowedText === '' ? '' : ` and the further ranges allowed (${rules.allowedText})`;
  // Unknown Pod CIDRs (a network plugin that assigns Pod addresses itself, and no value):
  // refusing every endpoint would drop every tenant's traffic on install, so the range rule
  // waits for the value; the own Pods and the fixed ranges still hold, and the controller
  // warns (cluster-watch.ts).
  if (!rules.podCIDRsKnown) return undefined;
  const from =
    rules.from === 'nodes' ? "from the Nodes' spec.podCIDRs" : 'from controller.endpoints.podCIDRs';
  return {
    why: `outside the cluster's Pod CIDRs (${rules.rangeText}, ${from})${allowed}`,
    fix: "List the addresses of the Service's Pods; for addresses elsewhere (the Service range, host-network Pods, hosts outside the cluster) the cluster operator adds their range to controller.endpoints.allowedCIDRs.",
  };
};

const checks: readonly EndpointCheck[] = [
  inFixedRange,
  ownPodAddress,
  carriesRefused,
  outsideRanges,
];

/** Why `address` may not be a backend server under `rules`, or undefined when it may. */
export function endpointRefusal(
  address: string,
  rules: EndpointRules,
): EndpointRefusal | undefined {
  const bytes = parseIp(address);
  if (bytes === undefined) {
    return {
      why: address.includes('%')
        ? 'an address with a zone index (only link-local ones have it)'
        : 'not an IP address',
      fix: realEndpoints,
    };
  }
  const subject = { bytes: unmapped(bytes), rules: compile(rules) };
  for (const check of checks) {
    const refusal = check(subject);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/**
 * Why `address` may never be a backend server, wherever HAProxy runs, or undefined: the
 * rules without own Pods or ranges (`anyRangeEndpointRules`).
 */
export function addressRefusal(address: string): string | undefined {
  return endpointRefusal(address, anyRangeEndpointRules)?.why;
}
