/**
 * Sub-agents (AGENT-1..4, CORE-6) through the real session controller, the real workspace
 * tools and approval policy, and the fake provider over HTTP scripting parent and children.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ControllerEvent,
  INTERRUPTED_CALL_TEXT,
  listChildren,
  loadChild,
  parseConfigText,
  SessionController,
  SessionFiles,
} from '../src/index.js';
import { type Rig, startRig, task, textOf, toolNames, toolResultText, until, type WireBody } from './agents-helpers.js';
import { makeImage } from './images-fixtures.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.controller.close().catch(() => undefined);
  await rig?.fake.close();
  rig = undefined;
});

const finished = (events: readonly ControllerEvent[]) =>
  events.find((e): e is Extract<ControllerEvent, { type: 'turn-finished' }> => e.type === 'turn-finished')?.result;

describe('AGENT-1 the task tool runs a child on a fresh context and returns its final answer', () => {
  it('AGENT-1 CORE-6 the child request carries only its profile prompt and task; the parent gets only the answer', async () => {
    rig = await startRig({
      parent: [
        { text: 'Let me delegate.', toolCalls: [task('t1', 'Find where the answer lives.')] },
        { text: 'The answer is 42.' },
      ],
      children: { 'Find where the answer lives.': [{ text: 'Thinking out loud.' }] },
    });
    const { controller, events } = rig;
    controller.submit('what is the answer?');
    await until(() => finished(events) !== undefined);
    await controller.whenIdle();

    const [first, second] = rig.parentBodies();
    expect(toolNames(first as WireBody)).toContain('task');
    const child = rig.childBodies('Find where the answer lives.');
    expect(child).toHaveLength(1);
    const body = child[0] as WireBody;
    // A fresh context: the profile's system prompt (with the session's <env>), then the task; nothing of the parent.
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(textOf(body.messages[0])).toMatch(/^You are a sub-agent of Crystal Code/);
    expect(textOf(body.messages[0])).toContain('<env>');
    expect(JSON.stringify(body)).not.toContain('what is the answer?');
    // Children never get the task tool (no nesting), the question tool or the parent's todo list.
    expect(toolNames(body)).not.toEqual(expect.arrayContaining(['task']));
    for (const name of ['task', 'question', 'todowrite', 'todoread']) expect(toolNames(body)).not.toContain(name);
    expect(toolNames(body)).toEqual(expect.arrayContaining(['read', 'grep', 'edit', 'bash']));
    // The parent's next request holds the child's final answer as the task result, and nothing else of it.
    expect(toolResultText(second, 't1')).toBe('Thinking out loud.');
    expect(finished(events)).toMatchObject({ stopReason: 'completed', text: 'Let me delegate.\n\nThe answer is 42.' });
    const saved = SessionFiles.load(rig.home, controller.session.id).state;
    expect(saved.context.flatMap((m) => m.content).filter((p) => p.type === 'text' && p.text.includes('Find where'))).toEqual([]);
  });

  it('AGENT-1 a child that uses tools: its reads go through the policy, its result stays in the child', async () => {
    const prompt = 'Read notes.txt and tell me the secret word.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt, 'explore')] }, { text: 'It is swordfish.' }],
      children: {
        [prompt]: [
          { toolCalls: [{ id: 'c1', name: 'read', arguments: { path: 'notes.txt' } }] },
          { text: 'The word is swordfish.' },
        ],
      },
    });
    writeFileSync(join(rig.workspace, 'notes.txt'), 'secret: swordfish\n');
    rig.controller.submit('secret?');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const [c1, c2] = rig.childBodies(prompt);
    // explore: read-only tools only.
    expect(toolNames(c1 as WireBody).sort()).toEqual(['glob', 'grep', 'list', 'read']);
    expect(textOf((c2 as WireBody).messages.find((m) => m.role === 'tool'))).toContain('swordfish');
    const parent = rig.parentBodies()[1] as WireBody;
    expect(toolResultText(parent, 't1')).toBe('The word is swordfish.');
    // The file content reached the parent only through the child's answer.
    expect(JSON.stringify(parent)).not.toContain('secret: swordfish');
  });

  it('AGENT-1 a child returns the images it chose: ones its tools showed it and its answer names', async () => {
    const prompt = 'Look at shot.png and hand it back.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'I see it too.' }],
        children: {
          [prompt]: [
            { toolCalls: [{ id: 'v1', name: 'view_image', arguments: { path: 'shot.png' } }] },
            // [Image #9] was never shown to the child: naming it returns nothing.
            { text: 'Here it is: [Image #1]. Not this one: [Image #9].' },
          ],
        },
      },
      { models: { 'fake-model': { contextWindow: 128000, maxTokens: 4096, imageInput: true } } },
    );
    writeFileSync(join(rig.workspace, 'shot.png'), await makeImage('png', 32, 24));
    rig.controller.submit('show me');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const parent = rig.parentBodies()[1] as WireBody;
    const result = parent.messages.find((m) => m.role === 'tool' && m.tool_call_id === 't1');
    const parts = result?.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    // The answer, then the image as the session's next attachment (its marker, then the typed image).
    expect(parts.map((p) => p.type)).toEqual(['text', 'text', 'image_url']);
    expect(parts[1]?.text).toMatch(/\[Image #2\]$/);
    expect(parts[2]?.image_url?.url).toMatch(/^data:image\/png;base64,/);
    // The parent got one image (the one the child saw and named), as a typed image, and the answer text.
    expect(JSON.stringify(parent)).toContain('Here it is: [Image #1]');
    expect((JSON.stringify(parent).match(/data:image\/png;base64,/g) ?? []).length).toBe(1);
  });

  it('AGENT-1 in Plan the child is read-only: no edit, write or bash, whatever its profile', async () => {
    const prompt = 'Change the file.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt, 'general')] }, { text: 'planned' }],
        children: { [prompt]: [{ text: 'I can only read here.' }] },
      },
      { open: { plan: true } },
    );
    rig.controller.submit('plan it');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const names = toolNames(rig.childBodies(prompt)[0] as WireBody);
    expect(names).toEqual(expect.arrayContaining(['read', 'grep']));
    for (const name of ['edit', 'write', 'bash']) expect(names).not.toContain(name);
    expect(toolNames(rig.parentBodies()[0] as WireBody)).toContain('task');
  });
});

describe('AGENT-2 profiles: built-in general and explore, custom ones from the agent folders', () => {
  it('AGENT-2 custom agents from .crystal/agents, Home agents and .claude/agents: body is the prompt, tools narrowed, later wins', async () => {
    const prompt = 'Review the change.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt, 'reviewer')] }, { text: 'ok' }],
        children: { [prompt]: [{ text: 'Looks right.' }] },
      },
      { models: { 'cheap-model': { contextWindow: 32000, maxTokens: 1024 } } },
    );
    const write = (dir: string, name: string, text: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), text);
    };
    // Home (~/.crystal/agents) is overridden by the project's .crystal/agents for the same name.
    write(join(rig.home, 'agents'), 'reviewer.md', '---\nname: reviewer\ndescription: home version\n---\nHOME PROMPT\n');
    write(
      join(rig.workspace, '.crystal', 'agents'),
      'reviewer.md',
      '---\nname: reviewer\ndescription: Reviews a diff\ntools: Read, Grep\nmodel: fake/cheap-model\n---\nCUSTOM AGENT: you review diffs.\n',
    );
    write(
      join(rig.workspace, '.claude', 'agents'),
      'tester.md',
      '---\nname: tester\ndescription: Runs the tests\n---\nCUSTOM AGENT tester\n',
    );
    write(join(rig.workspace, '.claude', 'agents'), 'broken.md', 'no front matter at all\n');
    rig.controller.submit('review');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const taskSpec = (rig.parentBodies()[0] as WireBody).tools?.find((t) => t.function.name === 'task');
    const names = (taskSpec?.function.parameters as { properties: { subagent_type: { enum: string[] } } }).properties
      .subagent_type.enum;
    expect(names.sort()).toEqual(['explore', 'general', 'reviewer', 'tester']);
    expect(taskSpec?.function.description).toContain('- reviewer: Reviews a diff');
    const child = rig.childBodies(prompt)[0] as WireBody;
    expect(textOf(child.messages[0])).toMatch(/^CUSTOM AGENT: you review diffs\./);
    expect(child.model).toBe('cheap-model');
    expect(toolNames(child).sort()).toEqual(['grep', 'read']);
    expect(toolResultText(rig.parentBodies()[1], 't1')).toBe('Looks right.');
    // A broken file is named once (two parent rounds, one note), with the fix.
    const notes = rig.events.filter((e) => e.type === 'note' && e.text.includes('broken.md'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      text: expect.stringMatching(/broken\.md skipped: its front matter needs "name" and "description"/),
    });
  });

  it('AGENT-2 explore uses agents.explore.model; an unknown agent gets a clear error result', async () => {
    const prompt = 'Look around.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt, 'explore'), task('t2', 'x', 'nosuch')] }, { text: 'ok' }],
        children: { [prompt]: [{ text: 'Seen it.' }] },
      },
      {
        config: { agents: { explore: { model: 'cheap-model' } } },
        models: { 'cheap-model': { contextWindow: 32000, maxTokens: 1024 } },
      },
    );
    rig.controller.submit('explore');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect((rig.childBodies(prompt)[0] as WireBody).model).toBe('cheap-model');
    const parent = rig.parentBodies()[1];
    expect(toolResultText(parent, 't1')).toBe('Seen it.');
    expect(toolResultText(parent, 't2')).toMatch(/^Unknown agent 'nosuch'\. Agents: general, explore\./);
  });
});

describe('AGENT-3 the shared budget and parallel children', () => {
  it('AGENT-3 a parent batch with two task calls runs both children at once, each with its own context', async () => {
    rig = await startRig({
      parent: [{ toolCalls: [task('a', 'Job A'), task('b', 'Job B')] }, { text: 'both done' }],
      children: {
        'Job A': [{ text: 'answer A', delayMs: 5 }],
        'Job B': [{ text: 'answer B', delayMs: 5 }],
      },
    });
    rig.controller.submit('two jobs');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const order = rig.events
      .filter((e) => e.type === 'agent-started' || e.type === 'agent-finished')
      .map((e) => `${e.type === 'agent-started' ? 'start' : 'end'} ${(e as { agent: string }).agent}`);
    // Both children started before either finished.
    expect(order.slice(0, 2).sort()).toEqual(['start main/general#1', 'start main/general#2']);
    expect(rig.childBodies('Job A')).toHaveLength(1);
    expect(JSON.stringify(rig.childBodies('Job A'))).not.toContain('Job B');
    const parent = rig.parentBodies()[1];
    expect(toolResultText(parent, 'a')).toBe('answer A');
    expect(toolResultText(parent, 'b')).toBe('answer B');
  });

  it('AGENT-3 agents.maxParallel caps the children running at once (1: one after the other)', async () => {
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('a', 'Job A'), task('b', 'Job B')] }, { text: 'both done' }],
        children: { 'Job A': [{ text: 'answer A' }], 'Job B': [{ text: 'answer B' }] },
      },
      { config: { agents: { maxParallel: 1 } } },
    );
    rig.controller.submit('two jobs');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const order = rig.events
      .filter((e) => e.type === 'agent-started' || e.type === 'agent-finished')
      .map((e) => `${e.type === 'agent-started' ? 'start' : 'end'} ${(e as { agent: string }).agent}`);
    expect(order).toEqual(['start main/general#1', 'end main/general#1', 'start main/general#2', 'end main/general#2']);
  });

  it("AGENT-3 a child that hits the shared model-call budget stops with the same reason; the parent's result says so", async () => {
    const prompt = 'Dig deep.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'never asked' }],
        children: {
          [prompt]: [
            { text: 'Partial finding.', toolCalls: [{ id: 'c1', name: 'list', arguments: { path: '.' } }] },
            { text: 'never asked either' },
          ],
        },
      },
      { config: { executionBudget: { maximumModelCalls: 2 } } },
    );
    rig.controller.submit('dig');
    await until(() => finished(rig?.events ?? []) !== undefined);
    // Parent call 1 + child call 1 spend the budget: no third request, from anyone.
    expect(rig.fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(2);
    const childEnd = rig.events.find((e) => e.type === 'agent-finished');
    expect(childEnd).toMatchObject({ agent: 'main/general#1', stopReason: 'model_call_limit_reached' });
    expect(finished(rig.events)).toMatchObject({ stopReason: 'model_call_limit_reached' });
    const saved = SessionFiles.load(rig.home, rig.controller.session.id).state;
    const result = saved.context.flatMap((m) => m.content).find((p) => p.type === 'tool-result' && p.callId === 't1');
    expect(result).toMatchObject({ isError: true });
    const text = JSON.stringify(result);
    expect(text).toContain('model_call_limit_reached');
    expect(text).toContain('shared model-call budget');
    expect(text).toContain('Partial finding.');
  });

  it('AGENT-3 the child counts against the tool-call budget: a batch that does not fit stops the child', async () => {
    const prompt = 'Read two files.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'never asked' }],
        children: {
          [prompt]: [
            {
              toolCalls: [
                { id: 'c1', name: 'list', arguments: { path: '.' } },
                { id: 'c2', name: 'list', arguments: { path: '.' } },
              ],
            },
          ],
        },
      },
      // The task call itself is one tool call; the child's batch of two does not fit the other one.
      { config: { executionBudget: { maximumToolCalls: 2 } } },
    );
    rig.controller.submit('read');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(rig.events.find((e) => e.type === 'agent-finished')).toMatchObject({ stopReason: 'tool_call_limit_reached' });
    expect(toolResultText(rig.parentBodies()[1], 't1')).toContain('shared tool-call budget');
  });
});

describe('AGENT-4 lineage, approvals, cancel and kept transcripts', () => {
  it('AGENT-4 child events carry the agent path; the transcript is kept as a linked session and exportable', async () => {
    const prompt = 'List the files.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt, 'explore')] }, { text: 'done' }],
      children: { [prompt]: [{ toolCalls: [{ id: 'c1', name: 'list', arguments: { path: '.' } }] }, { text: 'Two files.' }] },
    });
    rig.controller.submit('list');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const wrapped = rig.events.filter((e) => e.type === 'agent-event');
    expect(new Set(wrapped.map((e) => (e as { agent: string }).agent))).toEqual(new Set(['main/explore#1']));
    const inner = wrapped.map((e) => (e as { event: { type: string } }).event.type);
    expect(inner).toEqual(expect.arrayContaining(['round-started', 'tool-calls', 'tool-results', 'text-delta', 'round-closed']));
    // The child's text never appears as the parent's own text-delta.
    const mainText = rig.events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text);
    expect(mainText.join('')).toBe('done');
    const parentId = rig.controller.session.id;
    const children = listChildren(rig.home, parentId);
    expect(children).toMatchObject([{ path: 'main/explore#1', profile: 'explore', callId: 't1', state: 'completed' }]);
    const { record, file } = loadChild(rig.home, parentId, 'main/explore#1');
    expect(file).toContain(join('sessions', 'children', parentId));
    expect(record.archive.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // Children are not sessions of their own: the list and --continue never pick one.
    expect(readFileSync(file, 'utf8')).toContain('"parentSessionId"');
    expect(() => loadChild(rig?.home as string, parentId, 'main/explore#9')).toThrow(
      /has no child agent main\/explore#9.*Its children: main\/explore#1/,
    );
  });

  it('AGENT-4 a child denied an approval: the card is labelled with its path, the denial reaches the child only', async () => {
    const prompt = 'Write the file.';
    const asked: string[] = [];
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'it was refused' }],
        children: {
          [prompt]: [
            { toolCalls: [{ id: 'c1', name: 'write', arguments: { path: 'out.txt', contents: 'x' } }] },
            { text: 'The operator refused the write.' },
          ],
        },
      },
      {
        approve: (e) => {
          asked.push(`${e.prompt.agent} ${e.prompt.card.tool}`);
          return 'deny';
        },
      },
    );
    rig.controller.submit('write');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(asked).toEqual(['main/general#1 write']);
    expect(existsSync(join(rig.workspace, 'out.txt'))).toBe(false);
    const childSecond = rig.childBodies(prompt)[1] as WireBody;
    expect(textOf(childSecond.messages.find((m) => m.role === 'tool'))).toMatch(/operator denied the 'write' call/);
    expect(toolResultText(rig.parentBodies()[1], 't1')).toBe('The operator refused the write.');
    expect(finished(rig.events)).toMatchObject({ stopReason: 'completed', denied: true });
  });

  it('AGENT-4 AGENT-3 parallel children asking at once get one approval card at a time, each labelled', async () => {
    const write = (id: string, path: string) => ({ toolCalls: [{ id, name: 'write', arguments: { path, contents: path } }] });
    const shown: number[] = [];
    const asked: string[] = [];
    let calls = 0;
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('a', 'Job A'), task('b', 'Job B')] }, { text: 'both asked' }],
        children: { 'Job A': [write('wa', 'a.txt'), { text: 'A done' }], 'Job B': [write('wb', 'b.txt'), { text: 'B done' }] },
      },
      {
        approve: (e) => {
          shown.push(rig?.controller.pendingApprovals.length ?? -1);
          asked.push(e.prompt.agent);
          // Answered only once both children have made their write call and had time to ask.
          const answer = async () => {
            await until(() => calls === 2);
            await new Promise((r) => setTimeout(r, 100));
            rig?.controller.answerApproval(e.prompt.id, 'once');
          };
          void answer();
          return undefined;
        },
      },
    );
    rig.controller.on((e) => {
      if (e.type === 'agent-event' && e.event.type === 'tool-calls') calls++;
    });
    rig.controller.submit('two writes');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(shown).toEqual([1, 1]);
    expect(asked.sort()).toEqual(['main/general#1', 'main/general#2']);
    expect(readFileSync(join(rig.workspace, 'a.txt'), 'utf8')).toBe('a.txt');
    expect(readFileSync(join(rig.workspace, 'b.txt'), 'utf8')).toBe('b.txt');
  });

  it('AGENT-4 cancelling the parent mid-child cancels the child: both stop interrupted, nothing runs after', async () => {
    const prompt = 'Take forever.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'never asked' }],
      children: { [prompt]: [{ text: 'never arrives', stallAfter: 1 }] },
    });
    rig.controller.submit('go');
    await until(() => (rig?.childBodies(prompt).length ?? 0) === 1);
    expect(rig.controller.ctrlC(true)).toBe('interrupted');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(finished(rig.events)).toMatchObject({ stopReason: 'interrupted' });
    expect(rig.events.find((e) => e.type === 'agent-finished')).toMatchObject({ stopReason: 'interrupted' });
    expect(listChildren(rig.home, rig.controller.session.id)).toMatchObject([{ state: 'interrupted' }]);
    expect(rig.parentBodies()).toHaveLength(1);
  });

  it('AGENT-4 CORE-6 an interactive resume after a crash mid-child closes the task call as interrupted and goes on', async () => {
    const prompt = 'Stall.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'went on' }],
      children: { [prompt]: [{ text: 'never arrives', stallAfter: 1 }] },
    });
    rig.controller.submit('go');
    await until(() => (rig?.childBodies(prompt).length ?? 0) === 1);
    // The process "dies" here: the saved session and the child's file are all that is left.
    const id = rig.controller.session.id;
    const second = await SessionController.open({
      home: rig.home,
      workspace: rig.workspace,
      config: rig.config,
      env: {},
      userHome: rig.home,
      resume: id,
    });
    const events: ControllerEvent[] = [];
    second.on((e) => events.push(e));
    await until(() => finished(events) !== undefined);
    await second.whenIdle();
    expect(finished(events)).toMatchObject({ stopReason: 'completed', text: 'went on' });
    expect(rig.childBodies(prompt)).toHaveLength(1);
    const last = rig.parentBodies().at(-1);
    expect(toolResultText(last, 't1')).toBe(INTERRUPTED_CALL_TEXT);
    expect(listChildren(rig.home, id)).toMatchObject([{ path: 'main/general#1', state: 'interrupted' }]);
    await second.close();
  });
});

describe('AGENT-1..4 against hostile input', () => {
  it('AGENT-1 a hostile model: a task call without a prompt, or with a non-string agent, fails clearly and starts no child', async () => {
    rig = await startRig({
      parent: [
        {
          toolCalls: [
            { id: 'x1', name: 'task', arguments: { description: 'nothing' } },
            { id: 'x2', name: 'task', arguments: { prompt: 'p', subagent_type: 7 } },
            { id: 'x3', name: 'task', arguments: '{not json' },
          ],
        },
        { text: 'ok' },
      ],
      children: {},
    });
    rig.controller.submit('go');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const parent = rig.parentBodies()[1];
    expect(toolResultText(parent, 'x1')).toBe('task needs a "prompt": the whole task for the agent.');
    expect(toolResultText(parent, 'x2')).toBe('task "subagent_type" must be an agent name.');
    expect(toolResultText(parent, 'x3')).toMatch(/^The arguments of 'task' are not valid JSON/);
    expect(rig.events.filter((e) => e.type === 'agent-started')).toEqual([]);
  });

  it('AGENT-2 a hostile repository: oversized, badly named and special files are skipped; a profile cannot give a child task or question', async () => {
    const prompt = 'Nest.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt, 'nester')] }, { text: 'ok' }],
      children: { [prompt]: [{ text: 'no nesting here' }] },
    });
    const dir = join(rig.workspace, '.crystal', 'agents');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'big.md'), `---\nname: big\ndescription: big\n---\n${'x'.repeat(300 * 1024)}`);
    writeFileSync(join(dir, 'bad.md'), '---\nname: ../../etc\ndescription: escapes\n---\nhi\n');
    writeFileSync(
      join(dir, 'nester.md'),
      '---\nname: nester\ndescription: tries to nest\ntools: [task, question, read]\n---\nCUSTOM AGENT nester\n',
    );
    execFileSync('mkfifo', [join(dir, 'fifo.md')]);
    rig.controller.submit('go');
    await until(() => finished(rig?.events ?? []) !== undefined);
    const notes = rig.events.filter((e) => e.type === 'note').map((e) => (e as { text: string }).text);
    expect(notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/big\.md skipped: larger than 256 KiB/),
        expect.stringMatching(/bad\.md skipped: "name" must be lower-case letters/),
      ]),
    );
    const enumNames = (
      (rig.parentBodies()[0] as WireBody).tools?.find((t) => t.function.name === 'task')?.function.parameters as {
        properties: { subagent_type: { enum: string[] } };
      }
    ).properties.subagent_type.enum;
    expect(enumNames.sort()).toEqual(['explore', 'general', 'nester']);
    expect(toolNames(rig.childBodies(prompt)[0] as WireBody)).toEqual(['read']);
  });

  it('AGENT-3 a child stalled past the turn duration budget stops duration_limit_reached, and so does the parent', async () => {
    const prompt = 'Hang.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'never asked' }],
        children: { [prompt]: [{ text: 'never arrives', stallAfter: 1 }] },
      },
      { config: { executionBudget: { maximumDurationSeconds: 1 } } },
    );
    rig.controller.submit('go');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(rig.events.find((e) => e.type === 'agent-finished')).toMatchObject({ stopReason: 'duration_limit_reached' });
    expect(finished(rig.events)).toMatchObject({ stopReason: 'duration_limit_reached' });
    expect(rig.parentBodies()).toHaveLength(1);
    const saved = SessionFiles.load(rig.home, rig.controller.session.id).state;
    const result = saved.context.flatMap((m) => m.content).find((p) => p.type === 'tool-result' && p.callId === 't1');
    expect(JSON.stringify(result)).toContain("the turn's shared time budget is spent");
  });

  it('AGENT-4 a child transcript the disk refuses is named once; the child still answers', async () => {
    const prompt = 'Work without a disk.';
    rig = await startRig({
      parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'fine' }],
      children: {
        [prompt]: [{ toolCalls: [{ id: 'c1', name: 'list', arguments: { path: '.' } }] }, { text: 'answered anyway' }],
      },
    });
    // `children` is a file: every save of a child transcript fails (ENOTDIR), as on a broken disk.
    mkdirSync(join(rig.home, 'sessions'), { recursive: true });
    writeFileSync(join(rig.home, 'sessions', 'children'), 'not a folder');
    rig.controller.submit('go');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(toolResultText(rig.parentBodies()[1], 't1')).toBe('answered anyway');
    const notes = rig.events.filter((e) => e.type === 'note' && e.text.includes('was not saved'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ text: expect.stringMatching(/^The transcript of main\/general#1 was not saved: /) });
    expect(finished(rig.events)).toMatchObject({ stopReason: 'completed' });
  });
});

describe('AGENT-1 AGENT-3 configuration', () => {
  it('AGENT-1 agents.enabled false removes the task tool', async () => {
    rig = await startRig({ parent: [{ text: 'no agents here' }], children: {} }, { config: { agents: { enabled: false } } });
    rig.controller.submit('hi');
    await until(() => finished(rig?.events ?? []) !== undefined);
    expect(toolNames(rig.parentBodies()[0] as WireBody)).not.toContain('task');
    expect(toolNames(rig.parentBodies()[0] as WireBody)).toContain('read');
  });

  it('AGENT-3 a bad agents entry is refused with the key and the fix', () => {
    expect(() => parseConfigText('{ "agents": { "maxParallel": 0 } }', '/x/config.json')).toThrow(/agents\.maxParallel/);
    expect(() => parseConfigText('{ "agents": { "explore": { "model": "" } } }', '/x/config.json')).toThrow(
      /agents\.explore\.model/,
    );
    expect(
      parseConfigText('{ "agents": { "maxParallel": 2, "explore": { "model": "fake/m" } } }', '/x/config.json'),
    ).toMatchObject({
      agents: { maxParallel: 2, explore: { model: 'fake/m' } },
    });
  });
});

describe('AGENT-1 a child edit is checkpointed with the parent turn', () => {
  it('AGENT-1 CKPT-1 /undo restores a file a child changed (the task batch is walked before and after)', async () => {
    const prompt = 'Change a.txt.';
    rig = await startRig(
      {
        parent: [{ toolCalls: [task('t1', prompt)] }, { text: 'changed' }],
        children: {
          [prompt]: [
            { toolCalls: [{ id: 'c1', name: 'write', arguments: { path: 'a.txt', contents: 'child\n' } }] },
            { text: 'done' },
          ],
        },
      },
      { workspace: mkdtempSync(join(tmpdir(), 'crystal-agents-ws-')) },
    );
    writeFileSync(join(rig.workspace, 'a.txt'), 'before\n');
    rig.controller.submit('change it');
    await until(() => finished(rig?.events ?? []) !== undefined);
    await rig.controller.whenIdle();
    expect(readFileSync(join(rig.workspace, 'a.txt'), 'utf8')).toBe('child\n');
    const outputs = () => (rig?.events ?? []).filter((e) => e.type === 'command-output');
    rig.controller.submit('/undo');
    await until(() => outputs().length > 0);
    expect(JSON.stringify(outputs().at(-1))).toContain('restored 1 file (a.txt)');
    expect(readFileSync(join(rig.workspace, 'a.txt'), 'utf8')).toBe('before\n');
  });
});
