/**
 * The HTTP side of `config.json` for the provider clients: REL-5 timeouts from `retry`, and
 * the transport (proxy variables from the session's environment, `caFile`).
 */
import { isAbsolute, join } from 'node:path';
import {
  type ClientOptions,
  createTransport,
  defaultTransport,
  type FetchFunction,
  type Transport,
  transportFetch,
} from '@crystal/providers';
import type { Config } from './config/schema.js';
import { UsageError } from './errors.js';

const PROXY_VARIABLES = ['https_proxy', 'http_proxy', 'no_proxy', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'];

const transports = new Map<string, Transport>();

/** One transport per distinct (proxy variables, CA file), so keep-alive connections are shared. */
function transportFor(home: string, config: Config, env: NodeJS.ProcessEnv): Transport {
  const caFile = config.caFile === undefined ? undefined : isAbsolute(config.caFile) ? config.caFile : join(home, config.caFile);
  const proxyEnv: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (value !== undefined) proxyEnv[name] = value;
  }
  if (env.NODE_EXTRA_CA_CERTS !== undefined) proxyEnv.NODE_EXTRA_CA_CERTS = env.NODE_EXTRA_CA_CERTS;
  const sameAsProcess =
    caFile === undefined && [...PROXY_VARIABLES, 'NODE_EXTRA_CA_CERTS'].every((name) => env[name] === process.env[name]);
  if (sameAsProcess) return defaultTransport();
  const key = JSON.stringify([caFile, proxyEnv]);
  let transport = transports.get(key);
  if (!transport) {
    try {
      transport = createTransport({ env: proxyEnv, caFile });
    } catch (error) {
      throw new UsageError(`config.json → caFile: ${(error as Error).message}. Point caFile at a readable PEM file.`);
    }
    transports.set(key, transport);
  }
  return transport;
}

/** Client options from `config.json`: timeouts (REL-5) and the transport (proxies, caFile). */
export function clientOptionsOf(home: string, config: Config, env: NodeJS.ProcessEnv): ClientOptions {
  const r = config.retry ?? {};
  const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.round(seconds * 1000));
  return {
    transport: transportFor(home, config, env),
    ...(r.connectTimeoutSeconds === undefined ? {} : { connectTimeoutMs: ms(r.connectTimeoutSeconds) }),
    ...(r.firstByteTimeoutSeconds === undefined ? {} : { firstByteTimeoutMs: ms(r.firstByteTimeoutSeconds) }),
    ...(r.idleTimeoutSeconds === undefined ? {} : { idleTimeoutMs: ms(r.idleTimeoutSeconds) }),
  };
}

/**
 * The `fetch` MCP servers over HTTP or SSE are reached with: the providers' transport, so the
 * proxy variables, NO_PROXY and caFile apply to them as to the model (issue 22 item 2).
 */
export function mcpFetch(home: string, config: Config, env: NodeJS.ProcessEnv): FetchFunction {
  return transportFetch(transportFor(home, config, env));
}
