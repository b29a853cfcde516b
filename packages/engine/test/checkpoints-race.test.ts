/**
 * SEC-4 for checkpoints: a rewind or a `/redo` writes, creates folders and removes files in the
 * workspace; a folder on the way swapped for a link out of the workspace mid-restore must not
 * make it create a folder, write a file or remove a file outside. The stat pass that lists
 * changed folders must not take in a name from outside either. A real process does the swapping.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpoints, sha256 } from '../src/index.js';
import { killRacer, startRacer, stopRacer } from './racer.js';

afterEach(killRacer);

/** Every path under `dir` with its content ('/' for a folder). */
function snapshot(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      out[`${rel}/`] = '/';
      Object.assign(out, snapshot(join(dir, entry.name), `${rel}/`));
    } else out[rel] = readFileSync(join(dir, entry.name), 'utf8');
  }
  return out;
}

function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec4-ckpt-')));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'd', 'old1', 'old2'), { recursive: true });
  writeFileSync(join(ws, 'd', 'f.txt'), 'before\n');
  writeFileSync(join(ws, 'd', 'old1', 'old2', 'o.txt'), 'old\n');
  // The outside folder holds the names a restore writes and removes: a raced write changes one,
  // a raced removal deletes one, a raced mkdir adds `old1/`.
  mkdirSync(outside);
  writeFileSync(join(outside, 'f.txt'), 'OUTSIDE f\n');
  writeFileSync(join(outside, 'made.txt'), 'OUTSIDE made\n');
  writeFileSync(join(outside, 'o.txt'), 'OUTSIDE o\n');
  return { base, home, ws, outside };
}

const bash = { id: 'c1', name: 'bash', arguments: '{}', input: {} };

describe('a restore writes and removes only inside the checked folders (SEC-4)', () => {
  it('SEC-4 300 rewinds and 300 redos raced by a process swapping a folder for a link out: no folder made, no file written or removed outside', async () => {
    const { home, ws, outside } = fixture();
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'race-session' });
    await checkpoints.beforeTurn(1, 'turn', []);
    await checkpoints.settled();
    // The agent's batch: one file changed, one made, a folder with a file in it removed. A
    // rewind writes f.txt, removes made.txt and makes old1/old2 again; a redo does the reverse.
    await checkpoints.aroundBatch(1, [bash], async () => {
      writeFileSync(join(ws, 'd', 'f.txt'), 'after\n');
      writeFileSync(join(ws, 'd', 'made.txt'), 'made\n');
      rmSync(join(ws, 'd', 'old1'), { recursive: true });
      return [];
    });
    await checkpoints.settled();
    const before = snapshot(outside);
    await startRacer(ws, outside);
    let restored = 0;
    for (let i = 0; i < 300; i++) {
      const rewound = await checkpoints.rewind({ to: 1, code: true, chat: false, force: true });
      restored += rewound.restored.length;
      const redone = await checkpoints.redo({ force: true });
      if (typeof redone !== 'string') restored += redone.restored.length;
    }
    await stopRacer(ws);
    expect(snapshot(outside), `${restored} files restored while racing`).toEqual(before);
    // The race over, a rewind restores every file, folders included.
    const result = await checkpoints.rewind({ to: 1, code: true, chat: false, force: true });
    expect(result.notRestorable).toEqual([]);
    expect(readFileSync(join(ws, 'd', 'f.txt'), 'utf8')).toBe('before\n');
    expect(readFileSync(join(ws, 'd', 'old1', 'old2', 'o.txt'), 'utf8')).toBe('old\n');
    expect(existsSync(join(ws, 'd', 'made.txt'))).toBe(false);
    expect(readdirSync(join(ws, 'd')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(restored).toBeGreaterThan(0);
  });

  it('SEC-4 400 stat passes raced the same way: no name from outside is taken into the index', async () => {
    const { home, ws, outside } = fixture();
    writeFileSync(join(outside, 'OUTSIDE-ONLY.txt'), 'secret\n');
    mkdirSync(join(outside, 'OUTSIDE-DIR'));
    writeFileSync(join(outside, 'OUTSIDE-DIR', 'OUTSIDE-NESTED.txt'), 'secret\n');
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'scan-session' });
    const tracker = checkpoints.tracker;
    await tracker.scanAll();
    expect(tracker.hasFullScan).toBe(true);
    await startRacer(ws, outside);
    const outsideNames: string[] = [];
    let passes = 0;
    for (let i = 0; i < 400; i++) {
      const changes = await tracker.scanAll();
      for (const change of changes) if (change.path.includes('OUTSIDE')) outsideNames.push(change.path);
      passes++;
    }
    await stopRacer(ws);
    expect(outsideNames, `${passes} passes, ${tracker.counts.statPasses} stat passes`).toEqual([]);
    expect(tracker.counts.statPasses).toBeGreaterThan(0);
    expect(JSON.stringify(tracker.toJson())).not.toContain('OUTSIDE');
  });

  it('CKPT-6 SEC-4 the temp files a restore killed with -9 leaves (both names) are removed when the journal is finished; other files stay', async () => {
    const { home, ws } = fixture();
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'temp-session' });
    await checkpoints.beforeTurn(1, 'turn', []);
    await checkpoints.settled();
    await checkpoints.aroundBatch(1, [bash], async () => {
      writeFileSync(join(ws, 'd', 'f.txt'), 'after\n');
      return [];
    });
    await checkpoints.settled();
    // What a kill -9 between the temp file and its rename leaves (this version and earlier ones).
    const left = ['.f.txt.4242.0a1b2c3d.tmp', 'f.txt.crystal-restore-4242.tmp'];
    const kept = ['.f.txt.notes.tmp', 'f.txt.crystal-restore-x.tmp.bak', 'g.txt'];
    for (const name of [...left, ...kept]) writeFileSync(join(ws, 'd', name), 'x');
    const result = await checkpoints.rewind({ to: 1, code: true, chat: false });
    expect(result.restored).toEqual(['d/f.txt']);
    expect(readFileSync(join(ws, 'd', 'f.txt'), 'utf8')).toBe('before\n');
    expect(readdirSync(join(ws, 'd')).sort()).toEqual([...kept, 'f.txt', 'old1'].sort());
  });

  it('SEC-4 400 stat passes raced the same way: a file read through the swapped-in link is never stored as the workspace file', async () => {
    const { home, ws, outside } = fixture();
    writeFileSync(join(outside, 'f.txt'), 'OUTSIDE secret\n');
    const secret = sha256(Buffer.from('OUTSIDE secret\n'));
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'read-session' });
    const tracker = checkpoints.tracker;
    await tracker.scanAll();
    await startRacer(ws, outside);
    let captured = 0;
    let outsideStates = 0;
    for (let i = 0; i < 400; i++) {
      for (const change of await tracker.scanAll()) {
        if (change.after.kind === 'file') captured++;
        if (change.after.kind === 'file' && change.after.hash === secret) outsideStates++;
      }
      const now = tracker.stateOf('d/f.txt');
      if (now.kind === 'file' && now.hash === secret) outsideStates++;
    }
    await stopRacer(ws);
    expect(outsideStates, `${captured} files captured while racing`).toBe(0);
    expect(JSON.stringify(tracker.toJson())).not.toContain(secret);
  });
});
