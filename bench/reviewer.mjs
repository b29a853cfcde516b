/**
 * Figure (issue 18, REV-1): a turn with ten `bash` calls in `review` mode, where the reviewer
 * model (the fake provider over HTTP) allows each one, vs the same turn in `full` mode with no
 * reviewer, in one process (engine dist), interleaved, medians. The reviewer's cost is one model
 * request per call (excerpt, prompt, parse); the per-call overhead is printed beside the ratio.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SessionController } from '../packages/engine/dist/index.js';
import { FakeProvider, fakeConfig } from '../packages/testkit/dist/index.js';
import { median, printFigure, runCount } from './lib/harness.mjs';

const CALLS = 10;
const runs = runCount(8);
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const allow = { text: '{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"asked"}' };

function replies(reviewed) {
  const out = [];
  for (let i = 0; i < CALLS; i++) {
    out.push({ toolCalls: [{ id: `c${i}`, name: 'bash', arguments: { command: 'true' } }] });
    if (reviewed) out.push(allow);
  }
  out.push({ text: 'done' });
  return out;
}

async function turn(reviewed) {
  const fake = await FakeProvider.start({ replies: replies(reviewed), whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-bench-rev-'));
  const controller = await SessionController.open({
    home,
    workspace: home,
    config: fakeConfig(fake.baseUri, { sandbox: 'off' }),
    env: { PATH: process.env.PATH },
    approval: reviewed ? 'review' : 'full',
    unattended: true,
  });
  try {
    const start = performance.now();
    const result = await controller.sendOnce('run true ten times, one call per round');
    const ms = performance.now() - start;
    if (result.stopReason !== 'completed' || result.toolCalls.length !== CALLS || result.denied)
      throw new Error(`turn did not complete: ${result.stopReason}`);
    if (fake.requests.length !== (reviewed ? 2 * CALLS + 1 : CALLS + 1)) throw new Error('unexpected request count');
    return ms;
  } finally {
    await controller.close();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const reviewed = [];
const plain = [];
for (let i = 0; i < runs + 2; i++) {
  const order = i % 2 === 0 ? [true, false] : [false, true];
  const pair = {};
  for (const r of order) pair[r] = await turn(r);
  if (i < 2) continue;
  reviewed.push(pair.true);
  plain.push(pair.false);
}
const subject = median(reviewed);
const baseline = median(plain);
printFigure({
  figure: 'turn with 10 bash calls in review mode (reviewer allows each) vs full mode',
  subject_ms: round(subject),
  baseline_ms: round(baseline),
  ratio: round(subject / baseline, 3),
  per_call_review_ms: round((subject - baseline) / CALLS),
  runs,
});
