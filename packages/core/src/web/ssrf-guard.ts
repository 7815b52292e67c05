import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// read_url fetches what the model (or a page it read) names, from the owner's machine: without a
// guard a prompt-injected page could make it read the router's admin page, a local service or the
// cloud metadata endpoint. Names are resolved here and every address checked; the connection then
// goes to the addresses that were checked (pinned), so a name that resolves elsewhere a moment
// later (DNS rebinding) cannot slip between the check and the connect.

/** Who may be fetched despite a private address: GUPPY_FETCH_ALLOW_PRIVATE and GUPPY_FETCH_ALLOW_HOSTS. */
export interface SsrfPolicy {
  /** Every address is allowed (GUPPY_FETCH_ALLOW_PRIVATE=true). */
  allowPrivate: boolean;
  /** Host names allowed as written in the URL (GUPPY_FETCH_ALLOW_HOSTS), not as resolved. */
  allowHosts: readonly string[];
  /** Resolves a name to all its addresses (default: the system resolver, dns.lookup all:true). */
  resolve?: (host: string) => Promise<LookupAddress[]>;
}

/** A URL that passed the guard: where to connect. */
export interface CheckedTarget {
  url: URL;
  /** The host to connect to, without an IPv6 literal's brackets (also the TLS server name). */
  host: string;
  /** The addresses that were checked, in the resolver's order: the only ones connected to. */
  addresses: LookupAddress[];
}

/** Thrown when a URL is refused: the message is the one-line reason the model sees. */
export class FetchRefused extends Error {
  override name = "FetchRefused";
}

// Ranges never fetched unless allowed, each with the name a refusal gives it.
const ranges: Array<[string, number, "ipv4" | "ipv6", string]> = [
  ["0.0.0.0", 8, "ipv4", "an unspecified (0.0.0.0/8)"],
  ["10.0.0.0", 8, "ipv4", "a private (10.0.0.0/8)"],
  ["100.64.0.0", 10, "ipv4", "a carrier-grade NAT (100.64.0.0/10)"],
  ["127.0.0.0", 8, "ipv4", "a loopback (127.0.0.0/8)"],
  ["169.254.0.0", 16, "ipv4", "a link-local and cloud-metadata (169.254.0.0/16)"],
  ["172.16.0.0", 12, "ipv4", "a private (172.16.0.0/12)"],
  ["192.0.0.0", 24, "ipv4", "an IETF-reserved (192.0.0.0/24)"],
  ["192.168.0.0", 16, "ipv4", "a private (192.168.0.0/16)"],
  ["198.18.0.0", 15, "ipv4", "a benchmarking (198.18.0.0/15)"],
  ["224.0.0.0", 4, "ipv4", "a multicast (224.0.0.0/4)"],
  ["240.0.0.0", 4, "ipv4", "a reserved (240.0.0.0/4)"],
  ["::", 128, "ipv6", "an unspecified (::)"],
  ["::1", 128, "ipv6", "a loopback (::1)"],
  // IPv4-compatible addresses (deprecated): nothing public is reached that way.
  ["::", 96, "ipv6", "an IPv4-compatible (::/96)"],
  ["fc00::", 7, "ipv6", "a unique-local private (fc00::/7)"],
  ["fe80::", 10, "ipv6", "a link-local (fe80::/10)"],
  ["fec0::", 10, "ipv6", "a site-local (fec0::/10)"],
  ["ff00::", 8, "ipv6", "a multicast (ff00::/8)"],
];

const lists = ranges.map(([network, prefix, family, name]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, name };
});

/**
 * The kind of non-public range `address` (an IP literal) is in, as a refusal names it ("a
 * loopback (127.0.0.0/8)"), or undefined for a public address. IPv6 addresses that carry an
 * IPv4 one — mapped (::ffff:127.0.0.1), NAT64 (64:ff9b::/96), 6to4 (2002::/16) — are judged by
 * the IPv4 address inside.
 */
export function blockedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner) {
      const range = blockedRange(inner);
      return range && `${range} IPv4 address inside an IPv6`;
    }
  }
  const type = family === 4 ? "ipv4" : "ipv6";
  return lists.find(({ list }) => list.check(address, type))?.name;
}

/** The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(groups[6] ?? 0, groups[7] ?? 0);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6))
    return v4(groups[6] ?? 0, groups[7] ?? 0);
  if (groups[0] === 0x2002) return v4(groups[1] ?? 0, groups[2] ?? 0);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted IPv4 part counts as two). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left.length === 8 ? left : undefined;
  const right = parse(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/** A URL's host as a resolver and a socket take it: an IPv6 literal without its brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** True when the URL's host name, as written (normalised by URL parsing), is in `allowHosts`. */
function hostAllowed(url: URL, allowHosts: readonly string[]): boolean {
  const host = bareHost(url).toLowerCase().replace(/\.$/, "");
  return allowHosts.some((entry) => {
    const bare = entry
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, "$1")
      .replace(/\.$/, "");
    return bare === host;
  });
}

const systemResolve = (host: string): Promise<LookupAddress[]> =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * Checks one URL (the first, or a redirect's): http or https only; its host resolved (an IP
 * literal as is — URL parsing has already turned `127.1` and `0x7f000001` into 127.0.0.1) and
 * every address it has refused when non-public, unless the policy allows it. Throws FetchRefused
 * naming the address and the setting that would allow it.
 */
export async function checkUrl(url: URL, policy: SsrfPolicy): Promise<CheckedTarget> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefused(
      `read_url fetches http and https URLs only, not ${url.protocol.replace(/:$/, "")}: (${url.href}).`,
    );
  }
  const host = bareHost(url);
  let addresses: LookupAddress[];
  const family = isIP(host);
  if (family !== 0) addresses = [{ address: host, family }];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolve)(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new FetchRefused(
        `read_url could not resolve ${host}${code ? ` (${code})` : ""}: check the URL's host name.`,
      );
    }
    if (addresses.length === 0) {
      throw new FetchRefused(`read_url could not resolve ${host}: it has no address.`);
    }
  }
  if (policy.allowPrivate || hostAllowed(url, policy.allowHosts)) return { url, host, addresses };
  for (const { address } of addresses) {
    const range = blockedRange(address);
    if (!range) continue;
    const via = address === host ? address : `${host} (which resolves to ${address})`;
    throw new FetchRefused(
      `read_url refused ${url.href}: ${via} is ${range} address, not the public internet. ` +
        `To allow it, set GUPPY_FETCH_ALLOW_PRIVATE=true (fetchAllowPrivate) or add "${host}" to GUPPY_FETCH_ALLOW_HOSTS (fetchAllowHosts).`,
    );
  }
  return { url, host, addresses };
}

/**
 * A socket `lookup` that answers with the checked addresses only, whatever the name resolves to
 * now: the connection goes where the guard looked. With `all` (Node's happy-eyeballs connect)
 * it offers every checked address, so a name with both ::1 and 127.0.0.1 still connects.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      (callback as (e: null, a: LookupAddress[]) => void)(null, [...addresses]);
      return;
    }
    const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
    const first = addresses.find((a) => !wanted || a.family === wanted) ?? addresses[0];
    if (!first) {
      callback(Object.assign(new Error("no checked address"), { code: "ENOTFOUND" }), "", 0);
      return;
    }
    callback(null, first.address, first.family);
  };
}
