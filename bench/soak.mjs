/**
 * The durability soak (issue 13): `crystal run` turns with tool calls against the fake provider,
 * with kill -9 at random moments, two writers racing on one session, and a provider that stalls
 * one request in ten (it sends the headers, then nothing). Bounded: SOAK_TURNS turns (300) or
 * SOAK_SECONDS (300 s), whichever comes first; a run still going after SOAK_HANG_SECONDS (60 s)
 * is killed and counted as a hang of that length. Long, so bench/run-all.mjs runs it only with
 * CRYSTAL_SOAK=1.
 *
 * Prints one JSON line per figure: turns started, turns committed, user messages lost (of
 * committed turns, and of killed ones), sessions that fail to load, two-writer races that lost
 * a committed turn, and the longest hang against a normal turn measured in the same run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure } from './lib/harness.mjs';

const TURNS = Number(process.env.SOAK_TURNS ?? 300);
const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const HANG_SECONDS = Number(process.env.SOAK_HANG_SECONDS ?? 60);
const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const { FakeProvider, fakeConfig, crystalBin } = await import(new URL('../packages/testkit/dist/index.js', import.meta.url).href);

let requests = 0;
// The prompts that reached the provider: REL-1 promises a prompt is saved before its first request,
// so a run killed before that (still starting up) has not lost anything the operator was told of.
const requested = new Set();
const textOf = (content) => (typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join(''));
const fake = await FakeProvider.start({
  replyFor: ({ body }) => {
    requests++;
    const messages = body?.messages ?? [];
    for (const m of messages)
      if (m.role === 'user') for (const hit of textOf(m.content).match(/soak turn \d+/g) ?? []) requested.add(hit);
    const last = messages.at(-1);
    // One request in ten stalls after the headers (the stream never continues).
    const stall = requests % 10 === 0 ? { delayMs: 3_600_000 } : {};
    if (last?.role === 'user') return { ...stall, toolCalls: [{ name: 'list', arguments: { path: '.' } }] };
    return { ...stall, text: 'listed the files; done.' };
  },
});
const home = mkdtempSync(join(tmpdir(), 'crystal-soak-'));
const workspace = mkdtempSync(join(tmpdir(), 'crystal-soak-ws-'));
for (let i = 0; i < 20; i++) writeFileSync(join(workspace, `file-${i}.txt`), `content ${i}\n`);
writeFileSync(
  join(home, 'config.json'),
  // REL-5's timeouts turn a stalled request (the fake holds back its headers until the first
  // chunk) into a retried `timeout`; the hang goal is these 5 s per attempt plus the retry budget.
  JSON.stringify(
    fakeConfig(fake.baseUri, {
      retry: { maxRetries: 2, baseDelaySeconds: 0.2, maxDelaySeconds: 1, idleTimeoutSeconds: 5, firstByteTimeoutSeconds: 5 },
    }),
  ),
);

/** One `crystal run`; `killAfterMs` kills it with -9 at that moment. */
function run(prompt, resume, killAfterMs) {
  const args = ['run', '--format', 'json', '--approval', 'full', ...(resume ? ['--resume', resume] : []), prompt];
  const env = { PATH: process.env.PATH ?? '', HOME: home, CRYSTAL_HOME: home };
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [crystalBin, ...args], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    let hung = false;
    const killer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const watchdog = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_SECONDS * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(watchdog);
      let result;
      try {
        result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
      } catch {
        result = undefined;
      }
      resolve({ prompt, code, signal, hung, killed: signal === 'SIGKILL' && !hung, ms: Date.now() - started, stderr, result });
    });
  });
}

const chains = []; // session ids the soak resumes
const outcomes = [];
let races = 0;
let racesBothCommitted = 0;
let turn = 0;
const deadline = Date.now() + SECONDS * 1000;
const nextPrompt = () => `soak turn ${++turn}`;
const pick = () => (chains.length > 0 && Math.random() < 0.8 ? chains[Math.floor(Math.random() * chains.length)] : undefined);

while (turn < TURNS && Date.now() < deadline) {
  if (turn % 15 === 14 && chains.length > 0) {
    // Two writers racing on one session: at most one may commit.
    const id = pick() ?? chains[0];
    const pair = await Promise.all([run(nextPrompt(), id), run(nextPrompt(), id)]);
    races++;
    // Both may commit when one finished before the other opened the session (serialised, not
    // concurrent); what must never happen is a committed turn missing afterwards.
    if (pair.every((o) => o.code === 0)) racesBothCommitted++;
    for (const o of pair) outcomes.push({ ...o, session: id, race: races });
    continue;
  }
  const resume = pick();
  const kill = Math.random() < 0.25 ? 50 + Math.floor(Math.random() * 900) : undefined;
  const o = await run(nextPrompt(), resume, kill);
  const session = resume ?? o.result?.sessionId;
  if (!resume && session && !chains.includes(session) && chains.length < 6) chains.push(session);
  outcomes.push({ ...o, session });
}

// Every session on disk must load; every committed turn's user message must be in its session.
const loaded = new Map();
let failedToLoad = 0;
const loadErrors = [];
for (const name of readdirSync(join(home, 'sessions'))) {
  if (!name.endsWith('.json') || name.startsWith('.')) continue;
  const id = name.slice(0, -5);
  try {
    const { state } = engine.SessionFiles.load(home, id);
    loaded.set(
      id,
      new Set(state.archive.filter((m) => m.role === 'user').map((m) => m.content.map((p) => p.text ?? '').join(''))),
    );
  } catch (error) {
    failedToLoad++;
    loadErrors.push(`${id}: ${error.message}`);
  }
}
const committed = outcomes.filter((o) => o.code === 0 && o.result?.stopReason === 'completed');
const refused = outcomes.filter((o) => o.code === 1 && /open in another process/.test(o.stderr));
const started = outcomes.filter((o) => !refused.includes(o));
// A turn killed before its first save has no known session id: it counts as found if any session holds it.
const on = (o) =>
  o.session ? loaded.get(o.session)?.has(o.prompt) === true : [...loaded.values()].some((prompts) => prompts.has(o.prompt));
const lostCommitted = committed.filter((o) => !on(o));
const killed = outcomes.filter((o) => o.killed);
const killedAfterRequest = killed.filter((o) => requested.has(o.prompt));
const lostKilled = killedAfterRequest.filter((o) => !on(o));
const normal = committed.map((o) => o.ms).sort((a, b) => a - b);
const median = normal[Math.floor(normal.length / 2)] ?? 1;
const notKilled = outcomes.filter((o) => !o.killed);
const longest = Math.max(0, ...notKilled.map((o) => o.ms));
const hangs = outcomes.filter((o) => o.hung).length;

printFigure({ figure: 'soak: turns started', value: started.length, turnsRequested: TURNS, kills: killed.length, races });
printFigure({
  figure: 'soak: turns committed',
  value: committed.length,
  ratioToStarted: committed.length / Math.max(1, started.length),
});
printFigure({
  figure: 'soak: user messages lost of committed turns',
  value: lostCommitted.length,
  goal: 0,
  met: lostCommitted.length === 0,
  ...(lostCommitted.length ? { examples: lostCommitted.slice(0, 3).map((o) => o.prompt) } : {}),
});
printFigure({
  figure: 'soak: user messages lost of turns killed with -9 (REL-1 saves them before the first request)',
  value: lostKilled.length,
  of: killedAfterRequest.length,
  killedBeforeAnyRequest: killed.length - killedAfterRequest.length,
  killedBeforeRequestButSaved: killed.filter((o) => !requested.has(o.prompt) && on(o)).length,
  goal: 0,
  met: lostKilled.length === 0,
});
printFigure({
  figure: 'soak: sessions that fail to load',
  value: failedToLoad,
  of: loaded.size + failedToLoad,
  goal: 0,
  met: failedToLoad === 0,
  ...(loadErrors.length ? { examples: loadErrors.slice(0, 3) } : {}),
});
const racesLosing = new Set(lostCommitted.filter((o) => o.race !== undefined).map((o) => o.race));
printFigure({
  figure: 'soak: two-writer races that lost a committed turn',
  value: racesLosing.size,
  of: races,
  refusedSecondWriters: refused.length,
  serialisedBothCommitted: racesBothCommitted,
  goal: 0,
  met: racesLosing.size === 0,
});
printFigure({
  figure: 'soak: longest hang of a run not killed by the soak',
  seconds: Math.round(longest / 100) / 10,
  ratioToMedianTurn: Math.round((longest / median) * 10) / 10,
  medianTurnSeconds: Math.round(median / 100) / 10,
  runsKilledByTheHangWatchdog: hangs,
  watchdogSeconds: HANG_SECONDS,
  goal: 'the idle timeout plus the retry budget (retry.idleTimeoutSeconds, REL-5)',
  met: hangs === 0,
});

await fake.close();
rmSync(home, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });
process.exit(0);
