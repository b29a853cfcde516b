/**
 * Says plainly when a failed command ran into the sandbox rather than a bug of its own: the
 * operating system's words (read-only file system, a hidden path, an unreachable network) in the
 * output of a command that exited non-zero become one `[sandbox]` line each, naming what is
 * blocked and how to allow it.
 */
import type { SandboxPolicy } from './policy.js';
import { tempDirs, within } from './wrap.js';

const READ_ONLY = /read-only file system|\bEROFS\b/i;
const MISSING_OR_DENIED = /no such file or directory|permission denied|\bENOENT\b|\bEACCES\b/i;
const NETWORK =
  /connection refused|network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|\bEAI_AGAIN\b|\bENOTFOUND\b|\bECONNREFUSED\b|\bENETUNREACH\b|getaddrinfo/i;

const PROXY_REFUSED =
  /tunnel(?:ing socket could not be established| failed),? (?:statusCode=|response )403|from proxy after CONNECT|\[sandbox\] network access to/i;

export interface RefusalHints {
  /** How the operator turns the sandbox off, e.g. `set "sandbox": "off" in ~/.crystal/config.json`. */
  readonly turnOff: string;
  /** How the operator allows network hosts. */
  readonly allowNetwork: string;
}

export function explainRefusal(
  output: string,
  policy: SandboxPolicy,
  hints: RefusalHints,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const lines: string[] = [];
  const temps = tempDirs(env);
  const privateTemp = temps.some((temp) => hostTempMentioned(output, temp, policy));
  if (READ_ONLY.test(output) || (privateTemp && MISSING_OR_DENIED.test(output))) {
    lines.push(
      `[sandbox] writes outside the workspace are blocked: the sandbox makes everything but the workspace and a private, empty ${temps.join(' and ')} read-only (and .git/hooks, .git/config, .crystal inside the workspace). To run without the sandbox, ${hints.turnOff}.`,
    );
  }
  if (/no space left on device|\bENOSPC\b/i.test(output)) {
    lines.push(
      "[sandbox] the private /tmp lives in memory and is capped; put large files in the workspace (if the workspace's own disk is full, that is not the sandbox).",
    );
  }
  const hidden = policy.hidden.filter((path) => output.includes(path));
  if (hidden.length > 0 && MISSING_OR_DENIED.test(output)) {
    lines.push(
      `[sandbox] ${hidden.join(', ')} ${hidden.length === 1 ? 'is' : 'are'} hidden inside the sandbox: credentials and Crystal's Home are not readable by commands.`,
    );
  }
  if (!policy.network && policy.proxy && PROXY_REFUSED.test(output)) {
    lines.push(
      `[sandbox] the sandbox's network proxy refused a host (not in sandbox.network.allow, or declined). To allow it, ${hints.allowNetwork}.`,
    );
  } else if (!policy.network && NETWORK.test(output)) {
    lines.push(`[sandbox] the network is off inside the sandbox (even 127.0.0.1). To allow it, ${hints.allowNetwork}.`);
  }
  return lines;
}

/** The output names a path under the host's temp that the sandbox does not bind (so it is missing inside). */
function hostTempMentioned(output: string, temp: string, policy: SandboxPolicy): boolean {
  const prefix = temp.endsWith('/') ? temp : `${temp}/`;
  for (let at = output.indexOf(prefix); at !== -1; at = output.indexOf(prefix, at + 1)) {
    const path = /^[^\s:'"]+/.exec(output.slice(at))?.[0] ?? '';
    const bound = [...policy.writable, ...(policy.readable ?? [])].some((dir) => within(path, dir));
    if (!bound) return true;
  }
  return false;
}
