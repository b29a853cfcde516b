import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

async function setup(replies: FakeReply[], extra: Record<string, unknown> = {}) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  home = tempHome(fakeConfig(fake.baseUri, extra));
  return { fake, home };
}

describe('crystal run against the fake provider', () => {
  it('CLI-2 prints the streamed text and the resume hint in text format', async () => {
    const { home } = await setup([{ text: 'Hello from the fake model.', usage: { input: 5, output: 6 } }]);
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Hello from the fake model\.\nSession (\S+) saved\. Continue it with: crystal run --resume \1\n$/,
    );
  });

  it('CLI-2 --format json prints the final object with stopReason completed and usage', async () => {
    const { home, fake } = await setup([{ text: 'four', usage: { input: 30, output: 1 } }]);
    const result = await runCrystal(['run', '--format', 'json', 'what is 2+2?'], { home: home.path });
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({
      stopReason: 'completed',
      text: 'four',
      usage: { inputTokens: 30, outputTokens: 1 },
      modelCalls: 1,
      toolCalls: [],
      retries: 0,
    });
    expect(existsSync(join(home.path, 'sessions', `${out.sessionId}.json`))).toBe(true);
    const request = fake.requests[0];
    expect(request?.headers.authorization).toBe('Bearer test-key');
    expect((request?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1)).toEqual({
      role: 'user',
      content: 'what is 2+2?',
    });
  });

  it('CLI-2 reads the prompt from standard input when the argument is absent', async () => {
    const { home, fake } = await setup([{ text: 'ok' }]);
    const result = await runCrystal(['run', '--format', 'json'], { home: home.path, input: 'from stdin\n' });
    expect(result.code).toBe(0);
    const messages = (fake.requests[0]?.body as { messages: Array<{ content: string }> }).messages;
    expect(messages.at(-1)?.content).toBe('from stdin\n');
  });

  it('CLI-2 stream-json prints one event per line and ends with the result object', async () => {
    const { home } = await setup([{ reasoning: 'thinking', text: 'a b c', usage: { input: 1, output: 3 } }]);
    const result = await runCrystal(['run', '--format', 'stream-json', '--show-thinking', 'go'], { home: home.path });
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const line of lines)
      expect(line).toMatchObject({ type: expect.any(String), timestamp: expect.any(String), sessionId: expect.any(String) });
    expect(
      lines
        .filter((l) => l.type === 'text')
        .map((l) => l.text)
        .join(''),
    ).toBe('a b c');
    expect(lines.some((l) => l.type === 'reasoning')).toBe(true);
    expect(lines.some((l) => l.type === 'step_finish')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'result', stopReason: 'completed', text: 'a b c' });
  });

  it('CLI-2 a 401 exits 2 with a clear message naming the provider', async () => {
    const { home } = await setup([{ error: { status: 401, message: 'Incorrect API key provided' } }]);
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('fake returned HTTP 401: Incorrect API key provided');
    expect(result.stdout).toContain('[Stopped] failed');
  });

  it('CLI-2 a 429 with retry-after-ms 300 then success completes with one retry in --format json', async () => {
    const { home, fake } = await setup([{ error: { status: 429, headers: { 'retry-after-ms': '300' } } }, { text: 'made it' }]);
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'made it', retries: 1 });
    expect(result.stderr).toContain('retrying model request');
    expect(fake.requests).toHaveLength(2);
  });

  it('CLI-2 a stream cut mid-way is retried and the partial text never reaches stdout', async () => {
    const { home } = await setup([{ text: 'lost words that never finish', dropAfter: 3 }, { text: 'whole answer' }], {
      retry: { baseDelaySeconds: 0.01 },
    });
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith('whole answer\n')).toBe(true);
    expect(result.stdout).not.toContain('lost');
  });

  it('CLI-2 a length finish exits 3 with output_truncated', async () => {
    const { home } = await setup([{ text: 'cut', finish: 'length' }]);
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).stopReason).toBe('output_truncated');
  });

  it('CLI-2 a content filter exits 2', async () => {
    const { home } = await setup([{ text: 'no', finish: 'content_filter' }]);
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).stopReason).toBe('content_filtered');
  });

  it('CLI-2 SIGINT interrupts the turn and exits 5', async () => {
    const { home } = await setup([{ textTokens: 2000, delayMs: 20 }]);
    const { spawn } = await import('node:child_process');
    const { crystalBin } = await import('@crystal/testkit');
    const child = spawn(process.execPath, [crystalBin, 'run', '--format', 'json', 'hi'], {
      env: { PATH: process.env.PATH, CRYSTAL_HOME: home.path, HOME: home.path },
      cwd: tempDir(),
    });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (fake && fake.requests.length > 0) {
          clearInterval(poll);
          setTimeout(() => {
            child.kill('SIGINT');
            resolve();
          }, 100);
        }
      }, 20);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(5);
    expect(JSON.parse(stdout).stopReason).toBe('interrupted');
  });

  it('CLI-2 a prompt that starts with / is refused with exit 1', async () => {
    const { home, fake } = await setup([{ text: 'never' }]);
    const result = await runCrystal(['run', '/btw what?'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Slash commands are interactive only');
    expect(fake.requests).toHaveLength(0);
  });

  it('CLI-2 an unknown option or a bad budget value exits 1 naming the option', async () => {
    const { home } = await setup([{ text: 'never' }]);
    const unknown = await runCrystal(['run', '--frobnicate', 'hi'], { home: home.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--frobnicate');
    const bad = await runCrystal(['run', '--model-calls', '0', 'hi'], { home: home.path });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--model-calls must be an integer from 1');
  });

  it('CLI-6 --provider and --model override the configuration for this process only', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'ok' }] });
    const config = fakeConfig(fake.baseUri);
    (config.providers as Record<string, { models: Record<string, unknown> }>).fake.models['other-model'] = {
      contextWindow: 1000,
    };
    config.provider = 'openai';
    config.model = 'gpt-5.6-sol';
    home = tempHome(config);
    const before = readFileSync(join(home.path, 'config.json'), 'utf8');
    const result = await runCrystal(['run', '-p', 'fake', '-m', 'other-model', '--format', 'json', 'hi'], { home: home.path });
    expect(result.code).toBe(0);
    expect((fake.requests[0]?.body as { model: string }).model).toBe('other-model');
    expect(readFileSync(join(home.path, 'config.json'), 'utf8')).toBe(before);
  });

  it('CONF-5 a malformed config.json exits 1 naming the file and the line', async () => {
    home = tempHome('{\n  "provider": "fake",\n  "model": "m",,\n}\n');
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(home.path, 'config.json')}:3:`);
    expect(result.stderr).toContain('not valid JSON');
    expect(readFileSync(join(home.path, 'config.json'), 'utf8')).toBe('{\n  "provider": "fake",\n  "model": "m",,\n}\n');
  });

  it('CONF-4 a missing API key exits 1 naming the variables to set, and never prints a secret', async () => {
    home = tempHome({ provider: 'openai', model: 'gpt-5.6-sol' });
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No API key for provider 'openai'");
    expect(result.stderr).toContain('OPENAI_API_KEY');
  });

  it('CLI-2 --resume continues a saved session with its transcript', async () => {
    const { home, fake } = await setup([{ text: 'first answer' }, { text: 'second answer' }]);
    const first = JSON.parse((await runCrystal(['run', '--format', 'json', 'first question'], { home: home.path })).stdout);
    const second = await runCrystal(['run', '--format', 'json', '--resume', first.sessionId, 'second question'], {
      home: home.path,
    });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).sessionId).toBe(first.sessionId);
    const messages = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[2]?.content).toBe('first answer');
    const missing = await runCrystal(['run', '--resume', 'nope', 'x'], { home: home.path });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No saved session 'nope'");
  });
});

describe('crystal --version and --help', () => {
  it('CLI-7 answer without touching the network or Home', async () => {
    const homeDir = join(tempDir(), 'never-created');
    for (const args of [['--version'], ['--help'], ['run', '--help']]) {
      const result = await runCrystal(args, { home: homeDir, env: { HOME: homeDir } });
      expect(result.code).toBe(0);
      expect(result.stdout.length).toBeGreaterThan(10);
    }
    expect(existsSync(homeDir)).toBe(false);
    const version = await runCrystal(['--version'], { home: homeDir });
    expect(version.stdout).toMatch(/^Crystal Code \d+\.\d+\.\d+/);
    const help = await runCrystal(['run', '--help'], { home: homeDir });
    expect(help.stdout).toContain('--format FORMAT');
    expect(readdirSync(join(homeDir, '..'))).toEqual([]);
  });
});

describe('crystal run on every wire', () => {
  for (const protocol of ['openai', 'deepseek', 'responses', 'anthropic', 'gemini', 'ollama']) {
    it(`WIRE-1 completes a turn with text, reasoning and usage over the ${protocol} wire`, async () => {
      fake = await FakeProvider.start({
        wire: protocol,
        replies: [{ reasoning: 'hmm', text: `hello over ${protocol}`, usage: { input: 9, output: 4 } }],
      });
      home = tempHome(fakeConfig(fake.baseUriFor(protocol), {}, protocol));
      const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        stopReason: 'completed',
        text: `hello over ${protocol}`,
        usage: { inputTokens: 9, outputTokens: 4 },
      });
      expect(fake.requests).toHaveLength(1);
    });
  }
});

describe('crystal run with tools and approval', () => {
  it('CLI-2 APPR-1 a write that would ask is denied with the normal rejection and exits 4', async () => {
    const { home, fake } = await setup([
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'out.txt', contents: 'hello' } }] },
      { text: 'could not write' },
    ]);
    const ws = tempDir('crystal-ws-');
    const result = await runCrystal(['run', '--format', 'json', '-w', ws, 'write a file'], { home: home.path });
    expect(result.code).toBe(4);
    expect(existsSync(join(ws, 'out.txt'))).toBe(false);
    const toolMessage = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    expect(toolMessage?.content).toContain('The user declined this action. Do not retry the same call.');
    expect(JSON.parse(result.stdout).toolCalls).toEqual([
      { name: 'write', arguments: '{"path":"out.txt","contents":"hello"}', status: 'failure' },
    ]);
  });

  it('BASH-1 --bash-timeout and bashTimeoutSeconds reach the bash tool that crystal run runs', async () => {
    const bashCall = { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'sleep 5' } }] };
    const { home, fake } = await setup([bashCall, { text: 'flag done' }, bashCall, { text: 'config done' }], {
      bashTimeoutSeconds: 600,
    });
    const ws = tempDir('crystal-ws-');
    const byFlag = await runCrystal(['run', '--approval', 'full', '--bash-timeout', '1', '-w', ws, 'slow'], { home: home.path });
    expect(byFlag.code).toBe(0);
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('The command timed out after 1 second');
    home.writeConfig(fakeConfig(fake.baseUri, { bashTimeoutSeconds: 1 }));
    const byConfig = await runCrystal(['run', '--approval', 'full', '-w', ws, 'slow'], { home: home.path });
    expect(byConfig.code).toBe(0);
    expect(JSON.stringify(fake.requests[3]?.body)).toContain('The command timed out after 1 second');
  });

  it('APPR-1 --approval edit lets a workspace write pass; reads always pass', async () => {
    const { home } = await setup([
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'out.txt', contents: 'hello' } }] },
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'out.txt' } }] },
      { text: 'done' },
    ]);
    const ws = tempDir('crystal-ws-');
    const result = await runCrystal(['run', '--format', 'json', '--approval', 'edit', '-w', ws, 'write then read'], {
      home: home.path,
    });
    expect(result.code).toBe(0);
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('hello');
    expect(JSON.parse(result.stdout).toolCalls.map((c: { status: string }) => c.status)).toEqual(['success', 'success']);
  });

  it('CLI-2 the question tool is dismissed in crystal run and the run exits 4', async () => {
    const { home } = await setup([
      {
        toolCalls: [
          {
            id: 'q1',
            name: 'question',
            arguments: { questions: [{ header: 'H', question: 'Which?', options: [{ label: 'A', description: 'a' }] }] },
          },
        ],
      },
      { text: 'ok, no answer' },
    ]);
    const result = await runCrystal(['run', '--format', 'json', 'ask me'], { home: home.path });
    expect(result.code).toBe(4);
  });

  it('TOOLS-1 --plan offers no write, edit or bash to the model', async () => {
    const { home, fake } = await setup([{ text: 'planning' }]);
    await runCrystal(['run', '--plan', 'plan it'], { home: home.path });
    const names = ((fake.requests[0]?.body as { tools: Array<{ function: { name: string } }> }).tools ?? []).map(
      (t) => t.function.name,
    );
    // Reference 5.1: Plan is these plus `skill` (skills are on by default), then `task` (AGENT-1: its child is read-only in Plan).
    expect(names).toEqual(['read', 'list', 'glob', 'grep', 'todowrite', 'todoread', 'question', 'skill', 'task']);
  });
});

describe('interactive-only features in crystal run', () => {
  it('BTW-12 crystal run refuses /btw like every slash command', async () => {
    const { home, fake } = await setup([{ text: 'never' }]);
    const result = await runCrystal(['run', '/btw what is this?'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Slash commands are interactive only');
    expect(fake.requests).toHaveLength(0);
  });

  it('CLI-8 crystal run never asks about workspace trust and never refuses a directory for it', async () => {
    // Trust is switched on, so an interactive session in `fresh` would ask first.
    const { home } = await setup([{ text: 'fine' }], { workspaceTrust: true });
    const fresh = tempDir('crystal-untrusted-');
    const result = await runCrystal(['run', '-w', fresh, 'hello'], { home: home.path });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('fine');
    expect(existsSync(join(home.path, 'trusted.json'))).toBe(false);
  });

  it('CLI-8 SEC-1 crystal run in an untrusted folder never imports its plugin code and prints one note; --trust-workspace loads it', async () => {
    const { home, fake } = await setup([{ text: 'fine' }, { text: 'again' }]);
    const fresh = tempDir('crystal-untrusted-');
    const marker = join(tempDir('crystal-marker-'), 'imported');
    const set = join(fresh, '.crystal', 'tools', 'evil');
    mkdirSync(set, { recursive: true });
    writeFileSync(
      join(set, 'tool.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'imported');\n` +
        `export default { name: 'evil_tool', description: 'x', parameters: { type: 'object' }, execute: () => 'ran' };\n`,
    );
    writeFileSync(join(set, 'tools.json'), JSON.stringify({ runner: 'plugin', module: './tool.mjs' }));
    const toolNames = (i: number) =>
      ((fake.requests[i]?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

    const untrusted = await runCrystal(['run', '--approval', 'full', '-w', fresh, 'hello'], { home: home.path });
    expect(untrusted.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(toolNames(0)).not.toContain('evil_tool');
    const notes = untrusted.stderr.split('\n').filter((line) => line.includes('not trusted'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(set);
    expect(notes[0]).toContain('--trust-workspace');

    const trusted = await runCrystal(['run', '--trust-workspace', '-w', fresh, 'hello'], { home: home.path });
    expect(trusted.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(toolNames(1)).toContain('evil_tool');
    expect(trusted.stderr).not.toContain('not trusted');
    expect(existsSync(join(home.path, 'trusted.json'))).toBe(false);
  });
});

describe('a scripted coding session through crystal run', () => {
  it('TOOLS-2 APPR-1 reads a file, edits it, runs a test command, and the edit is on disk', async () => {
    const ws = tempDir('crystal-ws-');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(ws, 'math.js'), 'export const add = (a, b) => a - b;\n');
    writeFileSync(join(ws, 'test.sh'), 'grep -q "a + b" math.js && echo "1 passed"\n');
    const { home, fake } = await setup([
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'math.js' } }] },
      { toolCalls: [{ id: 'e1', name: 'edit', arguments: { path: 'math.js', old_string: 'a - b', new_string: 'a + b' } }] },
      { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'sh test.sh' } }] },
      { text: 'Fixed add and the test passes.' },
    ]);
    const result = await runCrystal(['run', '--format', 'json', '--approval', 'full', '-w', ws, 'fix add'], { home: home.path });
    expect(result.code).toBe(0);
    expect(readFileSync(join(ws, 'math.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
    const out = JSON.parse(result.stdout);
    expect(out.toolCalls.map((c: { name: string; status: string }) => `${c.name}:${c.status}`)).toEqual([
      'read:success',
      'edit:success',
      'bash:success',
    ]);
    const last = (fake.requests[3]?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    expect(last?.content).toContain('1 passed');
    const readResult = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    expect(readResult?.content).toContain('export const add = (a, b) => a - b;');
  });

  it('APPR-2 with --approval default the edit is denied, the model sees the denial text, and the file is unchanged', async () => {
    const ws = tempDir('crystal-ws-');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(ws, 'math.js'), 'export const add = (a, b) => a - b;\n');
    const { home, fake } = await setup([
      { toolCalls: [{ id: 'e1', name: 'edit', arguments: { path: 'math.js', old_string: 'a - b', new_string: 'a + b' } }] },
      { text: 'I was not allowed to edit.' },
    ]);
    const result = await runCrystal(['run', '--format', 'json', '--approval', 'default', '-w', ws, 'fix add'], {
      home: home.path,
    });
    expect(result.code).toBe(4);
    expect(readFileSync(join(ws, 'math.js'), 'utf8')).toBe('export const add = (a, b) => a - b;\n');
    const denial = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    expect(denial?.content).toContain(
      'The user declined this action. Do not retry the same call. Change the approach or ask the user.',
    );
  });
});

describe('crystal run output details (issue 15)', () => {
  it('CLI-2 text mode shows the changed lines of an edit, not only the diff headers', async () => {
    const ws = tempDir('crystal-ws-');
    writeFileSync(join(ws, 'app.txt'), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
    const { home } = await setup([
      { toolCalls: [{ id: 'e1', name: 'edit', arguments: { path: 'app.txt', old_string: 'four', new_string: 'FOUR' } }] },
      { text: 'edited' },
    ]);
    const result = await runCrystal(['run', '--approval', 'edit', '-w', ws, 'edit it'], { home: home.path });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  Edited app.txt.\n  -four\n  +FOUR\n');
    expect(result.stdout).not.toContain('more lines>');
  });

  it('CLI-2 --format json keeps the rounds of the turn apart in text', async () => {
    const { home } = await setup([
      { text: 'Looking first.', toolCalls: [{ id: 't1', name: 'todoread', arguments: {} }] },
      { text: 'Then the answer.' },
    ]);
    const result = await runCrystal(['run', '--format', 'json', 'go'], { home: home.path });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).text).toBe('Looking first.\n\nThen the answer.');
  });

  it('CLI-2 stream-json tool_use events carry the call arguments', async () => {
    const ws = tempDir('crystal-ws-');
    writeFileSync(join(ws, 'a.txt'), 'alpha\n');
    const { home } = await setup([{ toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'done' }]);
    const result = await runCrystal(['run', '--format', 'stream-json', '-w', ws, 'read'], { home: home.path });
    expect(result.code).toBe(0);
    const uses = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === 'tool_use');
    expect(uses).toEqual([
      expect.objectContaining({ callId: 'r1', name: 'read', arguments: '{"path":"a.txt"}', status: 'success' }),
    ]);
  });

  it('CLI-2 --show-thinking in text mode labels the reasoning and ends it with a newline', async () => {
    const { home } = await setup([{ reasoning: 'weighing the options', text: 'the answer' }]);
    const result = await runCrystal(['run', '--show-thinking', 'think'], { home: home.path });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('[thinking] weighing the options\n');
    expect(result.stdout.startsWith('the answer\n')).toBe(true);
  });
});
