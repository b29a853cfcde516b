// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the Claude Code entry syntax under test, not a template.
/**
 * The official conformance suite (`@modelcontextprotocol/conformance` 0.1.13, the newest release
 * that runs on Node 20: 0.1.14 and later import `fs.globSync`, which is Node 22) against our
 * client layer through `conformance/driver.mjs`. The suite's scenario servers listen on every
 * address, so each run happens in a fresh network namespace that has only loopback.
 * Not passed, by design: `elicitation-sep1034-client-defaults` (our client does not offer
 * elicitation, so it is not run) and the `auth/*` suite (no OAuth sign-in in this version; one
 * scenario is run to show the refusal names the fix, a token in `headers`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
const driver = join(dirname(fileURLToPath(import.meta.url)), 'conformance', 'driver.mjs');

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

function runScenario(scenario: string): { code: number | null; output: string; checks: Check[]; stderr: string } {
  const out = mkdtempSync(join(tmpdir(), 'crystal-mcp-conformance-'));
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(driver)}`;
  const script = `ip link set lo up && exec "$NODE" "$SUITE" client --command "$COMMAND" --scenario "$SCENARIO" -o "$OUT"`;
  const run = spawnSync('unshare', ['-rn', 'sh', '-c', script], {
    env: { ...process.env, NODE: process.execPath, SUITE: suite, COMMAND: command, SCENARIO: scenario, OUT: out },
    encoding: 'utf8',
    timeout: 90_000,
  });
  const prefix = `${scenario.split('/').at(-1)}-`;
  const dir = readdirSync(out, { recursive: true, withFileTypes: true }).find(
    (e) => e.isDirectory() && e.name.startsWith(prefix),
  );
  const at = dir ? join(dir.parentPath, dir.name) : undefined;
  const checks = at ? (JSON.parse(readFileSync(join(at, 'checks.json'), 'utf8')) as Check[]) : [];
  const stderr = at ? readFileSync(join(at, 'stderr.txt'), 'utf8') : '';
  return { code: run.status, output: `${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}`, checks, stderr };
}

const verdicts = (checks: Check[]) => checks.filter((c) => c.status !== 'INFO').map((c) => [c.id, c.status]);

describe('MCP-1 the official conformance suite, client scenarios', () => {
  it('MCP-1 conformance initialize: the handshake sends a supported protocol version and our clientInfo', () => {
    const run = runScenario('initialize');
    expect(verdicts(run.checks), run.output).toEqual([['mcp-client-initialization', 'SUCCESS']]);
    expect(run.code, run.output).toBe(0);
  });

  it('MCP-1 conformance tools_call: the client lists and calls the scenario tool through our layer', () => {
    const run = runScenario('tools_call');
    expect(verdicts(run.checks), run.output).toEqual([['tool-add-numbers', 'SUCCESS']]);
    expect(run.code, run.output).toBe(0);
  });

  it('MCP-1 conformance sse-retry: a closed Streamable HTTP stream is resumed by GET with Last-Event-ID', () => {
    const run = runScenario('sse-retry');
    const byId = Object.fromEntries(verdicts(run.checks));
    expect(byId['client-sse-graceful-reconnect'], run.output).toBe('SUCCESS');
    expect(byId['client-sse-last-event-id'], run.output).toBe('SUCCESS');
    // The suite also grades how close the reconnect came to the 500 ms retry field; that is a
    // timing judgement on a shared machine, so this test does not assert on it.
    expect(byId['client-sse-retry-timing']).toBeDefined();
  });

  it('MCP-1 conformance auth/metadata-default does not apply (no OAuth sign-in); the refusal names the fix', () => {
    const run = runScenario('auth/metadata-default');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('Missing Authorization header');
    expect(run.stderr).toContain(
      'The server wants authorization, and this version does not do the OAuth sign-in: put a token in the entry\'s "headers" (for example "Authorization": "Bearer ${TOKEN}") in conformance driver.',
    );
  });
});
