import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assembleWorkspaceTools,
  bashTimeoutMs,
  type Config,
  ConfigError,
  parseConfigText,
  runInProcessGroup,
} from '../src/index.js';

const cwd = mkdtempSync(join(tmpdir(), 'crystal-bash-'));
const never = new AbortController().signal;

/** Processes still alive whose command line contains `marker`. */
function alive(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

const waitGone = async (marker: string): Promise<string[]> => {
  for (let i = 0; i < 50 && alive(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  return alive(marker);
};

describe('bash timer', () => {
  it('BASH-1 omitted is 600 s, null and "unlimited" disable it, a positive integer replaces it', () => {
    expect(bashTimeoutMs({})).toBe(600_000);
    expect(bashTimeoutMs({ bashTimeoutSeconds: null })).toBeNull();
    expect(bashTimeoutMs({ bashTimeoutSeconds: 'unlimited' })).toBeNull();
    expect(bashTimeoutMs({ bashTimeoutSeconds: 42 })).toBe(42_000);
    expect(bashTimeoutMs({ bashTimeoutSeconds: 42 }, 5)).toBe(5000);
    expect(bashTimeoutMs({ bashTimeoutSeconds: 42 }, null)).toBeNull();
  });

  it('BASH-1 a bad bashTimeoutSeconds is a configuration error naming the field', () => {
    for (const bad of [0, -5, 1.5, 2147484, 'soon']) {
      let error: unknown;
      try {
        parseConfigText(JSON.stringify({ bashTimeoutSeconds: bad }), '/h/config.json');
      } catch (e) {
        error = e;
      }
      expect(error, String(bad)).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).keyPath).toBe('bashTimeoutSeconds');
    }
  });

  /** Runs `command` through the bash tool exactly as a session assembles it (config + flag). */
  async function runBash(config: Config, flag: number | null | undefined, command: string): Promise<string> {
    const tools = await assembleWorkspaceTools({
      home: cwd,
      workspace: cwd,
      config,
      mode: 'work',
      bashTimeoutSeconds: flag,
      externalTools: false,
      sessionId: () => 'test',
      imageInput: () => false,
    });
    const bash = tools.tools().find((t) => t.name === 'bash');
    if (!bash) throw new Error('no bash tool');
    try {
      return String(await bash.execute({ command }, { signal: never, callId: 'c1' }));
    } catch (error) {
      return `failed: ${(error as Error).message}`;
    }
  }

  it('BASH-1 bashTimeoutSeconds in config.json reaches the running bash tool and stops a command that runs too long', async () => {
    const out = await runBash({ bashTimeoutSeconds: 1 }, undefined, 'sleep 5');
    expect(out).toMatch(/^failed: The command timed out after 1 seconds?\./);
  });

  it('BASH-1 the --bash-timeout flag replaces the configured timer for the running bash tool', async () => {
    const out = await runBash({ bashTimeoutSeconds: 600 }, 1, 'sleep 5');
    expect(out).toMatch(/^failed: The command timed out after 1 seconds?\./);
    // Unlimited by flag: a short command is not cut, whatever the config says.
    expect(await runBash({ bashTimeoutSeconds: 1 }, null, 'sleep 1.5; echo done')).toBe('exit 0\ndone\n');
  });

  it('BASH-2 a user cancel stops the whole process group, children that ignore SIGTERM included', async () => {
    const marker = `sleep 3${process.pid % 10}.${Date.now() % 100000}`;
    const controller = new AbortController();
    const command = `(trap '' TERM; ${marker}1) & (${marker}2) & echo started; wait`;
    const running = runInProcessGroup(command, { cwd, timeoutMs: null, signal: controller.signal, killGraceMs: 200 });
    for (let i = 0; i < 50 && alive(marker).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(marker).length).toBeGreaterThanOrEqual(2);
    controller.abort();
    const result = await running;
    expect(result.cancelled).toBe(true);
    expect(await waitGone(marker)).toEqual([]);
  });

  it('caps the output and states the cap in the result', async () => {
    const result = await runInProcessGroup('head -c 3000000 /dev/zero | tr "\\0" "x"', {
      cwd,
      timeoutMs: 10_000,
      signal: never,
      maxOutputBytes: 10_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.output.length).toBeLessThan(12_000);
    expect(result.output).toMatch(/bytes of output omitted; the output cap is 10000 bytes/);
    expect(result.truncatedBytes).toBeGreaterThan(2_900_000);
  });
});
