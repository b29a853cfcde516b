/**
 * WEBX-3: who may drive the host.
 *
 * - A per-launch secret token, carried in the printed URL (`/?token=…`). The first visit trades
 *   it for an HttpOnly SameSite=Strict cookie and is redirected to `/`, so the token leaves the
 *   address bar and history. Every other request needs the cookie or `Authorization: Bearer`;
 *   without it, 401; with a wrong one, 403. The page itself is behind the token too.
 * - `Host` must name this server (a loopback name or the bound address with its port): a
 *   DNS-rebinding page reaches the socket under a foreign host name and is refused.
 * - `Origin`, when sent, must be this server's own origin, and `Sec-Fetch-Site`, when sent, must
 *   be `same-origin` or `none`: another site (or another local server on a different port,
 *   which counts as the same site for cookies) cannot drive the host from a browser.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares secrets in constant time whatever their lengths. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** `host:port` values the `Host` header may carry for a server bound to `bound` on `port`. */
export function allowedHosts(bound: string, port: number): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  if (bound === '0.0.0.0' || bound === '::') {
    for (const list of Object.values(networkInterfaces())) {
      for (const entry of list ?? []) names.add(entry.family === 'IPv6' ? `[${entry.address}]` : entry.address);
    }
  } else {
    names.add(bound.includes(':') ? `[${bound}]` : bound.toLowerCase());
  }
  const hosts = [...names].map((name) => `${name}:${port}`);
  // A browser leaves the default port out of `Host` and `Origin`.
  if (port === 80) hosts.push(...names);
  return new Set(hosts);
}

/** The host part of a URL for an address (IPv6 in brackets). */
export function urlHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

export interface GuardOptions {
  readonly token: string;
  /** Allowed `Host` values; read on every request (filled in once the port is known). */
  readonly hosts: () => ReadonlySet<string>;
  /** The cookie name; it names the port, since cookies do not tell ports apart. */
  readonly cookieName: () => string;
}

const TOKEN_HELP = "Open the full URL that 'crystal web' printed: it carries this launch's secret token.";

function refuse(c: Context, status: 401 | 403, text: string): Response {
  c.header('Cache-Control', 'no-store');
  return c.text(text, status);
}

export function guard(options: GuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    const hosts = options.hosts();
    if (!hosts.has(host)) {
      return refuse(c, 403, `Host '${host}' is not this Crystal Code host; use the printed URL (DNS rebinding guard).`);
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !hosts.has(hostOfOrigin(origin))) {
      return refuse(c, 403, `Requests from origin '${origin}' are refused; only this page may drive the host.`);
    }
    const site = c.req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      return refuse(c, 403, `Cross-site requests (${site}) are refused; only this page may drive the host.`);
    }
    const url = new URL(c.req.url);
    const offered = url.searchParams.get('token');
    if (offered !== null && url.pathname === '/' && c.req.method === 'GET') {
      if (!sameSecret(offered, options.token)) return refuse(c, 403, `The token in this URL is wrong. ${TOKEN_HELP}`);
      setCookie(c, options.cookieName(), options.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      c.header('Cache-Control', 'no-store');
      return c.redirect('/', 303);
    }
    const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    const presented = bearer ?? getCookie(c, options.cookieName());
    if (presented === undefined) return refuse(c, 401, `This Crystal Code host needs its token. ${TOKEN_HELP}`);
    if (!sameSecret(presented, options.token)) return refuse(c, 403, `The token is wrong. ${TOKEN_HELP}`);
    await next();
  };
}

function hostOfOrigin(origin: string): string {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' ? url.host.toLowerCase() : '';
  } catch {
    return '';
  }
}

/** Headers on every response: no framing, no sniffing, no referrer (the first URL holds the token). */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Frame-Options', 'DENY');
  c.header('Cross-Origin-Resource-Policy', 'same-origin');
  c.header('Cross-Origin-Opener-Policy', 'same-origin');
};
