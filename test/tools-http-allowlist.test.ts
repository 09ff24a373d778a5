import { describe, expect, it } from 'vitest';
import { compileHttpAllowlist, parseHttpAllowlist } from '../activities/tools/http-allowlist';
import { restrictedKind } from '../activities/tools/restricted-address';

const allows = (entries: string[], url: string) => compileHttpAllowlist(entries).allows(new URL(url));
const allowsAddress = (entries: string[], address: string, url: string) => compileHttpAllowlist(entries).allowsAddress(address, new URL(url));

describe('http allowlist (AGENT_HTTP_ALLOWLIST)', () => {
  it('splits the variable on commas and ignores blanks', () => {
    expect(parseHttpAllowlist(' api.example.com, localhost:8080 ,,')).toEqual(['api.example.com', 'localhost:8080']);
    expect(parseHttpAllowlist(undefined)).toEqual([]);
    expect(parseHttpAllowlist('')).toEqual([]);
  });

  it('allows nothing when empty', () => {
    expect(allows([], 'https://example.com/')).toBe(false);
  });

  it('matches a bare host on the default port of either scheme only', () => {
    expect(allows(['api.example.com'], 'https://api.example.com/v1')).toBe(true);
    expect(allows(['api.example.com'], 'http://api.example.com/v1')).toBe(true);
    expect(allows(['api.example.com'], 'https://api.example.com:8443/v1')).toBe(false);
    expect(allows(['localhost'], 'http://localhost:5432/')).toBe(false);
  });

  it('matches host:port on that port, including a default port written out', () => {
    expect(allows(['localhost:8080'], 'http://localhost:8080/x')).toBe(true);
    expect(allows(['localhost:8080'], 'http://localhost:8081/x')).toBe(false);
    expect(allows(['example.com:443'], 'https://example.com/')).toBe(true);
  });

  it('matches host:* on any port', () => {
    expect(allows(['localhost:*'], 'http://localhost:12345/')).toBe(true);
    expect(allows(['localhost:*'], 'http://127.0.0.1:12345/')).toBe(false);
  });

  it('matches *.domain on subdomains but not the domain itself or look-alikes', () => {
    expect(allows(['*.example.com'], 'https://api.example.com/')).toBe(true);
    expect(allows(['*.example.com'], 'https://a.b.example.com/')).toBe(true);
    expect(allows(['*.example.com'], 'https://example.com/')).toBe(false);
    expect(allows(['*.example.com'], 'https://evilexample.com/')).toBe(false);
  });

  it('is not fooled by userinfo, case or a trailing dot', () => {
    expect(allows(['example.com'], 'https://example.com@evil.test/')).toBe(false);
    expect(allows(['Example.COM'], 'https://EXAMPLE.com./')).toBe(true);
  });

  it('matches IPv6 literals in brackets', () => {
    expect(allows(['[::1]:8080'], 'http://[::1]:8080/')).toBe(true);
    expect(allows(['[::1]:8080'], 'http://[::2]:8080/')).toBe(false);
  });

  it('matches every public host with * (development only)', () => {
    expect(allows(['*'], 'http://93.184.216.34:22/')).toBe(true);
    expect(allows(['*'], 'https://api.example.com:8443/')).toBe(true);
  });

  it.each(['http://10.0.0.1:22/', 'http://169.254.169.254/', 'http://127.0.0.1:5432/', 'http://[::1]:80/', 'http://[::ffff:10.0.0.1]/', 'http://0.0.0.0:80/', 'http://2130706433/'])(
    'lets neither * nor *.domain reach the restricted IP literal %s',
    (url) => {
      expect(allows(['*'], url)).toBe(false);
      expect(allows(['*.0.0.1:*', '*.254.169.254', '*.0.0.0:*'], url)).toBe(false);
    },
  );

  it('reaches a restricted IP literal listed as itself, on its port only, in any spelling the URL parser accepts', () => {
    expect(allows(['169.254.169.254'], 'http://169.254.169.254/latest')).toBe(true);
    expect(allows(['169.254.169.254'], 'http://169.254.169.254:8080/')).toBe(false);
    expect(allows(['127.1:8080'], 'http://127.0.0.1:8080/')).toBe(true);
    expect(allows(['[0:0::1]:8080'], 'http://[::1]:8080/')).toBe(true);
  });

  it('allows any public address a listed name resolves to, and a restricted one only when that IP is listed on the port', () => {
    expect(allowsAddress(['api.example.com'], '93.184.216.34', 'https://api.example.com/')).toBe(true);
    expect(allowsAddress(['api.example.com'], '2606:2800:220:1::248', 'https://api.example.com/')).toBe(true);
    expect(allowsAddress(['api.example.com'], '169.254.169.254', 'https://api.example.com/')).toBe(false);
    expect(allowsAddress(['*'], '10.1.2.3', 'http://intranet.example.com/')).toBe(false);
    expect(allowsAddress(['app.local:8080', '10.1.2.3:8080'], '10.1.2.3', 'http://app.local:8080/')).toBe(true);
    expect(allowsAddress(['app.local:8080', '10.1.2.3:9090'], '10.1.2.3', 'http://app.local:8080/')).toBe(false);
    expect(allowsAddress(['app.local:8080', '[::1]:8080'], '0:0::1', 'http://app.local:8080/')).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
  ])('classes %s as %s', (address, kind) => {
    expect(restrictedKind(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', 'not-an-ip'])('classes %s as unrestricted', (address) => {
    expect(restrictedKind(address)).toBeUndefined();
  });

  it('never allows a scheme other than http and https', () => {
    expect(allows(['*'], 'ftp://example.com/')).toBe(false);
  });

  it.each([
    ['http://example.com', 'expected host, host:port or host:*'],
    ['example.com:0', 'port must be 1-65535'],
    ['example.com:99999', 'port must be 1-65535'],
    ['exa mple.com', 'not a hostname'],
    ['*:8080', '"*" already matches every port'],
    ['ex*ample.com', 'not a hostname'],
    ['[:::]', 'not a hostname'],
  ])('rejects the entry %s at startup, naming the variable', (entry, why) => {
    expect(() => compileHttpAllowlist([entry])).toThrow(`AGENT_HTTP_ALLOWLIST: invalid entry "${entry}": ${why}`);
  });
});
