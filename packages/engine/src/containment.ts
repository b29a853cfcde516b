/**
 * The session's containment (SBX-1..3): composes `@crystal/sandbox` with the config, the
 * workspace and Home. It answers whether calls run sandboxed (for `/status`, the approval card
 * and the full-mode rule), wraps one command for bash or an exec tool, and turns the OS's refusals
 * into plain `[sandbox]` lines. Where no sandbox is available, or it is turned off, the start-up
 * note says so once and commands run as before, behind the classifier's asks (SBX-2).
 *
 * Network: sandboxed calls have no network of the host's. HTTP(S) goes through the sandbox's
 * filtering proxy, reached through one long-lived bridge per session whose network namespace the
 * proxied calls join (`startProxyBridge`; until it is up, or without `nsenter`, each call starts
 * a bridge of its own): hosts in `sandbox.network.allow` pass, any other host asks the
 * operator (Once: while commands run; Session and Always: approval grants), and without an
 * operator (`crystal run`) it is refused with a `[sandbox]` 403. Without `socat` there is no
 * filter: listed hosts mean the whole network. A bash call the classifier marks Network that the
 * operator approved runs with the whole network for that call.
 */
import { accessSync, constants } from 'node:fs';
import { homedir, totalmem } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  credentialPaths,
  explainRefusal,
  findSandbox,
  probeSandbox,
  protectedWorkspacePaths,
  type SandboxAvailability,
  type ProxyBridge,
  type SandboxPolicy,
  startNetworkProxy,
  startProxyBridge,
  userStartupPaths,
  type WrappedCommand,
  wrapCommand,
} from '@crystal/sandbox';
import type { Config, SandboxConfig } from './config/schema.js';
import { homePaths } from './home.js';
import { trustFile } from './trust.js';

/** A command wrapped for the sandbox, and whether it has the network. */
export interface ContainedCommand extends WrappedCommand {
  readonly network: boolean;
}

/** How one command is started; `undefined` from `wrap` means unsandboxed. */
export interface CommandWrapRequest {
  readonly argv: readonly [string, ...string[]];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** The tool call, to look up a network grant. */
  readonly callId?: string;
  /** Folders the command must read although they sit in the private temp (an exec tool's set folder). */
  readonly readable?: readonly string[];
}

export interface Containment {
  /** Whether bash and exec tools run in the OS sandbox. */
  readonly sandboxed: boolean;
  /** One line for `/status` and the approval card, e.g. `workspace-write (bubblewrap), network off`. */
  readonly description: string;
  /** The start-up note (SBX-2) when calls are not sandboxed; undefined when they are. */
  readonly note: string | undefined;
  wrap(request: CommandWrapRequest): ContainedCommand | undefined;
  /** `[sandbox]` lines explaining a failed sandboxed command's output (empty when nothing matches). */
  explain(output: string, command: ContainedCommand): string[];
  /** The operator approved a Network call: it gets the network (one call). */
  grantNetwork(callId: string): void;
  /** Stops the network proxy (it never keeps the process alive on its own). */
  close(): void;
  /**
   * Resolves once background set-up is done: the session's network bridge, started with the
   * proxy (until then a proxied command starts a bridge of its own). Never rejects.
   */
  ready(): Promise<void>;
  /**
   * Detects the sandbox (issue 22 item 4: the bwrap probe runs on first use, not at start):
   * resolves once `sandboxed`, `description` and `wrap` may be used. Every caller that starts a
   * process awaits it first; reading those before it throws (never an unsandboxed run by
   * mistake). Idempotent; rejects only when the sandbox's set-up (its network proxy) fails.
   */
  resolve(): Promise<void>;
}

export interface ContainmentOptions {
  readonly config: Config;
  readonly home: string;
  readonly workspace: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  /** Asks the operator whether a sandboxed command may reach a host not on the allow list. */
  readonly askHost?: (host: string, signal: AbortSignal) => Promise<boolean>;
  /** A note found only when the sandbox is detected (the bwrap probe failed, no socat to filter with). */
  readonly onNote?: (text: string) => void;
}

export interface SandboxSettings {
  readonly mode: 'off' | 'workspace-write';
  readonly allow: readonly string[];
}

export function sandboxSettings(config: SandboxConfig | undefined): SandboxSettings {
  if (config === undefined) return { mode: 'workspace-write', allow: [] };
  if (typeof config === 'string') return { mode: config, allow: [] };
  return { mode: config.mode ?? 'workspace-write', allow: config.network?.allow ?? [] };
}

/** The private /tmp lives in memory: at most a quarter of it, and never more than 2 GiB. */
const TEMP_BYTES = Math.min(2 * 1024 ** 3, Math.floor(totalmem() / 4));

const TURN_OFF = 'set "sandbox": "off" in config.json (commands then run with your permissions, behind the asks)';
const ALLOW_NETWORK =
  'list hosts in config.json ("sandbox": {"mode": "workspace-write", "network": {"allow": ["registry.npmjs.org"]}}); a command the approval card marks Network runs with the network once approved';

export async function createContainment(options: ContainmentOptions): Promise<Containment> {
  const settings = sandboxSettings(options.config.sandbox);
  const env = options.env ?? process.env;
  if (settings.mode === 'off') {
    return unsandboxed(
      'turned off in config.json ("sandbox": "off")',
      'The OS sandbox is off ("sandbox": "off" in config.json): shell commands and exec tools run with your permissions; the approval asks stay.',
    );
  }
  // SBX-2: what needs no process (platform, CRYSTAL_BWRAP, bwrap on PATH) is told at start.
  const candidate = findSandbox({ env, ...(options.platform ? { platform: options.platform } : {}) });
  if (!('bwrap' in candidate)) return noSandbox(candidate.reason);
  // The probe (a bwrap run) and the network proxy wait for the first command (issue 22 item 4).
  return lazyContainment(async () => {
    const found = await probeSandbox(candidate.bwrap);
    return found.available ? sandboxed(options, settings, env, found) : noSandbox(found.reason);
  }, options.onNote);
}

function noSandbox(reason: string): Containment {
  return unsandboxed(
    `unavailable (${reason})`,
    `No OS sandbox: ${reason}. Shell commands and exec tools run with your permissions; the approval asks stay.`,
  );
}

/** A containment whose detection runs on the first `resolve()`; its note is told then. */
function lazyContainment(detect: () => Promise<Containment>, onNote: ((text: string) => void) | undefined): Containment {
  let inner: Containment | undefined;
  let detecting: Promise<void> | undefined;
  let closed = false;
  const resolve = (): Promise<void> => {
    detecting ??= detect().then((found) => {
      inner = found;
      if (closed) found.close();
      if (found.note) onNote?.(found.note);
    });
    return detecting;
  };
  const known = (): Containment => {
    if (!inner) throw new Error('The OS sandbox was used before it was detected: await containment.resolve() first.');
    return inner;
  };
  return {
    get sandboxed() {
      return known().sandboxed;
    },
    get description() {
      return known().description;
    },
    get note() {
      return inner?.note;
    },
    wrap: (request) => known().wrap(request),
    explain: (output, command) => known().explain(output, command),
    grantNetwork: (callId) => known().grantNetwork(callId),
    close: () => {
      closed = true;
      inner?.close();
    },
    ready: async () => {
      // Never rejects: a sandbox whose set-up failed says so to the command that needs it.
      await resolve().catch(() => undefined);
      await inner?.ready();
    },
    resolve,
  };
}

async function sandboxed(
  options: ContainmentOptions,
  settings: SandboxSettings,
  env: NodeJS.ProcessEnv,
  found: SandboxAvailability & { available: true },
): Promise<Containment> {
  const bwrap = found.bwrap;
  const userHome = env.HOME || homedir();
  const paths = homePaths(options.home);
  const hidden = [
    ...credentialPaths(userHome),
    paths.config,
    paths.credentials,
    paths.permissions,
    trustFile(options.home),
    paths.sessions,
    paths.media,
    paths.logs,
    // The validated-configuration memo holds what config.json holds (config/memo.ts).
    paths.cache,
  ];
  const networkGrants = new Set<string>();
  const net = await networkFilter(settings.allow, options.askHost, env, bwrap);
  const policyFor = (network: boolean, readable: readonly string[]): SandboxPolicy => ({
    writable: [options.workspace],
    readable,
    readOnly: [...protectedWorkspacePaths(options.workspace), ...userStartupPaths(userHome)],
    hidden,
    network: network || net.all,
    ...(net.proxy ? { proxy: net.proxy() } : {}),
  });
  return {
    sandboxed: true,
    description: `workspace-write (bubblewrap), ${net.description}`,
    note: net.note,
    wrap(request) {
      const granted = request.callId !== undefined && networkGrants.delete(request.callId);
      const wrapped = wrapCommand({
        argv: request.argv,
        cwd: request.cwd,
        env: request.env,
        policy: policyFor(granted, request.readable ?? []),
        bwrap,
        ...(found.tmpfsSize ? { tempBytes: TEMP_BYTES } : {}),
      });
      net.started();
      let done = false;
      return {
        ...wrapped,
        network: granted || net.all,
        cleanup: () => {
          if (done) return;
          done = true;
          wrapped.cleanup();
          net.finished();
        },
      };
    },
    explain(output, command) {
      return explainRefusal(output, policyFor(command.network, []), { turnOff: TURN_OFF, allowNetwork: net.howToAllow }, env);
    },
    grantNetwork(callId) {
      networkGrants.add(callId);
    },
    close: () => net.close(),
    ready: () => net.ready,
    resolve: () => Promise.resolve(),
  };
}

interface NetworkFilter {
  /** The whole network for every call (hosts allowed but no socat to filter with). */
  readonly all: boolean;
  /** The proxy as a policy has it now: with the session's bridge to join once it is up. */
  readonly proxy?: () => NonNullable<SandboxPolicy['proxy']>;
  readonly ready: Promise<void>;
  readonly description: string;
  readonly note: string | undefined;
  readonly howToAllow: string;
  started(): void;
  finished(): void;
  close(): void;
}

/** Whether a host matches an allow-list entry: `*`, `host`, `host:port` or `*.domain`. */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase();
  return allow.some((entry) => {
    const [pattern = '', onlyPort] = entry.toLowerCase().split(/:(?=\d+$)/);
    if (onlyPort !== undefined && Number(onlyPort) !== port) return false;
    if (pattern === '*') return true;
    if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
    return name === pattern;
  });
}

/**
 * The network of sandboxed calls: no network namespace of their own, HTTP(S) through the
 * filtering proxy (allowed hosts pass, others ask the operator where there is one; an answer of
 * Once holds until no sandboxed command runs any more, Session and Always are approval grants).
 * Without `socat` there is no filter: listed hosts mean the whole network, and a note says so.
 */
async function networkFilter(
  allow: readonly string[],
  askHost: ((host: string, signal: AbortSignal) => Promise<boolean>) | undefined,
  env: NodeJS.ProcessEnv,
  bwrap: string,
): Promise<NetworkFilter> {
  const idle = { started: () => undefined, finished: () => undefined, close: () => undefined, ready: Promise.resolve() };
  const listed = allow.length > 0 ? allow.join(', ') : 'none';
  if (allow.length === 0 && !askHost) {
    return { all: false, description: 'network off', note: undefined, howToAllow: ALLOW_NETWORK, ...idle };
  }
  const socat = onPath('socat', env.PATH ?? '');
  if (!socat) {
    if (allow.length === 0)
      return { all: false, description: 'network off', note: undefined, howToAllow: ALLOW_NETWORK, ...idle };
    return {
      all: true,
      description: `network on (allowed: ${listed}; not filtered per host: socat is not installed)`,
      note: `socat is not installed, so the sandbox cannot filter the network per host: sandboxed commands get the whole network because sandbox.network.allow lists ${listed}. Install socat to filter.`,
      howToAllow: ALLOW_NETWORK,
      ...idle,
    };
  }
  let running = 0;
  const onceHosts = new Set<string>();
  const pending = new Map<string, Promise<boolean>>();
  const proxy = await startNetworkProxy({
    decide: async ({ host, port, signal }) => {
      if (hostAllowed(allow, host, port) || onceHosts.has(host)) return true;
      if (!askHost) return false;
      // One ask per host, however many connections the command opens meanwhile.
      let answer = pending.get(host);
      if (!answer) {
        answer = askHost(host, signal).finally(() => pending.delete(host));
        pending.set(host, answer);
      }
      const yes = await answer;
      if (yes && running > 0) onceHosts.add(host);
      return yes;
    },
    refusal: (host) =>
      `[sandbox] network access to ${host} is not allowed${askHost ? ' (the operator declined it)' : ''}. Add it to "sandbox": {"network": {"allow": ["${host}"]}} in config.json to allow it.`,
  });
  // One bridge for the session (bench/sandbox.mjs): started now, joined by every proxied command once it listens.
  let bridge: ProxyBridge | undefined;
  let closed = false;
  const nsenter = onPath('nsenter', env.PATH ?? '');
  const ready = nsenter
    ? startProxyBridge({ bwrap, socat, nsenter, socket: proxy.socket }).then(
        (started) => {
          if ('failed' in started) return;
          if (closed) started.close();
          else bridge = started;
        },
        () => undefined,
      )
    : Promise.resolve();
  return {
    all: false,
    proxy: () => {
      const join = bridge?.join();
      return { socket: proxy.socket, socat, ...(join ? { join } : {}) };
    },
    ready,
    description: `network through the sandbox proxy (allowed: ${listed}${askHost ? '; other hosts ask' : '; other hosts refused'})`,
    note: undefined,
    howToAllow: `${ALLOW_NETWORK}. HTTP(S) goes through the sandbox's proxy (HTTPS_PROXY); programs that ignore it have no network`,
    started: () => {
      running += 1;
    },
    finished: () => {
      running = Math.max(0, running - 1);
      if (running === 0) onceHosts.clear();
    },
    close: () => {
      closed = true;
      bridge?.close();
      proxy.close();
    },
  };
}

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function unsandboxed(description: string, note: string): Containment {
  return {
    sandboxed: false,
    description,
    note,
    wrap: () => undefined,
    explain: () => [],
    grantNetwork: () => undefined,
    close: () => undefined,
    ready: () => Promise.resolve(),
    resolve: () => Promise.resolve(),
  };
}
