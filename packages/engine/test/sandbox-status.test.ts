/** SBX-2 and SBX-3 on the engine face: the start-up note (once) and `/status` (real bwrap, real fake provider). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, SessionController } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

async function open(extra: Record<string, unknown> = {}) {
  fake = await FakeProvider.start({ replies: [{ text: 'hi' }], whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-sbx-ctl-'));
  controller = await SessionController.open({
    home,
    workspace: home,
    config: fakeConfig(fake.baseUri, extra) as Config,
    env: {},
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { controller, events };
}

const statusOf = async (c: SessionController, events: ControllerEvent[]): Promise<string> => {
  c.submit('/status');
  for (let i = 0; i < 200 && !events.some((e) => e.type === 'command-output'); i++) await new Promise((r) => setTimeout(r, 10));
  const output = events.find((e) => e.type === 'command-output') as { output: { text: string } } | undefined;
  return output?.output.text ?? '';
};

describe('SBX-2 SBX-3 status and start-up note', () => {
  it('SBX-3 /status says bash and exec tools run sandboxed, with the network state', async () => {
    const { controller, events } = await open();
    expect(await statusOf(controller, events)).toContain(
      'Sandbox    on: workspace-write (bubblewrap), network through the sandbox proxy (allowed: none; other hosts ask)',
    );
    expect(events.filter((e) => e.type === 'note')).toEqual([]);
  });

  it('SBX-2 with the sandbox off the operator is told once at start, and /status says off', async () => {
    const { controller, events } = await open({ sandbox: 'off' });
    expect(await statusOf(controller, events)).toContain('Sandbox    off: turned off in config.json ("sandbox": "off")');
    controller.submit('hello');
    await controller.whenIdle();
    const notes = events.filter((e) => e.type === 'note' && e.text.includes('sandbox'));
    expect(notes).toEqual([
      {
        type: 'note',
        text: 'The OS sandbox is off ("sandbox": "off" in config.json): shell commands and exec tools run with your permissions; the approval asks stay.',
      },
    ]);
  });
});

describe('SBX-1 sandbox config', () => {
  it('SBX-1 the allow list takes host, host:port, *.domain and *; anything else is a config error naming the key', async () => {
    const { loadConfig, hostAllowed } = await import('../src/index.js');
    const { writeFileSync } = await import('node:fs');
    const home = mkdtempSync(join(tmpdir(), 'crystal-sbx-cfg-'));
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ sandbox: { network: { allow: ['registry.npmjs.org', '*.github.com', '127.0.0.1:8080', '*'] } } }),
    );
    expect(loadConfig(home).sandbox).toEqual({
      network: { allow: ['registry.npmjs.org', '*.github.com', '127.0.0.1:8080', '*'] },
    });
    writeFileSync(join(home, 'config.json'), JSON.stringify({ sandbox: { network: { allow: ['https://x.org/'] } } }));
    expect(() => loadConfig(home)).toThrow(/sandbox\.network\.allow\.0: a host name such as "registry\.npmjs\.org"/);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ sandbox: 'on' }));
    expect(() => loadConfig(home)).toThrow(/sandbox: expected "off" or "workspace-write"/);
    expect(hostAllowed(['*.github.com'], 'api.github.com', 443)).toBe(true);
    expect(hostAllowed(['*.github.com'], 'github.com.evil.org', 443)).toBe(false);
    expect(hostAllowed(['*.github.com'], 'evilgithub.com', 443)).toBe(false);
    expect(hostAllowed(['127.0.0.1:8080'], '127.0.0.1', 8080)).toBe(true);
    expect(hostAllowed(['127.0.0.1:8080'], '127.0.0.1', 8081)).toBe(false);
    expect(hostAllowed(['Registry.NPMjs.org'], 'registry.npmjs.org', 443)).toBe(true);
  });
});
