import { describe, expect, it } from 'vitest';
import { compileHttpAllowlist, parseHttpAllowlist } from '../activities/tools/http-allowlist';

const allows = (entries: string[], url: string) => compileHttpAllowlist(entries).allows(new URL(url));

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

  it('matches everything with * (development only)', () => {
    expect(allows(['*'], 'http://10.0.0.1:22/')).toBe(true);
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
  ])('rejects the entry %s at startup, naming the variable', (entry, why) => {
    expect(() => compileHttpAllowlist([entry])).toThrow(`AGENT_HTTP_ALLOWLIST: invalid entry "${entry}": ${why}`);
  });
});
