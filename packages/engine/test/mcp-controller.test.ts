import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { EVERYTHING_BIN } from '../../mcp/test/servers.js';
import { type Config, type ControllerEvent, SessionController } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

const everything = { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] };

async function open(replies: FakeReply[], servers: Record<string, unknown> = { everything }) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-mcp-ctl-'));
  controller = await SessionController.open({
    home,
    workspace: home,
    config: fakeConfig(fake.baseUri, { mcpServers: servers }) as Config,
    env: {},
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  await controller.mcp?.manager?.whenSettled();
  return { fake, controller, events, home };
}

function outputs(events: ControllerEvent[]) {
  return events.filter((e) => e.type === 'command-output').map((e) => (e as { output: { kind: string; text: string } }).output);
}

const userTexts = (f: FakeProvider, index: number) =>
  (f.requests[index]?.body as { messages: { role: string; content: string }[] }).messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content);

describe('MCP-6 prompts, resources and /mcp in the session', () => {
  it('MCP-6 /mcp shows each server state, tools, prompt commands and the error of a failed one', async () => {
    const { controller, events, home } = await open([], { everything, broken: { command: 'crystal-no-such-server' } });
    controller.submit('/mcp');
    await controller.whenIdle();
    const [report] = outputs(events);
    expect(report?.kind).toBe('text');
    const lines = report?.text.split('\n') ?? [];
    expect(lines[0]).toBe(`everything  ready  stdio  home (${join(home, 'config.json')})`);
    expect(lines[1]).toMatch(/^ {2}tools: .*\becho\b.*get-tiny-image/);
    expect(lines[2]).toMatch(/^ {2}prompts: .*\/mcp__everything__args-prompt/);
    expect(lines[3]).toMatch(/^ {2}resources: \d+ \(attach with @everything:<uri>\)$/);
    expect(lines).toContain(`broken  failed  stdio  home (${join(home, 'config.json')})`);
    expect(lines).toContain(
      `  error: failed to start: the command "crystal-no-such-server" was not found; install it or fix "command" in ${join(home, 'config.json')}`,
    );
    // The failure was also one note.
    expect(events.filter((e) => e.type === 'note' && e.text.includes('MCP server broken'))).toHaveLength(1);
  });

  it('MCP-6 /mcp__server__prompt args sends the server prompt text as the message', async () => {
    const { controller, fake } = await open([{ text: 'sunny' }]);
    controller.submit('/mcp__everything__args-prompt Paris France');
    await controller.whenIdle();
    expect(userTexts(fake, 0)).toEqual(["What's weather in Paris, France?"]);
  });

  it('MCP-6 a prompt command without its required argument is an error naming it, and nothing is sent', async () => {
    const { controller, events, fake } = await open([{ text: 'never' }]);
    controller.submit('/mcp__everything__args-prompt');
    await controller.whenIdle();
    expect(outputs(events)).toEqual([
      { kind: 'error', text: '/mcp__everything__args-prompt needs city: /mcp__everything__args-prompt <city> [state]' },
    ]);
    expect(fake.requests).toHaveLength(0);
  });

  it('MCP-6 @server:uri attaches the resource text to the message; an unreadable one is an error naming it', async () => {
    const { controller, fake, events } = await open([{ text: 'read it' }]);
    controller.submit('summarise @everything:demo://resource/dynamic/text/3 please');
    await controller.whenIdle();
    const [text] = userTexts(fake, 0);
    expect(text).toMatch(
      /^summarise @everything:demo:\/\/resource\/dynamic\/text\/3 please\n\n<resource server="everything" uri="demo:\/\/resource\/dynamic\/text\/3">\n\[resource demo:\/\/resource\/dynamic\/text\/3\]\nResource 3: This is a plaintext resource created at .+\n<\/resource>$/,
    );
    controller.submit('and @everything:demo://resource/dynamic/text/nope');
    await controller.whenIdle();
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(1);
    expect((errors[0] as { message: string }).message).toMatch(
      /^@everything:demo:\/\/resource\/dynamic\/text\/nope could not be read: /,
    );
    expect(fake.requests).toHaveLength(1);
  });
});
