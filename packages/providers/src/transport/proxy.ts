/**
 * Which proxy a request goes through, from `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (upper or
 * lower case, lower case first as curl reads them). Loopback hosts never go through a proxy
 * (a local Ollama or fake server stays direct behind a corporate proxy), like Go's net/http.
 */

/** A setting that cannot work (a bad proxy address, a proxy that wants credentials): retrying does not help. */
export class TransportSetupError extends Error {
  override readonly name = 'TransportSetupError';
}

export interface ProxyEnv {
  readonly [name: string]: string | undefined;
}

function envValue(env: ProxyEnv, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The proxy URL for `target`, or undefined for a direct connection. Throws on a proxy URL that cannot be parsed. */
export function proxyFor(target: URL, env: ProxyEnv): URL | undefined {
  const raw = target.protocol === 'https:' ? envValue(env, 'https_proxy') : envValue(env, 'http_proxy');
  if (raw === undefined) return undefined;
  const host = bareHost(target.hostname);
  if (isLoopback(host)) return undefined;
  if (noProxyMatches(host, effectivePort(target), envValue(env, 'no_proxy'))) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let proxy: URL;
  try {
    proxy = new URL(withScheme);
  } catch {
    throw new TransportSetupError(
      `The proxy address '${raw}' (${target.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'}) is not a URL.`,
    );
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    throw new TransportSetupError(
      `The proxy address '${raw}' uses ${proxy.protocol}; only http:// and https:// proxies are supported.`,
    );
  }
  return proxy;
}

export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';
}

/** `NO_PROXY`: comma or space separated; `*` matches all; `host`, `.suffix`, `*.suffix`, optional `:port`. */
export function noProxyMatches(host: string, port: number, noProxy: string | undefined): boolean {
  if (noProxy === undefined) return false;
  for (const entry of noProxy.split(/[\s,]+/)) {
    let pattern = entry.trim().toLowerCase();
    if (pattern === '') continue;
    if (pattern === '*') return true;
    let entryPort: number | undefined;
    const portMatch = /^(.*\]|[^:]*):(\d+)$/.exec(pattern);
    if (portMatch) {
      pattern = portMatch[1] as string;
      entryPort = Number(portMatch[2]);
    }
    if (entryPort !== undefined && entryPort !== port) continue;
    pattern = bareHost(pattern).replace(/^\*\./, '.');
    if (pattern.startsWith('.')) {
      if (host.endsWith(pattern) || host === pattern.slice(1)) return true;
    } else if (host === pattern || host.endsWith(`.${pattern}`)) {
      return true;
    }
  }
  return false;
}
