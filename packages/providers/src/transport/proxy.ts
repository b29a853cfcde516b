/**
 * Which proxy a request goes through, from `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (upper or
 * lower case, lower case first as curl reads them). Loopback hosts never go through a proxy
 * (a local Ollama or fake server stays direct behind a corporate proxy), like Go's net/http.
 */
import { BlockList, isIP } from 'node:net';

/** A setting that cannot work (a bad proxy address, a proxy that wants credentials): retrying does not help. */
export class TransportSetupError extends Error {
  override readonly name = 'TransportSetupError';
}

/** A proxy's HTTP 407, to a CONNECT or to a plain http request through it: where credentials go, never what they were. */
export function proxyAuthError(proxy: URL): TransportSetupError {
  return new TransportSetupError(
    proxy.username === ''
      ? `the proxy ${proxy.host} asks for credentials (HTTP 407); put them in the proxy variable as http://user:password@${proxy.host}`
      : `the proxy ${proxy.host} refused the credentials of the proxy variable (HTTP 407); check the user and password (write % as %25, @ as %40, : as %3A)`,
  );
}

export interface ProxyEnv {
  readonly [name: string]: string | undefined;
}

function envValue(env: ProxyEnv, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A proxy address as an error may show it: a user name and password in it are never printed. */
function redacted(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#]*@/i, (_, scheme: string | undefined) => `${scheme ?? ''}***@`);
}

/** The proxy URL for `target`, or undefined for a direct connection. Throws on a proxy URL that cannot be parsed. */
export function proxyFor(target: URL, env: ProxyEnv): URL | undefined {
  const raw = target.protocol === 'https:' ? envValue(env, 'https_proxy') : envValue(env, 'http_proxy');
  if (raw === undefined) return undefined;
  const host = bareHost(target.hostname);
  if (isLoopback(host)) return undefined;
  if (noProxyMatches(host, effectivePort(target), envValue(env, 'no_proxy'))) return undefined;
  const variable = target.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let proxy: URL;
  try {
    proxy = new URL(withScheme);
  } catch {
    throw new TransportSetupError(`The proxy address '${redacted(raw)}' (${variable}) is not a URL.`);
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    throw new TransportSetupError(
      `The proxy address '${redacted(raw)}' (${variable}) uses ${proxy.protocol}; only http:// and https:// proxies are supported.`,
    );
  }
  try {
    decodeURIComponent(proxy.username);
    decodeURIComponent(proxy.password);
  } catch {
    throw new TransportSetupError(
      `The user name or password in the proxy address '${redacted(raw)}' (${variable}) has a % that starts no escape; write a % in them as %25.`,
    );
  }
  return proxy;
}

export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** A URL's host as a socket dials it: an IPv6 address without the brackets the URL writes (`[::1]` is `::1`). */
export function dialHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

/** A host name as NO_PROXY compares it: no brackets, lower case, no trailing dot (`api.example.com.` is `api.example.com`). */
function bareHost(hostname: string): string {
  return dialHost(hostname).replace(/\.$/, '').toLowerCase();
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';
}

/** The address family of an IP literal (`isIP`), undefined for a name. */
function family(address: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/**
 * Whether the IP literal `host` is in the range `address/prefix` (node:net's BlockList does the
 * arithmetic); false for a name (no lookup is made, as curl and Go do) or a malformed range.
 */
function inRange(host: string, address: string, prefix: number): boolean {
  const kind = family(host);
  if (kind === undefined || family(address) !== kind || prefix > (kind === 'ipv4' ? 32 : 128)) return false;
  const range = new BlockList();
  range.addSubnet(address, prefix, kind);
  return range.check(host, kind);
}

/**
 * `NO_PROXY`: comma or space separated; `*` matches all; `host`, `.suffix`, `*.suffix`, optional
 * `:port`; an IP range `10.0.0.0/8` or `fd00::/8` (curl 7.86+, Go) matches a host written as an
 * IP address in it, and an IP address matches the same address however it is written.
 */
export function noProxyMatches(host: string, port: number, noProxy: string | undefined): boolean {
  if (noProxy === undefined) return false;
  for (const entry of noProxy.split(/[\s,]+/)) {
    let pattern = entry.trim().toLowerCase();
    if (pattern === '') continue;
    if (pattern === '*') return true;
    const range = /^\[?([0-9a-f.:]+)\]?\/(\d{1,3})$/.exec(pattern);
    if (range) {
      if (inRange(host, range[1] as string, Number(range[2]))) return true;
      continue;
    }
    let entryPort: number | undefined;
    const portMatch = /^(.*\]|[^:]*):(\d+)$/.exec(pattern);
    if (portMatch) {
      pattern = portMatch[1] as string;
      entryPort = Number(portMatch[2]);
    }
    if (entryPort !== undefined && entryPort !== port) continue;
    pattern = bareHost(pattern).replace(/^\*\./, '.');
    const kind = family(pattern);
    if (kind !== undefined) {
      if (inRange(host, pattern, kind === 'ipv4' ? 32 : 128)) return true;
      continue;
    }
    if (pattern.startsWith('.')) {
      if (host.endsWith(pattern) || host === pattern.slice(1)) return true;
    } else if (host === pattern || host.endsWith(`.${pattern}`)) {
      return true;
    }
  }
  return false;
}
