import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, rejectionText, type ToolDefinition, ToolExecutor } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import {
  type ApprovalAnswer,
  type ApprovalMode,
  type ApprovalOutcome,
  type ApprovalRequest,
  type AutoPassCard,
  CANCELLED_TEXT,
  createApprovalPolicy,
  DECLINED_TEXT,
  permissionsPath,
} from '../src/approval/index.js';
import { ConfigError } from '../src/errors.js';
import { openSession } from './helpers.js';

const never = new AbortController().signal;

function dirs(): { home: string; ws: string; base: string } {
  const base = mkdtempSync(join(tmpdir(), 'crystal-policy-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(home);
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), 'x');
  return { home, ws, base };
}

let id = 0;
function call(name: string, input: Record<string, unknown>): ParsedToolCall {
  return { id: `c${++id}`, name, arguments: JSON.stringify(input), input };
}

/** A policy whose operator answers from a script and records every request. */
function harness(
  options: {
    mode?: ApprovalMode;
    plan?: boolean;
    answers?: ApprovalAnswer[];
    unattended?: boolean;
    home?: string;
    ws?: string;
  } = {},
) {
  const d = dirs();
  const home = options.home ?? d.home;
  const ws = options.ws ?? d.ws;
  const asked: ApprovalRequest[] = [];
  const autoPassed: AutoPassCard[] = [];
  const outcomes: ApprovalOutcome[] = [];
  const answers = [...(options.answers ?? [])];
  let plan = options.plan ?? false;
  const policy = createApprovalPolicy({
    mode: options.mode ?? 'default',
    plan: () => plan,
    workspace: ws,
    home,
    ...(options.unattended
      ? {}
      : {
          ask: async (request: ApprovalRequest) => {
            asked.push(request);
            return answers.shift() ?? 'deny';
          },
        }),
    onAutoPass: (card) => autoPassed.push(card),
    onDecided: (outcome) => outcomes.push(outcome),
    externalTool: (name) =>
      name === 'fmt'
        ? { pathArguments: ['file'], automatic: false }
        : name === 'auto'
          ? { pathArguments: ['file'], automatic: true }
          : undefined,
  });
  return { policy, asked, autoPassed, outcomes, home, ws, base: d.base, setPlan: (value: boolean) => (plan = value) };
}

/** Whether each call passes without asking the operator in `mode`. */
async function passesWithoutAsking(mode: ApprovalMode, calls: ParsedToolCall[]): Promise<boolean[]> {
  const h = harness({ mode, answers: [] });
  const out: boolean[] = [];
  for (const c of calls) {
    const before = h.asked.length;
    const decision = await h.policy.decide(c, never);
    out.push(decision.allow && h.asked.length === before);
  }
  return out;
}

const table = () => [
  call('read', { path: 'src/a.ts' }), // workspace read
  call('grep', { pattern: 'x' }), // workspace read
  call('write', { path: 'src/b.ts', contents: 'y' }), // workspace write
  call('edit', { path: 'src/a.ts', old_string: 'x', new_string: 'y' }), // workspace edit
  call('bash', { command: 'npm test' }), // workspace shell
  call('fmt', { file: 'src/a.ts' }), // external tool, workspace
  call('read', { path: '/etc/hostname' }), // outside read
  call('write', { path: '../elsewhere.txt', contents: '' }), // outside write
  call('bash', { command: 'curl https://x.example' }), // network shell
  call('bash', { command: 'chmod 777 x' }), // privileged
  call('bash', { command: 'sudo ls' }), // forbidden
  call('read', { path: '.env' }), // forbidden read
  call('mystery', {}), // unknown: privileged
];

describe('approval policy', () => {
  it('APPR-1 default: workspace reads pass; writes, shell, external tools and outside reads ask', async () => {
    expect(await passesWithoutAsking('default', table())).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('APPR-1 edit: workspace write and edit pass too, nothing else', async () => {
    expect(await passesWithoutAsking('edit', table())).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('APPR-1 full: every workspace-bounded non-privileged call passes; outside, network, privileged and forbidden still ask', async () => {
    expect(await passesWithoutAsking('full', table())).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('APPR-1 an external tool whose author said always passes in every mode, but only inside the workspace', async () => {
    expect(
      await passesWithoutAsking('default', [call('auto', { file: 'src/a.ts' }), call('auto', { file: '/etc/hostname' })]),
    ).toEqual([true, false]);
  });

  it('APPR-1 setMode switches the table for the next call', async () => {
    const h = harness({ mode: 'default', answers: ['deny'] });
    expect((await h.policy.decide(call('write', { path: 'src/x', contents: '' }), never)).allow).toBe(false);
    h.policy.setMode('edit');
    expect(h.policy.mode).toBe('edit');
    expect((await h.policy.decide(call('write', { path: 'src/x', contents: '' }), never)).allow).toBe(true);
  });

  it('APPR-1 plan is a catalog, not a mode: the policy still rejects edit, write and bash in Plan, whatever the mode', async () => {
    const h = harness({ mode: 'full', plan: true });
    for (const name of ['edit', 'write', 'bash']) {
      const decision = await h.policy.decide(call(name, { path: 'src/a.ts', command: 'ls' }), never);
      expect(decision).toEqual({ allow: false, reason: `Plan mode does not allow ${name}.` });
    }
    expect(h.asked).toHaveLength(0);
    expect((await h.policy.decide(call('read', { path: 'src/a.ts' }), never)).allow).toBe(true);
    h.setPlan(false);
    expect((await h.policy.decide(call('bash', { command: 'ls' }), never)).allow).toBe(true);
  });

  it('APPR-1 auto-passes publish a card with Status, Reason, Risk, Authority and the summary', async () => {
    const h = harness({ mode: 'edit' });
    await h.policy.decide(call('edit', { path: 'src/a.ts', old_string: 'x', new_string: 'y' }), never);
    expect(h.autoPassed).toEqual([
      {
        status: 'Approved',
        reason: 'Policy',
        tool: 'edit',
        risk: 'Write',
        authority: 'Workspace',
        summary: 'Edit workspace file',
        subject: 'src/a.ts',
        preview: ['-x', '+y'],
      },
    ]);
  });

  it('APPR-3 the ask carries the call, its classification and the card; edit and write carry a preview', async () => {
    const h = harness({ answers: ['once', 'once', 'once'] });
    const w = call('write', { path: 'src/b.ts', contents: 'one\ntwo' });
    await h.policy.decide(w, never);
    await h.policy.decide(call('bash', { command: 'curl https://x.example' }), never);
    await h.policy.decide(call('fmt', { file: '../x' }), never);
    expect(h.asked[0]).toMatchObject({
      call: w,
      classification: { risk: 'write', authority: 'workspace', summary: 'Write workspace file' },
      card: {
        tool: 'write',
        risk: 'Write',
        authority: 'Workspace',
        subject: 'src/b.ts',
        preview: ['@@ -0,0 +1,2 @@', '+ 1 │ one', '+ 2 │ two', '\\ No newline at end of file'],
      },
      choices: ['once', 'session', 'always', 'deny'],
    });
    expect(h.asked[1]?.classification).toEqual({ risk: 'write', authority: 'network', summary: 'Network shell command' });
    expect(h.asked[1]?.card.preview).toBeUndefined();
    expect(h.asked[2]?.classification).toMatchObject({ risk: 'write', authority: 'outside_workspace' });
  });

  it('APPR-2 Once allows this call only; the same call asks again', async () => {
    const h = harness({ answers: ['once', 'deny'] });
    const c = () => call('bash', { command: 'npm test' });
    expect((await h.policy.decide(c(), never)).allow).toBe(true);
    expect((await h.policy.decide(c(), never)).allow).toBe(false);
    expect(h.asked).toHaveLength(2);
  });

  it('APPR-2 Session grants the same tool and fingerprint for this policy only, never written to disk', async () => {
    const h = harness({ answers: ['session'] });
    expect((await h.policy.decide(call('bash', { command: 'npm test' }), never)).allow).toBe(true);
    expect((await h.policy.decide(call('bash', { command: 'npm test' }), never)).allow).toBe(true);
    expect(h.asked).toHaveLength(1);
    expect(h.autoPassed.at(-1)).toMatchObject({ reason: 'Grant', summary: 'Workspace shell command' });
    // Another command is another fingerprint.
    expect((await h.policy.decide(call('bash', { command: 'npm run build' }), never)).allow).toBe(false);
    expect(() => statSync(permissionsPath(h.home))).toThrow();
    const fresh = harness({ home: h.home, ws: h.ws });
    expect((await fresh.policy.decide(call('bash', { command: 'npm test' }), never)).allow).toBe(false);
  });

  it('APPR-2 Always lands in permissions.json (0600) and survives a new policy instance', async () => {
    const h = harness({ answers: ['always'] });
    expect((await h.policy.decide(call('write', { path: 'src\\b.ts', contents: 'x' }), never)).allow).toBe(true);
    const file = permissionsPath(h.home);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      grants: [{ workspace: h.ws, tool: 'write', fingerprint: 'src/b.ts' }],
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const fresh = harness({ home: h.home, ws: h.ws });
    expect((await fresh.policy.decide(call('write', { path: 'src/b.ts', contents: 'y' }), never)).allow).toBe(true);
    expect(fresh.asked).toHaveLength(0);
    expect(fresh.autoPassed[0]).toMatchObject({ reason: 'Grant' });
    // The grant is per workspace.
    const other = harness({ home: h.home });
    expect((await other.policy.decide(call('write', { path: 'src/b.ts', contents: 'y' }), never)).allow).toBe(false);
  });

  it('APPR-2 an Always grant that cannot be saved still holds for the session, with a note, and the file is left alone', async () => {
    const d = dirs();
    const notes: string[] = [];
    const policy = createApprovalPolicy({
      mode: 'default',
      plan: () => false,
      workspace: d.ws,
      home: d.home,
      ask: async () => 'always',
      onNote: (text) => notes.push(text),
    });
    writeFileSync(permissionsPath(d.home), '{"grants": ');
    expect((await policy.decide(call('bash', { command: 'make' }), never)).allow).toBe(true);
    expect(notes[0]).toContain(permissionsPath(d.home));
    expect(notes[0]).toContain('holds for this session only');
    expect(readFileSync(permissionsPath(d.home), 'utf8')).toBe('{"grants": ');
    expect((await policy.decide(call('bash', { command: 'make' }), never)).allow).toBe(true);
  });

  it('APPR-2 Deny becomes the model-visible rejection', async () => {
    const h = harness({ answers: ['deny'] });
    expect(await h.policy.decide(call('bash', { command: 'npm test' }), never)).toEqual({ allow: false, reason: DECLINED_TEXT });
    expect(DECLINED_TEXT).toBe('The user declined this action. Do not retry the same call. Change the approach or ask the user.');
    expect(h.outcomes.at(-1)).toMatchObject({ allowed: false, by: 'deny' });
  });

  it('APPR-2 without an operator (crystal run) every ask is a deny with the normal rejection', async () => {
    const h = harness({ unattended: true });
    expect(await h.policy.decide(call('bash', { command: 'npm test' }), never)).toEqual({ allow: false, reason: DECLINED_TEXT });
    expect(h.outcomes.at(-1)).toMatchObject({ allowed: false, by: 'unattended' });
    expect((await h.policy.decide(call('read', { path: 'src/a.ts' }), never)).allow).toBe(true);
  });

  it('APPR-2 a Forbidden call is only ever granted Once: Session and Always count as Once', async () => {
    const h = harness({ answers: ['always', 'session', 'deny', 'deny'] });
    const c = () => call('bash', { command: 'sudo make install' });
    expect((await h.policy.decide(c(), never)).allow).toBe(true);
    expect(h.asked[0]?.choices).toEqual(['once', 'deny']);
    expect((await h.policy.decide(c(), never)).allow).toBe(true);
    expect((await h.policy.decide(c(), never)).allow).toBe(false);
    expect(h.asked).toHaveLength(3);
    expect(() => statSync(permissionsPath(h.home))).toThrow();
    expect(h.outcomes.slice(0, 2).map((o) => o.by)).toEqual(['once', 'once']);
  });

  it('APPR-2 a grant never covers a call that is Forbidden now', async () => {
    const h = harness({ answers: ['session', 'deny'] });
    expect((await h.policy.decide(call('write', { path: 'cfg', contents: '' }), never)).allow).toBe(true);
    expect((await h.policy.decide(call('write', { path: 'cfg', contents: '' }), never)).allow).toBe(true);
    expect(h.asked).toHaveLength(1);
    // The same fingerprint `cfg` now leads into a .ssh directory: Forbidden, so the grant does not apply.
    mkdirSync(join(h.base, '.ssh'));
    writeFileSync(join(h.base, '.ssh', 'config'), '');
    symlinkSync(join(h.base, '.ssh', 'config'), join(h.ws, 'cfg'));
    expect(await h.policy.decide(call('write', { path: 'cfg', contents: '' }), never)).toEqual({
      allow: false,
      reason: DECLINED_TEXT,
    });
    expect(h.asked).toHaveLength(2);
    expect(h.asked[1]?.classification.risk).toBe('forbidden');
  });

  it('APPR-2 a cancel while the operator decides declines the call', async () => {
    const d = dirs();
    const controller = new AbortController();
    const policy = createApprovalPolicy({
      mode: 'default',
      plan: () => false,
      workspace: d.ws,
      home: d.home,
      ask: (request) =>
        new Promise(() => {
          expect(request.signal).toBe(controller.signal);
          controller.abort();
        }),
    });
    expect(await policy.decide(call('bash', { command: 'ls' }), controller.signal)).toEqual({
      allow: false,
      reason: CANCELLED_TEXT,
    });
  });

  it('APPR-2 a corrupt permissions.json is an error naming the file and is never overwritten', async () => {
    const d = dirs();
    const file = permissionsPath(d.home);
    writeFileSync(file, '{"grants": [ {"workspace": 1} ]');
    let error: unknown;
    try {
      createApprovalPolicy({ mode: 'default', plan: () => false, workspace: d.ws, home: d.home });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/not valid JSON/);
    writeFileSync(file, '{"grants": [ {"workspace": 1, "tool": "bash", "fingerprint": "ls"} ]}');
    expect(() => createApprovalPolicy({ mode: 'default', plan: () => false, workspace: d.ws, home: d.home })).toThrow(
      /permissions\.json:1: grants\.0\.workspace: expected string/,
    );
    expect(readFileSync(file, 'utf8')).toBe('{"grants": [ {"workspace": 1, "tool": "bash", "fingerprint": "ls"} ]}');
  });

  it('CORE-5 plugged into the ToolExecutor, a denied call never runs and its result is written by the framework', async () => {
    const h = harness({ answers: ['deny', 'once'] });
    const ran: string[] = [];
    const bash: ToolDefinition = {
      name: 'bash',
      description: 'Run a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      execute: async (input) => {
        ran.push((input as { command: string }).command);
        return 'tool output';
      },
    };
    const executor = new ToolExecutor({ tools: [bash], policy: h.policy });
    const denied = call('bash', { command: 'make deploy' });
    const allowed = call('bash', { command: 'make test' });
    const results = await executor.runBatch([denied, allowed], never);
    expect(ran).toEqual(['make test']);
    expect(results[0]).toEqual({
      type: 'tool-result',
      callId: denied.id,
      name: 'bash',
      content: [{ type: 'text', text: rejectionText(denied, DECLINED_TEXT) }],
      isError: true,
    });
    expect(results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'tool output' }] });
  });

  it('CORE-5 a Plan rejection is also the framework result and the tool never runs', async () => {
    const h = harness({ mode: 'full', plan: true });
    let ran = false;
    const write: ToolDefinition = {
      name: 'write',
      description: 'Write a file',
      parameters: { type: 'object' },
      execute: async () => {
        ran = true;
        return 'written';
      },
    };
    const c = call('write', { path: 'src/x', contents: '' });
    const [result] = await new ToolExecutor({ tools: [write], policy: h.policy }).runBatch([c], never);
    expect(ran).toBe(false);
    expect(result?.content).toEqual([{ type: 'text', text: rejectionText(c, 'Plan mode does not allow write.') }]);
  });

  it('CORE-5 in a real turn, crystal run (no operator) gets the framework rejection back as the tool result and the tool never runs', async () => {
    const d = dirs();
    const ran: string[] = [];
    const bash: ToolDefinition = {
      name: 'bash',
      description: 'Run a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      execute: async (input) => {
        ran.push((input as { command: string }).command);
        return 'ran';
      },
    };
    const policy = createApprovalPolicy({ mode: 'default', plan: () => false, workspace: d.ws, home: d.home });
    const h = await openSession(
      [{ toolCalls: [{ id: 'c1', name: 'bash', arguments: { command: 'rm -rf build' } }] }, { text: 'understood' }],
      { tools: [bash], policy },
    );
    try {
      const result = await h.session.send('clean up');
      expect(ran).toEqual([]);
      expect(result.denied).toBe(true);
      const second = h.fake.requests[1]?.body as { messages: Array<Record<string, unknown>> };
      const denied: ParsedToolCall = { id: 'c1', name: 'bash', arguments: '', input: {} };
      expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: rejectionText(denied, DECLINED_TEXT) });
    } finally {
      await h.close();
    }
  });
});
