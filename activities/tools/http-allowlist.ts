/**
 * Which hosts `http_request` may reach: `AGENT_HTTP_ALLOWLIST`, comma-separated.
 *
 * | entry               | matches                                                    |
 * |---------------------|------------------------------------------------------------|
 * | `api.example.com`   | that host on the scheme's default port (80/443) only       |
 * | `localhost:8080`    | that host on port 8080 only                                |
 * | `localhost:*`       | that host on any port                                      |
 * | `*.example.com`     | any subdomain of example.com (not example.com itself)      |
 * | `127.0.0.1:8080`    | that IP on port 8080 only                                  |
 * | `[::1]:8080`        | IPv6 literals in brackets, as in a URL                     |
 * | `*`                 | every public host on every port: development only          |
 *
 * Empty (the default) allows nothing, so the tool is off until an operator opts in.
 *
 * A bare host means the default port because "localhost" would otherwise open every local
 * service (databases, admin ports) to the model. Loopback, link-local and private
 * addresses (restricted-address.ts) are reached only through an entry that is that IP
 * literal: a listed name, `*.domain` or `*` that resolves to one is refused, because
 * whoever controls the name's DNS (or the wildcard's subdomains) picks its address.
 */

import { isIP } from 'node:net';
import { restrictedKind } from './restricted-address';

export const HTTP_ALLOWLIST_ENV = 'AGENT_HTTP_ALLOWLIST';

interface AllowRule {
  entry: string;
  /** Exact hostname, or `.suffix` for `*.suffix`, or `*` for any host. */
  host: string;
  /** A port number, `*` for any, or `default` for the scheme's default port. */
  port: number | '*' | 'default';
}

export interface HostAllowlist {
  /** The entries as configured, for messages. */
  readonly entries: readonly string[];
  /** The URL's scheme, host and port are listed; a restricted IP literal only by an entry that is that IP. */
  allows(url: URL): boolean;
  /** Some entry, wildcards included, matches the URL's host and port: what `allows` checks before restricted IPs. */
  matches(url: URL): boolean;
  /**
   * Whether `url`'s request may connect to `address`, one its host name resolved to: any
   * public address, a restricted one only when an entry names that IP on the URL's port.
   */
  allowsAddress(address: string, url: URL): boolean;
}

const HOST = /^(?:\*|\*\.[a-z0-9-]+(?:\.[a-z0-9-]+)*|[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/** Splits the variable's raw text; blank or unset means the empty list. */
export function parseHttpAllowlist(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** Validates once, at startup, and fails with a message that names the variable and the entry. */
export function compileHttpAllowlist(entries: readonly string[]): HostAllowlist {
  const rules = entries.map(compileRule);
  const matches = (url: URL) => {
    const scheme = url.protocol;
    if (scheme !== 'http:' && scheme !== 'https:') return false;
    const host = url.hostname.toLowerCase().replace(/\.$/, '');
    const { port, defaultPort } = portsOf(url);
    return rules.some((rule) => hostMatches(rule, host) && portMatches(rule, port, defaultPort));
  };
  /** An entry that is this very IP, in URL form, on the URL's port; wildcards never count. */
  const namesAddress = (host: string, url: URL) => {
    const { port, defaultPort } = portsOf(url);
    return rules.some((rule) => rule.host === host && portMatches(rule, port, defaultPort));
  };
  return {
    entries: [...entries],
    matches,
    allows(url) {
      if (!matches(url)) return false;
      const host = url.hostname.toLowerCase();
      return restrictedKind(unbracket(host)) === undefined || namesAddress(host, url);
    },
    allowsAddress(address, url) {
      return restrictedKind(address) === undefined || namesAddress(addressHost(address), url);
    },
  };
}

/** `URL` drops a port equal to the scheme's default, so "no port" means the default one. */
function portsOf(url: URL): { port: number; defaultPort: number } {
  const defaultPort = url.protocol === 'https:' ? 443 : 80;
  return { port: url.port === '' ? defaultPort : Number(url.port), defaultPort };
}

/** An address as a URL writes its host: `127.0.0.1`, `[::1]` (canonical, so `[0::1]` is `[::1]`). */
export function addressHost(address: string): string {
  return new URL(`http://${isIP(address) === 6 ? `[${address}]` : address}/`).hostname;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function compileRule(entry: string): AllowRule {
  const text = entry.trim().toLowerCase();
  const fail = (why: string) => new Error(`${HTTP_ALLOWLIST_ENV}: invalid entry "${entry}": ${why}`);
  if (text === '*') return { entry, host: '*', port: '*' };
  // The port is after the last colon outside brackets, so IPv6 literals keep their colons.
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\*|\d+))?$/.exec(text);
  if (!match) throw fail('expected host, host:port or host:* (IPv6 in brackets)');
  const [, hostPart = '', portPart] = match;
  const host = hostPart.replace(/\.$/, '');
  if (!HOST.test(host)) throw fail('not a hostname, *.domain, [IPv6] or *');
  // The URL parser's own form, so that `127.1`, `[0::1]` match the hosts of URLs (`127.0.0.1`, `[::1]`).
  let canonical = host;
  if (!host.startsWith('*')) {
    try {
      canonical = new URL(`http://${host}/`).hostname;
    } catch {
      throw fail('not a hostname, *.domain, [IPv6] or *');
    }
  }
  if (host === '*' && portPart !== undefined) throw fail('"*" already matches every port');
  let port: AllowRule['port'] = 'default';
  if (portPart === '*') port = '*';
  else if (portPart !== undefined) {
    port = Number(portPart);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw fail('port must be 1-65535');
  }
  return { entry, host: host.startsWith('*.') ? host.slice(1) : canonical, port };
}

function hostMatches(rule: AllowRule, host: string): boolean {
  if (rule.host === '*') return true;
  if (rule.host.startsWith('.')) return host.endsWith(rule.host) && host.length > rule.host.length;
  return host === rule.host;
}

function portMatches(rule: AllowRule, port: number, defaultPort: number): boolean {
  if (rule.port === '*') return true;
  if (rule.port === 'default') return port === defaultPort;
  return port === rule.port;
}
