/** CKPT-3 / CKPT-4: `/redo` takes back the last rewind or undo, through the controller, on real files and a real bash. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, SessionController } from '../src/index.js';
import { until, bashReply as bash } from './helpers.js';

const temp = (p: string) => mkdtempSync(join(tmpdir(), p));
let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close();
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

describe('/redo', () => {
  it('CKPT-3 CKPT-4 /redo takes back /undo and /rewind (files and conversation, last first); a file changed since is asked about; a forced rewind keeps what it overwrote; a new message ends redo', async () => {
    const home = temp('crystal-redo-home-');
    const ws = temp('crystal-redo-ws-');
    const file = join(ws, 'a.txt');
    writeFileSync(file, 'zero\n');
    fake = await FakeProvider.start({
      replies: [
        bash('echo one > a.txt'),
        { text: 'ok' },
        bash('echo two > a.txt'),
        { text: 'ok' },
        { text: 'third ok' },
        { text: 'fourth ok' },
      ],
      whenExhausted: 'error',
    });
    const ctl = await SessionController.open({
      home,
      workspace: ws,
      config: { ...(fakeConfig(fake.baseUri) as Config), approval: 'full' },
      env: {},
    });
    controller = ctl;
    const events: ControllerEvent[] = [];
    ctl.on((e) => void events.push(e));
    const finished = () => events.filter((e) => e.type === 'turn-finished').length;
    const outputs = () =>
      events.filter((e) => e.type === 'command-output').map((e) => (e as { output: { kind: string; text: string } }).output);
    const command = async (text: string) => {
      const n = outputs().length;
      ctl.submit(text);
      await until(() => outputs().length > n);
      return outputs().at(-1) as { kind: string; text: string };
    };
    const read = () => readFileSync(file, 'utf8');
    const lastUsers = () =>
      (fake?.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> }).messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content);

    ctl.submit('first message');
    await until(() => finished() === 1);
    ctl.submit('second message');
    await until(() => finished() === 2);
    expect(read()).toBe('two\n');

    expect((await command('/redo')).text).toContain('Nothing to redo: no rewind or undo of this session is left to take back.');
    await command('/undo');
    expect(read()).toBe('one\n');
    const redo = await command('/redo');
    expect(redo.text).toBe('Redone: took back the rewind to before message 2; restored 1 file (a.txt).');
    expect(read()).toBe('two\n');
    expect(events.filter((e) => e.type === 'checkpoint-restored').at(-1)).toMatchObject({ redo: true, turn: 2, code: true });
    expect((await command('/redo')).text).toContain('Nothing to redo');

    // Two undos are taken back last first.
    await command('/undo');
    await command('/undo');
    expect(read()).toBe('zero\n');
    await command('/redo');
    expect(read()).toBe('one\n');
    await command('/redo');
    expect(read()).toBe('two\n');
    // After a redo, /undo undoes that turn again.
    expect((await command('/undo')).text).toContain('restored 1 file (a.txt)');
    expect(read()).toBe('one\n');
    await command('/redo');

    // Files and conversation: the rewind to before message 1 is taken back whole.
    await command('/rewind 1 both');
    expect(read()).toBe('zero\n');
    expect((await ctl.session.checkpoints?.entries())?.map((e) => e.turn)).toEqual([]);
    const both = await command('/redo');
    expect(both.text).toBe(
      'Redone: took back the rewind to before message 1; restored 1 file (a.txt); the conversation is back as it was before the rewind.',
    );
    expect(read()).toBe('two\n');
    expect((await ctl.session.checkpoints?.entries())?.map((e) => e.turn)).toEqual([1, 2]);
    ctl.submit('third message');
    await until(() => finished() === 3);
    expect(lastUsers()).toEqual(['first message', 'second message', 'third message']);

    // CKPT-4: a file changed since the rewind is not overwritten silently.
    await command('/rewind 2 code');
    expect(read()).toBe('one\n');
    writeFileSync(file, 'mine\n');
    const refused = await command('/redo');
    expect(refused.kind).toBe('error');
    expect(refused.text).toContain('a.txt: changed since the rewind by someone else');
    expect(refused.text).toContain('To overwrite it: /redo force');
    expect(events.filter((e) => e.type === 'rewind-conflict').at(-1)).toMatchObject({ force: '/redo force' });
    expect(read()).toBe('mine\n');
    await command('/redo force');
    expect(read()).toBe('two\n');

    // A forced rewind over someone else's change keeps that change for /redo.
    writeFileSync(file, 'theirs\n');
    expect((await command('/rewind 2 code')).kind).toBe('error');
    await command('/rewind 2 code force');
    expect(read()).toBe('one\n');
    await command('/redo');
    expect(read()).toBe('theirs\n');

    // Once a message is sent after a rewind, there is nothing to redo.
    await command('/undo force');
    expect(read()).toBe('one\n');
    ctl.submit('fourth message');
    await until(() => finished() === 4);
    expect((await command('/redo')).text).toBe(
      'Nothing to redo: a message was sent after the last rewind, so the conversation went on from there.',
    );
    expect(read()).toBe('one\n');
  });
});
