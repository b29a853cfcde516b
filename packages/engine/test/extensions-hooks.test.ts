import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Config, assembleWorkspaceTools, loadHooks, matches, preToolUse, trustWorkspace } from '../src/index.js';

function places() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-hooks-')));
  const workspace = join(root, 'repo');
  const home = join(root, 'home');
  mkdirSync(join(workspace, '.git'), { recursive: true });
  mkdirSync(join(workspace, '.crystal'), { recursive: true });
  mkdirSync(home, { recursive: true });
  return { workspace, home };
}

const hook = (command: string, matcher = '*') => ({ PreToolUse: [{ matcher, hooks: [{ type: 'command', command }] }] });
const call = (name: string, input: unknown) => ({ id: 'c', name, arguments: JSON.stringify(input), input });

describe('hook loading (HOOK-1)', () => {
  it('HOOK-1 project .crystal/settings.json hooks load only after the workspace is trusted (trust.ts mayRunProjectCode)', async () => {
    const p = places();
    writeFileSync(join(p.workspace, '.crystal', 'settings.json'), JSON.stringify({ hooks: hook('exit 2') }));
    const before = loadHooks(p);
    expect(before.preToolUse).toHaveLength(0);
    expect(before.notes.join('\n')).toContain('is not trusted, so its project code was not loaded: hooks in');
    await trustWorkspace(p.home, p.workspace);
    const after = loadHooks(p);
    expect(after.preToolUse.map((h) => h.command)).toEqual(['exit 2']);
    expect(after.notes).toEqual([]);
  });

  it('HOOK-1 broken settings and hooks that are not commands are named in notes, not thrown', () => {
    const p = places();
    writeFileSync(join(p.workspace, '.crystal', 'settings.json'), '{ not json');
    const loaded = loadHooks({
      ...p,
      hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'prompt', prompt: 'x' }] }, { matcher: 'x' }] },
    });
    expect(loaded.preToolUse).toHaveLength(0);
    const notes = loaded.notes.join('\n');
    expect(notes).toContain(`${join(p.workspace, '.crystal', 'settings.json')} were not loaded: it is not valid JSON`);
    expect(notes).toContain('only {"type": "command", "command": "…"} hooks run');
    expect(notes).toContain('has no "hooks" list');
  });

  it('HOOK-1 matchers: empty and * match all; regex over our name or Claude Code’s, case-insensitive', () => {
    expect(matches('', 'bash')).toBe(true);
    expect(matches('*', 'read')).toBe(true);
    expect(matches('Bash', 'bash')).toBe(true);
    expect(matches('Edit|Write', 'write')).toBe(true);
    expect(matches('Edit|Write', 'bash')).toBe(false);
    expect(matches('LS', 'list')).toBe(true);
    expect(matches('Bas', 'bash')).toBe(false);
  });

  it('HOOK-1 the hook gets the call as JSON on stdin; a non-blocking failure is a note, Claude’s permissionDecision deny blocks', async () => {
    const p = places();
    const notes: string[] = [];
    const context = { workspace: p.workspace, sessionId: () => 's1', onNote: (t: string) => notes.push(t) };
    const signal = new AbortController().signal;
    const echo = loadHooks({ ...p, hooks: hook(`cat > ${join(p.workspace, 'stdin.json')}; exit 1`) }).preToolUse;
    expect(await preToolUse(echo, call('bash', { command: 'ls' }), signal, context)).toBeUndefined();
    const { readFileSync } = await import('node:fs');
    expect(JSON.parse(readFileSync(join(p.workspace, 'stdin.json'), 'utf8'))).toEqual({
      session_id: 's1',
      hook_event_name: 'PreToolUse',
      cwd: p.workspace,
      tool_name: 'Bash',
      crystal_tool_name: 'bash',
      tool_input: { command: 'ls' },
    });
    expect(notes.join('\n')).toContain('failed with exit code 1; the call went on.');
    const deny = loadHooks({
      ...p,
      hooks: hook(
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'`,
      ),
    }).preToolUse;
    expect(await preToolUse(deny, call('read', { path: 'a' }), signal, context)).toEqual({
      block: `Blocked by the PreToolUse hook \`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'\`: nope`,
    });
  });

  it('HOOK-1 PostToolUse gets the result on stdin after a call succeeds; exit 2 appends its reason for the model', async () => {
    const p = places();
    const seen = join(p.workspace, 'post.json');
    const config = {
      hooks: {
        PostToolUse: [
          { matcher: 'Read', hooks: [{ command: `cat > ${seen}; echo 'file was read; do not quote secrets' >&2; exit 2` }] },
        ],
      },
    } as unknown as Config;
    writeFileSync(join(p.workspace, 'a.txt'), 'alpha\n');
    const tools = await assembleWorkspaceTools({ ...p, config, mode: 'work', sessionId: () => 's2', imageInput: () => false });
    const read = tools.tools().find((t) => t.name === 'read');
    const output = await read?.execute({ path: 'a.txt' }, { signal: new AbortController().signal, callId: 'c1' });
    expect(output).toBe(
      `     1|alpha\n\nThe PostToolUse hook \`cat > ${seen}; echo 'file was read; do not quote secrets' >&2; exit 2\` objected: file was read; do not quote secrets`,
    );
    const { readFileSync } = await import('node:fs');
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'Read',
      tool_input: { path: 'a.txt' },
      tool_response: '     1|alpha',
    });
    // A tool the matcher does not name is not wrapped.
    const list = tools.tools().find((t) => t.name === 'list');
    expect(await list?.execute({}, { signal: new AbortController().signal, callId: 'c2' })).not.toContain('PostToolUse');
  });
});
