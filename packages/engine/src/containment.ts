/**
 * The session's containment (SBX-1..3): composes `@crystal/sandbox` with the config, the
 * workspace and Home. It answers whether calls run sandboxed (for `/status`, the approval card
 * and the full-mode rule), wraps one command for bash or an exec tool, and turns the OS's refusals
 * into plain `[sandbox]` lines. Where no sandbox is available, or it is turned off, the start-up
 * note says so once and commands run as before, behind the classifier's asks (SBX-2).
 *
 * Network: off inside the sandbox. `sandbox.network.allow` lists hosts; without a filtering
 * proxy any listed host turns the whole network on for sandboxed calls (the list documents
 * intent; filtering per host is not implemented). A bash call the classifier marks Network that
 * the operator approved (Once, Session, Always or a grant) runs with the network for that call.
 */
import { homedir } from 'node:os';
import {
  credentialPaths,
  detectSandbox,
  explainRefusal,
  protectedWorkspacePaths,
  type SandboxAvailability,
  type SandboxPolicy,
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
}

export interface ContainmentOptions {
  readonly config: Config;
  readonly home: string;
  readonly workspace: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
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
  const found: SandboxAvailability = await detectSandbox({
    env,
    ...(options.platform ? { platform: options.platform } : {}),
  });
  if (!found.available) {
    return unsandboxed(
      `unavailable (${found.reason})`,
      `No OS sandbox: ${found.reason}. Shell commands and exec tools run with your permissions; the approval asks stay.`,
    );
  }
  const bwrap = found.bwrap;
  const networkAll = settings.allow.length > 0;
  const grants = new Set<string>();
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
  ];
  const policyFor = (network: boolean, readable: readonly string[]): SandboxPolicy => ({
    writable: [options.workspace],
    readable,
    readOnly: protectedWorkspacePaths(options.workspace),
    hidden,
    network,
  });
  const network = networkAll ? `network on (allowed: ${settings.allow.join(', ')}; not filtered per host)` : 'network off';
  return {
    sandboxed: true,
    description: `workspace-write (bubblewrap), ${network}`,
    note: undefined,
    wrap(request) {
      const allowed = networkAll || (request.callId !== undefined && grants.delete(request.callId));
      const wrapped = wrapCommand({
        argv: request.argv,
        cwd: request.cwd,
        env: request.env,
        policy: policyFor(allowed, request.readable ?? []),
        bwrap,
      });
      return { ...wrapped, network: allowed };
    },
    explain(output, command) {
      return explainRefusal(output, policyFor(command.network, []), { turnOff: TURN_OFF, allowNetwork: ALLOW_NETWORK }, env);
    },
    grantNetwork(callId) {
      grants.add(callId);
    },
  };
}

function unsandboxed(description: string, note: string): Containment {
  return {
    sandboxed: false,
    description,
    note,
    wrap: () => undefined,
    explain: () => [],
    grantNetwork: () => undefined,
  };
}
