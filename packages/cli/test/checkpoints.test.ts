/**
 * CKPT-1..6 end to end: the built binary, the fake provider over HTTP, real files in a real git
 * repository, real bash, a real kill -9.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  crystalBin,
  FakeProvider,
  type FakeReply,
  fakeConfig,
  runCrystal,
  type TempHome,
  tempDir,
  tempHome,
} from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

const git = (ws: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd: ws,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_OPTIONAL_LOCKS: '0',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });

/** What must never change: status, the index's bytes, every ref and HEAD, and the list of files in .git. */
function gitFacts(ws: string) {
  const files: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path, `${rel}${name}/`);
      else files.push(`${rel}${name}:${st.size}:${st.mtimeMs}`);
    }
  };
  walk(join(ws, '.git'), '');
  return {
    index: readFileSync(join(ws, '.git', 'index')).toString('base64'),
    refs: git(ws, 'for-each-ref'),
    head: readFileSync(join(ws, '.git', 'HEAD'), 'utf8'),
    files,
  };
}

function repo(files: Record<string, string | Buffer>): string {
  const ws = tempDir('crystal-ckpt-ws-');
  git(ws, 'init', '-q');
  for (const [name, body] of Object.entries(files)) writeFileSync(join(ws, name), body);
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'base');
  return ws;
}

async function setup(replies: FakeReply[], extra: Record<string, unknown> = {}) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  home = tempHome(fakeConfig(fake.baseUri, extra));
  return { fake, home: home.path };
}

async function turn(homePath: string, ws: string, text: string, resume?: string): Promise<string> {
  const args = ['run', '--format', 'json', '--approval', 'full', '-w', ws, ...(resume ? ['--resume', resume] : []), text];
  const result = await runCrystal(args, { home: homePath, cwd: ws });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout).sessionId as string;
}

const bash = (command: string): FakeReply => ({ toolCalls: [{ name: 'bash', arguments: { command } }] });
const done: FakeReply = { text: 'done' };
const read = (ws: string, name: string): string | undefined =>
  existsSync(join(ws, name)) ? readFileSync(join(ws, name), 'utf8') : undefined;

describe('checkpoints and rewind', () => {
  it('CKPT-1 CKPT-2 CKPT-5 edit, write, create, bash sed -i and rm are captured and rewound per turn; .git is untouched', async () => {
    const ws = repo({ 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie x\n', 'd.txt': 'delta\n' });
    const { home } = await setup([
      {
        toolCalls: [
          { name: 'edit', arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' } },
          { name: 'write', arguments: { path: 'new.txt', contents: 'created\n' } },
        ],
      },
      done,
      bash("sed -i 's/x/y/' c.txt && rm d.txt && mkdir -p sub && echo made > sub/e.txt"),
      done,
    ]);
    const before = gitFacts(ws);
    const statusBefore = git(ws, 'status', '--porcelain');
    const id = await turn(home, ws, 'first turn');
    expect(read(ws, 'a.txt')).toBe('ALPHA\n');
    await turn(home, ws, 'second turn', id);
    expect(read(ws, 'c.txt')).toBe('charlie y\n');
    expect(read(ws, 'd.txt')).toBeUndefined();

    const listed = await runCrystal(['checkpoints', id, '--json'], { home });
    expect(listed.code).toBe(0);
    const json = JSON.parse(listed.stdout);
    expect(json.turns.map((t: { turn: number; text: string }) => [t.turn, t.text])).toEqual([
      [1, 'first turn'],
      [2, 'second turn'],
    ]);
    const changes = (n: number) =>
      json.turns[n].batches.flatMap((b: { changes: Array<{ path: string; before: string; after: string }> }) => b.changes);
    expect(changes(0)).toEqual(
      expect.arrayContaining([
        { path: 'a.txt', before: 'file', after: 'file' },
        { path: 'new.txt', before: 'absent', after: 'file' },
      ]),
    );
    expect(changes(1)).toEqual(
      expect.arrayContaining([
        { path: 'c.txt', before: 'file', after: 'file' },
        { path: 'd.txt', before: 'file', after: 'absent' },
        { path: 'sub/e.txt', before: 'absent', after: 'file' },
      ]),
    );
    const text = await runCrystal(['checkpoints', id], { home });
    expect(text.stdout).toContain('first turn');

    // Before turn 2: the bash changes go back, turn 1's stay.
    const two = await runCrystal(['rewind', id, '--to', '2', '--code'], { home });
    expect(two.stderr).toBe('');
    expect(two.code).toBe(0);
    expect(read(ws, 'c.txt')).toBe('charlie x\n');
    expect(read(ws, 'd.txt')).toBe('delta\n');
    expect(read(ws, 'sub/e.txt')).toBeUndefined();
    expect(read(ws, 'a.txt')).toBe('ALPHA\n');
    // Before turn 1: everything as committed.
    const one = await runCrystal(['rewind', id, '--to', '1', '--code'], { home });
    expect(one.code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('alpha\n');
    expect(read(ws, 'new.txt')).toBeUndefined();
    expect(git(ws, 'status', '--porcelain')).toBe(statusBefore);
    expect(gitFacts(ws)).toEqual(before);

    // Stored in Home, owner-only, nothing in the workspace.
    const store = join(home, 'checkpoints');
    expect(statSync(store).mode & 0o777).toBe(0o700);
    const packDir = join(store, 'packs');
    expect(statSync(packDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(packDir).length).toBeGreaterThan(0);
    for (const name of readdirSync(packDir)) expect(statSync(join(packDir, name)).mode & 0o777).toBe(0o600);
    expect(readdirSync(ws).sort()).toEqual(['.git', 'a.txt', 'b.txt', 'c.txt', 'd.txt', 'sub']);
  });

  it('CKPT-2 a binary file over the limit is recorded as not restorable and reported, never copied', async () => {
    const big = Buffer.concat([Buffer.from([0, 1, 2]), Buffer.alloc(5000, 7)]);
    const ws = repo({ 'big.bin': big, 'a.txt': 'a\n' });
    const { home } = await setup([bash('printf "\\0changed" > big.bin && echo b > a.txt'), done], {
      checkpoints: { maxBinaryBytes: 1024 },
    });
    const id = await turn(home, ws, 'overwrite the binary');
    const json = JSON.parse((await runCrystal(['checkpoints', id, '--json'], { home })).stdout);
    const change = json.turns[0].batches[0].changes.find((c: { path: string }) => c.path === 'big.bin');
    expect(change).toMatchObject({ before: 'unrestorable', after: 'file' });
    expect(change.reason).toContain('binary');
    const rewound = await runCrystal(['rewind', id, '--to', '1', '--code'], { home });
    expect(rewound.code).toBe(0);
    expect(rewound.stdout).toContain('big.bin: not restorable: a binary file larger than the 1024 byte limit');
    expect(read(ws, 'a.txt')).toBe('a\n');
    expect(readFileSync(join(ws, 'big.bin')).subarray(1).toString()).toBe('changed');
    // No copy of the 5 KB file anywhere in the store: neither as a chunk nor as a manifest.
    const hash = createHash('sha256').update(big).digest('hex');
    expect(existsSync(join(home, 'checkpoints', 'chunks', hash.slice(0, 2), hash))).toBe(false);
    expect(existsSync(join(home, 'checkpoints', 'files', hash.slice(0, 2), `${hash}.json`))).toBe(false);
    const packDir = join(home, 'checkpoints', 'packs');
    const keys = readdirSync(packDir)
      .filter((n) => n.endsWith('.idx'))
      .flatMap((n) => (JSON.parse(readFileSync(join(packDir, n), 'utf8')) as Array<[string]>).map(([key]) => key));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys).not.toContain(`c${hash}`);
    expect(keys).not.toContain(`m${hash}`);
  });

  it('CKPT-4 a file changed since the checkpoint is not overwritten: rewind refuses and lists it; --force overwrites', async () => {
    const ws = repo({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
    const { home } = await setup([bash('echo two > a.txt && echo BEE > b.txt'), done]);
    const id = await turn(home, ws, 'change a and b');
    writeFileSync(join(ws, 'a.txt'), 'the user edited this\n');
    const refused = await runCrystal(['rewind', id, '--to', '1', '--code'], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('a.txt: changed since the checkpoint by someone else');
    expect(refused.stderr).toContain(`crystal rewind ${id} --to 1 --code --force`);
    expect(refused.stderr).not.toContain('b.txt');
    // Nothing was written: not even the file without a conflict.
    expect(read(ws, 'a.txt')).toBe('the user edited this\n');
    expect(read(ws, 'b.txt')).toBe('BEE\n');
    const forced = await runCrystal(['rewind', id, '--to', '1', '--code', '--force'], { home });
    expect(forced.code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('one\n');
    expect(read(ws, 'b.txt')).toBe('bee\n');
  });

  it('CKPT-5 CKPT-3 chat-only rewind: files stay, the model context goes back, the archive keeps everything; resume continues from there', async () => {
    const ws = repo({ 'a.txt': 'a\n' });
    const { home, fake } = await setup([
      bash('echo 1 > a.txt'),
      done,
      bash('echo 2 > a.txt'),
      done,
      { text: 'again' },
      bash('echo 3 > a.txt'),
      done,
    ]);
    const id = await turn(home, ws, 'message one');
    await turn(home, ws, 'message two', id);
    const chat = await runCrystal(['rewind', id, '--to', '2', '--chat'], { home });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('the conversation is back to before message 2');
    expect(read(ws, 'a.txt')).toBe('2\n');
    await turn(home, ws, 'message two, edited', id);
    const sent = JSON.stringify((fake.requests.at(-1)?.body as { messages: unknown[] }).messages);
    expect(sent).toContain('message one');
    expect(sent).toContain('message two, edited');
    expect(sent).not.toContain('"message two"');
    const exported = (await runCrystal(['export', id], { home })).stdout;
    expect(exported).toContain('"message two"');
    expect(exported).toContain('message two, edited');
    // The list shows the live turn 2 and keeps the old one marked rewound.
    const listing = (await runCrystal(['checkpoints', id], { home })).stdout;
    expect(listing).toMatch(/2 .*message two \(rewound\)/);
    expect(listing).toMatch(/2 .*message two, edited\n/);
    // Resume after rewind: a new turn 3 is checkpointed and rewinding both goes back to before it.
    await turn(home, ws, 'message three', id);
    expect(read(ws, 'a.txt')).toBe('3\n');
    const both = await runCrystal(['rewind', id, '--to', '3'], { home });
    expect(both.code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('2\n');
    const json = JSON.parse((await runCrystal(['checkpoints', id, '--json'], { home })).stdout);
    expect(json.turns.filter((t: { superseded: boolean }) => !t.superseded).map((t: { text: string }) => t.text)).toEqual([
      'message one',
      'message two, edited',
    ]);
  });

  it('CKPT-5 code-only and both: code-only keeps the conversation; an unknown turn is a clear error', async () => {
    const ws = repo({ 'a.txt': 'a\n' });
    const { home, fake } = await setup([bash('echo 1 > a.txt'), done, { text: 'next' }]);
    const id = await turn(home, ws, 'message one');
    const code = await runCrystal(['rewind', id, '--to', '1', '--code'], { home });
    expect(code.code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('a\n');
    await turn(home, ws, 'after code rewind', id);
    const sent = JSON.stringify((fake.requests.at(-1)?.body as { messages: unknown[] }).messages);
    expect(sent).toContain('message one');
    const missing = await runCrystal(['rewind', id, '--to', '9'], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^crystal: No checkpoint for turn 9 in session \S+ \(turns with checkpoints: 1\.\.2\)\.\n$/);
    const bad = await runCrystal(['rewind', id], { home });
    expect(bad.stderr).toContain('Usage: crystal rewind ID --to N');
  });

  it('CKPT-5 CKPT-3 crystal rewind ID --redo takes back the last rewind (files and conversation); once more there is nothing to redo; --redo with --to is a usage error', async () => {
    const ws = repo({ 'a.txt': 'a\n' });
    const { home, fake } = await setup([bash('echo 1 > a.txt'), done, bash('echo 2 > a.txt'), done, { text: 'on we go' }]);
    const before = gitFacts(ws);
    const id = await turn(home, ws, 'message one');
    await turn(home, ws, 'message two', id);
    expect((await runCrystal(['rewind', id, '--to', '1'], { home })).code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('a\n');
    const redo = await runCrystal(['rewind', id, '--redo'], { home });
    expect(redo.stderr).toBe('');
    expect(redo.stdout).toBe(
      'Redone: took back the rewind to before message 1; restored 1 file (a.txt); the conversation is back as it was before the rewind.\n',
    );
    expect(redo.code).toBe(0);
    expect(read(ws, 'a.txt')).toBe('2\n');
    const listed = JSON.parse((await runCrystal(['checkpoints', id, '--json'], { home })).stdout);
    expect(listed.rewinds).toMatchObject([{ turn: 1, files: ['a.txt'], chat: true, redone: true }]);
    const again = await runCrystal(['rewind', id, '--redo'], { home });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('crystal: Nothing to redo: no rewind or undo of this session is left to take back.\n');
    const bad = await runCrystal(['rewind', id, '--redo', '--to', '1'], { home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--redo takes back the last rewind; it takes no --to, --code or --chat.');
    await turn(home, ws, 'message three', id);
    const users = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> }).messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(users).toEqual(['message one', 'message two', 'message three']);
    expect(gitFacts(ws).refs).toBe(before.refs);
    expect(gitFacts(ws).index).toBe(before.index);
  });

  it('CKPT-6 a restore killed with -9 leaves every file whole (old or new) and re-running rewind finishes it', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `f${String(i).padStart(3, '0')}.txt`);
    const original = (i: number) => `original ${i}\n`.repeat(2000);
    const ws = repo(Object.fromEntries(names.map((n, i) => [n, original(i)])));
    const { home } = await setup([bash("sed -i 's/original/changed/' f*.txt"), done]);
    const id = await turn(home, ws, 'change them all');
    const child = spawn(process.execPath, [crystalBin, 'rewind', id, '--to', '1', '--code'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, CRYSTAL_HOME: home, CRYSTAL_CHECKPOINT_TEST_HANG_AFTER: '60' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // The restore announces the pause after 60 files, then hangs: killed there, mid-restore.
    await new Promise<void>((resolve) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('restore paused')) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    let restored = 0;
    for (const [i, n] of names.entries()) {
      const body = read(ws, n);
      expect([original(i), original(i).replaceAll('original', 'changed')]).toContain(body);
      if (body === original(i)) restored++;
    }
    expect(restored).toBe(60);
    expect(existsSync(join(home, 'checkpoints', 'journal', `${id}.json`))).toBe(true);
    const again = await runCrystal(['rewind', id, '--to', '1', '--code'], { home });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('An interrupted restore was finished first.');
    for (const [i, n] of names.entries()) expect(read(ws, n)).toBe(original(i));
    expect(readdirSync(ws).filter((n) => n.includes('crystal-restore') || n.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(join(home, 'checkpoints', 'journal', `${id}.json`))).toBe(false);
  });

  it('CKPT-6 CKPT-3 a redo killed with -9 leaves every file whole (old or new) and running --redo again finishes it', async () => {
    const names = Array.from({ length: 150 }, (_, i) => `f${String(i).padStart(3, '0')}.txt`);
    const original = (i: number) => `original ${i}\n`.repeat(2000);
    const changed = (i: number) => original(i).replaceAll('original', 'changed');
    const ws = repo(Object.fromEntries(names.map((n, i) => [n, original(i)])));
    const { home } = await setup([bash("sed -i 's/original/changed/' f*.txt"), done]);
    const id = await turn(home, ws, 'change them all');
    expect((await runCrystal(['rewind', id, '--to', '1', '--code'], { home })).code).toBe(0);
    for (const [i, n] of names.entries()) expect(read(ws, n)).toBe(original(i));
    const child = spawn(process.execPath, [crystalBin, 'rewind', id, '--redo'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, CRYSTAL_HOME: home, CRYSTAL_CHECKPOINT_TEST_HANG_AFTER: '40' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('restore paused')) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    let redone = 0;
    for (const [i, n] of names.entries()) {
      const body = read(ws, n);
      expect([original(i), changed(i)]).toContain(body);
      if (body === changed(i)) redone++;
    }
    expect(redone).toBe(40);
    const again = await runCrystal(['rewind', id, '--redo'], { home });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      'Redone: an interrupted redo of the rewind to before message 1 was finished; restored 150 files',
    );
    for (const [i, n] of names.entries()) expect(read(ws, n)).toBe(changed(i));
    expect(readdirSync(ws).filter((n) => n.includes('crystal-restore') || n.endsWith('.tmp'))).toEqual([]);
    // Taken back once: a third --redo has nothing left.
    const third = await runCrystal(['rewind', id, '--redo'], { home });
    expect(third.code).toBe(1);
    expect(third.stderr).toContain('Nothing to redo');
  });
});
