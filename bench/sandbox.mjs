/**
 * Figure: the cost the OS sandbox adds to a trivial bash call. `true` through the real bash tool
 * (process group, output capture, the whole tool path) with the sandbox (bubblewrap: mounts,
 * namespaces) against the same call without it, interleaved in one run, network off and with the
 * filtering proxy (the command joins the session's long-lived bridge). Goal: ratio < 3.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const runs = runCount(60);
const warmup = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const root = mkdtempSync(join(tmpdir(), 'crystal-bench-sandbox-'));
try {
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(home);
  mkdirSync(workspace);
  const containment = await engine.createContainment({ config: {}, home, workspace, env: process.env });
  // The sandbox is detected on first use (issue 22 item 4); the figure is about a detected one.
  await containment.resolve();
  if (!containment.sandboxed) throw new Error(`bench/sandbox.mjs needs the OS sandbox: ${containment.note}`);
  // The interactive default: an operator to ask about hosts, so HTTP(S) goes through the proxy bridge.
  const proxied = await engine.createContainment({ config: {}, home, workspace, env: process.env, askHost: async () => false });
  // The session's bridge starts in the background with the proxy; measure the steady state.
  await proxied.resolve();
  await proxied.ready();
  const env = engine.childEnvironment({}, process.env);
  const base = { workspace, bashTimeoutMs: 60_000, todos: new engine.TodoStore(), env };
  const plain = engine.bashTool(base);
  const boxed = engine.bashTool({ ...base, containment });
  const bridged = engine.bashTool({ ...base, containment: proxied });
  const tools = { plain, boxed, bridged };
  const call = async (tool) => {
    const t = performance.now();
    const out = await tool.execute({ command: 'true' }, { signal: new AbortController().signal, callId: 'bench' });
    const ms = performance.now() - t;
    if (out !== 'exit 0\n') throw new Error(`bash true returned ${JSON.stringify(out)}`);
    return ms;
  };
  const samples = { plain: [], boxed: [], bridged: [] };
  const orders = [
    ['plain', 'boxed', 'bridged'],
    ['bridged', 'plain', 'boxed'],
    ['boxed', 'bridged', 'plain'],
  ];
  for (let i = 0; i < warmup + runs; i++) {
    for (const side of orders[i % orders.length]) {
      const ms = await call(tools[side]);
      if (i >= warmup) samples[side].push(ms);
    }
  }
  const baseline = median(samples.plain);
  for (const [side, label] of [
    ['boxed', 'sandboxed (bubblewrap, network off)'],
    ['bridged', "sandboxed with the network proxy (joins the session's socat bridge; the interactive default)"],
  ]) {
    const subject = median(samples[side]);
    printFigure({
      figure: `sandbox: bash \`true\` through the bash tool, ${label} vs unsandboxed`,
      subject_ms: Number(subject.toFixed(2)),
      baseline_ms: Number(baseline.toFixed(2)),
      ratio: Number((subject / baseline).toFixed(2)),
      goal: 3,
      met: subject / baseline < 3,
      runs,
    });
  }
  containment.close();
  proxied.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
