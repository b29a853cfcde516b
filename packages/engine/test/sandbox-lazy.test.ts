/**
 * SBX-2 SBX-3 and issue 22 item 4: the bubblewrap probe runs on first use (the first command,
 * or `/status`), not when the session opens. The real bwrap behind a wrapper that logs each run,
 * the fake provider over HTTP, a real bash.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, SessionController } from '../src/index.js';
import { until, bashReply as bash, drive } from './helpers.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
const savedBwrap = process.env.CRYSTAL_BWRAP;
afterEach(async () => {
  if (savedBwrap === undefined) delete process.env.CRYSTAL_BWRAP;
  else process.env.CRYSTAL_BWRAP = savedBwrap;
  await controller?.close().catch(() => undefined);
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

/** A CRYSTAL_BWRAP that logs every run (its arguments, one line) and then runs the real bwrap. */
function loggingBwrap(): { bwrap: string; runs: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-bwrap-log-'));
  const log = join(dir, 'runs.log');
  const bwrap = join(dir, 'bwrap');
  writeFileSync(bwrap, `#!/bin/sh\necho "$*" >> '${log}'\nexec /usr/bin/bwrap "$@"\n`);
  chmodSync(bwrap, 0o755);
  return { bwrap, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

async function open(replies: FakeReply[], bwrap: string) {
  // The workspace tools take the sandbox from the process environment.
  process.env.CRYSTAL_BWRAP = bwrap;
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-sbx-lazy-'));
  const ctl = await SessionController.open({
    home,
    workspace: home,
    config: { ...(fakeConfig(fake.baseUri) as Config), approval: 'full' },
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  controller = ctl;
  const { events, send } = drive(ctl);
  return { ctl, events, send };
}

describe('the sandbox is detected on first use (issue 22 item 4)', () => {
  it('SBX-2 SBX-1 a session that only talks never runs bwrap; its first bash call probes once and runs sandboxed', async () => {
    const logged = loggingBwrap();
    const { events, send } = await open(
      [
        { text: 'just talking' },
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo inside > made.txt; cat made.txt' } }] },
        { text: 'done' },
      ],
      logged.bwrap,
    );
    await send('hello');
    expect(logged.runs()).toEqual([]);
    await send('now run something');
    const runs = logged.runs();
    // The probe (`-- true`) once, then the command itself in the sandbox.
    expect(runs.filter((r) => r.endsWith('-- true'))).toHaveLength(1);
    expect(runs.some((r) => r.includes('--unshare-all') && !r.endsWith('-- true'))).toBe(true);
    const results = events.filter((e) => e.type === 'tool-results') as Array<{
      results: Array<{ content: Array<{ text?: string }>; isError: boolean }>;
    }>;
    expect(results.at(-1)?.results[0]?.isError).toBe(false);
    expect(results.at(-1)?.results[0]?.content[0]?.text).toBe('exit 0\ninside\n');
    expect(events.filter((e) => e.type === 'note' && /sandbox/i.test(e.text))).toEqual([]);
  });

  it('SBX-3 /status probes the sandbox when it is first shown and says it is on', async () => {
    const logged = loggingBwrap();
    const { ctl, events } = await open([{ text: 'hi' }], logged.bwrap);
    expect(logged.runs()).toEqual([]);
    ctl.submit('/status');
    await until(() => events.some((e) => e.type === 'command-output'));
    const output = events.find((e) => e.type === 'command-output') as { output: { text: string } };
    expect(output.output.text).toContain('Sandbox    on: workspace-write (bubblewrap)');
    expect(logged.runs().filter((r) => r.endsWith('-- true'))).toHaveLength(1);
  });

  it('SBX-2 a bwrap that cannot make a sandbox here is told once, at the first command, which still runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-bwrap-broken-'));
    const broken = join(dir, 'bwrap');
    writeFileSync(broken, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    chmodSync(broken, 0o755);
    const { events, send } = await open([{ text: 'talk' }, bash('echo one'), bash('echo two'), { text: 'done' }], broken);
    await send('hello');
    const sandboxNotes = () => events.filter((e) => e.type === 'note' && e.text.startsWith('No OS sandbox'));
    expect(sandboxNotes()).toEqual([]);
    await send('run two commands');
    expect(sandboxNotes()).toEqual([
      {
        type: 'note',
        text: `No OS sandbox: ${broken} cannot create a sandbox here (bwrap: No permissions to create new namespace); user namespaces may be disabled (kernel.unprivileged_userns_clone, or an AppArmor rule for bwrap). Shell commands and exec tools run with your permissions; the approval asks stay.`,
      },
    ]);
    const texts = (
      events.filter((e) => e.type === 'tool-results') as Array<{ results: Array<{ content: Array<{ text?: string }> }> }>
    ).map((e) => e.results[0]?.content[0]?.text);
    expect(texts).toEqual(['exit 0\none\n', 'exit 0\ntwo\n']);
  });
});
