import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A Claude Code project whose `.claude/settings.json` has a PreToolUse hook that blocks `rm`, copied as is. */
function projectWithRmHook(): string {
  const workspace = realpathSync(tempDir('crystal-hook-project-'));
  mkdirSync(join(workspace, '.git'));
  put(join(workspace, 'victim.txt'), 'keep me\n');
  put(
    join(workspace, '.claude', 'hooks', 'block-rm.sh'),
    [
      '#!/bin/sh',
      'input=$(cat)',
      'case "$input" in',
      '  *\'"tool_name":"Bash"\'*\'"command":"rm \'*) echo "rm is not allowed in this repository; move files to trash/ instead." >&2; exit 2 ;;',
      'esac',
      'exit 0',
      '',
    ].join('\n'),
  );
  put(
    join(workspace, '.claude', 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [{ type: 'command', command: 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/block-rm.sh"', timeout: 10 }],
          },
        ],
      },
    }),
  );
  return workspace;
}

const SCRIPT: FakeReply[] = [
  {
    toolCalls: [
      { id: 'call-rm', name: 'bash', arguments: { command: 'rm victim.txt' } },
      { id: 'call-ok', name: 'bash', arguments: { command: 'echo made > made.txt' } },
    ],
  },
  { text: 'done' },
];

type Body = { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');

describe('PreToolUse hooks in crystal run (HOOK-1)', () => {
  it('HOOK-1 a trusted project PreToolUse hook blocks rm with its own text naming the hook (exit 0, not 4); other calls run', async () => {
    const workspace = projectWithRmHook();
    fake = await FakeProvider.start({ replies: SCRIPT, whenExhausted: 'error' });
    home = tempHome(fakeConfig(fake.baseUri));
    writeFileSync(join(home.path, 'trusted.json'), JSON.stringify({ trusted: [workspace] }));
    const result = await runCrystal(['run', '--approval', 'full', '--format', 'json', 'clean up'], {
      home: home.path,
      cwd: workspace,
    });
    expect(result.stderr).toBe('');
    // HOOK-1, §1.3: a hook's block is no operator prompt denied, so the completed turn exits 0 (not 4).
    expect(result.code).toBe(0);
    expect(readFileSync(join(workspace, 'victim.txt'), 'utf8')).toBe('keep me\n');
    expect(existsSync(join(workspace, 'made.txt'))).toBe(true);
    const tools = (fake.requests[1]?.body as Body).messages.filter((m) => m.role === 'tool');
    // The model reads the hook's own text, naming the hook, never "The operator denied…".
    expect(text(tools.find((m) => m.tool_call_id === 'call-rm')?.content)).toBe(
      'Blocked by the PreToolUse hook `sh "$CLAUDE_PROJECT_DIR/.claude/hooks/block-rm.sh"`: rm is not allowed in this repository; move files to trash/ instead.',
    );
    expect(text(tools.find((m) => m.tool_call_id === 'call-ok')?.content)).toContain('exit 0');
  });

  it('HOOK-1 an untrusted project’s hooks do not run, and a note says why', async () => {
    const workspace = projectWithRmHook();
    fake = await FakeProvider.start({ replies: SCRIPT, whenExhausted: 'error' });
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--approval', 'full', 'clean up'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('is not trusted, so its project code was not loaded: hooks in');
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(false);
  });

  it('HOOK-1 --trust-workspace lets the project hooks run without trusted.json (the shared mayRunProjectCode answer)', async () => {
    const workspace = projectWithRmHook();
    fake = await FakeProvider.start({ replies: SCRIPT, whenExhausted: 'error' });
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--trust-workspace', '--approval', 'full', 'clean up'], {
      home: home.path,
      cwd: workspace,
    });
    expect(result.code).toBe(0);
    expect(readFileSync(join(workspace, 'victim.txt'), 'utf8')).toBe('keep me\n');
  });

  it('HOOK-1 a Home config.json hook runs in any workspace and blocks with a JSON decision', async () => {
    const workspace = realpathSync(tempDir('crystal-hook-plain-'));
    put(join(workspace, 'victim.txt'), 'keep me\n');
    fake = await FakeProvider.start({ replies: SCRIPT, whenExhausted: 'error' });
    home = tempHome(
      fakeConfig(fake.baseUri, {
        hooks: {
          PreToolUse: [
            {
              matcher: 'bash',
              hooks: [
                {
                  type: 'command',
                  command: `grep -q '"command":"rm ' && echo '{"decision":"block","reason":"No rm from Home policy."}' || true`,
                },
              ],
            },
          ],
        },
      }),
    );
    const result = await runCrystal(['run', '--approval', 'full', 'clean up'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(true);
    const tools = (fake.requests[1]?.body as Body).messages.filter((m) => m.role === 'tool');
    const blocked = text(tools.find((m) => m.tool_call_id === 'call-rm')?.content);
    expect(blocked).toMatch(/^Blocked by the PreToolUse hook `grep -q .*`: No rm from Home policy\.$/);
    expect(blocked).not.toContain('The operator denied');
    expect(existsSync(join(workspace, 'made.txt'))).toBe(true);
  });

  it('HOOK-1 a UserPromptSubmit hook that refuses the prompt: crystal run exits 1 naming the hook, and nothing is sent', async () => {
    const workspace = realpathSync(tempDir('crystal-hook-prompt-'));
    fake = await FakeProvider.start({ replies: [{ text: 'never' }], whenExhausted: 'error' });
    home = tempHome(
      fakeConfig(fake.baseUri, {
        hooks: { UserPromptSubmit: [{ hooks: [{ command: "echo 'Ask in #deploys instead.' >&2; exit 2" }] }] },
      }),
    );
    const result = await runCrystal(['run', 'deploy now'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "The UserPromptSubmit hook `echo 'Ask in #deploys instead.' >&2; exit 2` blocked this prompt: Ask in #deploys instead.",
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(fake.requests).toHaveLength(0);
  });

  it('HOOK-1 a Stop hook keeps crystal run going once: its reason is a note, the second answer starts on its own line', async () => {
    const workspace = realpathSync(tempDir('crystal-hook-stop-'));
    fake = await FakeProvider.start({ replies: [{ text: 'first answer' }, { text: 'second answer' }], whenExhausted: 'error' });
    const marker = join(workspace, 'once');
    home = tempHome(
      fakeConfig(fake.baseUri, {
        hooks: {
          Stop: [{ hooks: [{ command: `[ -e ${marker} ] && exit 0; touch ${marker}; echo 'Run the tests.' >&2; exit 2` }] }],
        },
      }),
    );
    const result = await runCrystal(['run', 'go'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith('first answer\nsecond answer\n')).toBe(true);
    expect(result.stderr).toMatch(/The Stop hook `.*` asked you to continue: Run the tests\./);
    expect(fake.requests).toHaveLength(2);
  });

  it('HOOK-1 a hook that hangs is killed at its timeout, reported, and the call goes on', async () => {
    const workspace = realpathSync(tempDir('crystal-hook-hang-'));
    fake = await FakeProvider.start({
      replies: [
        { toolCalls: [{ id: 'call-1', name: 'bash', arguments: { command: 'echo after > after.txt' } }] },
        { text: 'done' },
      ],
      whenExhausted: 'error',
    });
    const pidFile = join(workspace, 'hook.pid');
    home = tempHome(
      fakeConfig(fake.baseUri, {
        hooks: { PreToolUse: [{ matcher: '*', hooks: [{ command: `echo $$ > ${pidFile}; exec sleep 600`, timeout: 1 }] }] },
      }),
    );
    const result = await runCrystal(['run', '--approval', 'full', 'go'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('timed out after 1 seconds and was killed; the call went on.');
    expect(existsSync(join(workspace, 'after.txt'))).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
