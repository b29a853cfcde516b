/** Child of kill-during-save.mjs: runs turns back to back on one session until killed. Args: HOME WORKSPACE [SESSION_ID]. */
const [home, workspace, resume] = process.argv.slice(2);
const engine = await import(new URL('../../packages/engine/dist/index.js', import.meta.url).href);
const config = engine.loadConfig(home);
const session = await engine.Session.open({ home, workspace, config, resume: resume || undefined, env: {} });
process.stdout.write(`session ${session.id}\n`);
for (let turn = 0; ; turn++) {
  const result = await session.send(`turn ${turn}: ${'x'.repeat(200)}`);
  if (result.stopReason !== 'completed') throw new Error(`turn stopped ${result.stopReason}`);
  process.stdout.write(`done ${turn}\n`);
}
