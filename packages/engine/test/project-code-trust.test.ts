import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleWorkspaceTools, type Config, trustWorkspace } from '../src/index.js';

/** A plugin set whose module writes a marker file the moment it is imported. */
function hostilePlugin(root: string, name: string, marker: string, toolName: string): void {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'tool.mjs'),
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'imported');\n` +
      `export default { name: '${toolName}', description: 'x', parameters: { type: 'object' }, execute: () => 'ran' };\n`,
  );
  writeFileSync(join(dir, 'tools.json'), JSON.stringify({ runner: 'plugin', module: './tool.mjs' }));
}

function execSet(root: string, name: string, toolName: string): void {
  mkdirSync(join(root, name), { recursive: true });
  writeFileSync(
    join(root, name, 'tools.json'),
    JSON.stringify({
      runner: 'exec',
      command: ['echo'],
      tools: [{ name: toolName, description: 'x', schema: { type: 'object' } }],
    }),
  );
}

function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec1-')));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(home);
  mkdirSync(ws);
  const marker = join(base, 'imported.marker');
  hostilePlugin(join(ws, '.crystal', 'tools'), 'evil', marker, 'evil_tool');
  execSet(join(ws, '.crystal', 'tools'), 'proj', 'proj_exec');
  // A home set of the same name as a project set: it stays when the project set is left out.
  execSet(join(home, 'tools'), 'proj', 'home_exec');
  return { home, ws, marker };
}

const config: Config = {} as Config;

async function assemble(home: string, ws: string, extra: { trustWorkspace?: boolean; config?: Config } = {}) {
  return assembleWorkspaceTools({
    home,
    workspace: ws,
    config: extra.config ?? config,
    mode: 'work',
    sessionId: () => 's',
    imageInput: () => false,
    ...(extra.trustWorkspace === undefined ? {} : { trustWorkspace: extra.trustWorkspace }),
  });
}

describe('project code loads only in a trusted workspace (SEC-1)', () => {
  it('SEC-1 CLI-8 an untrusted workspace never imports its plugin module; one note names what was skipped', async () => {
    const { home, ws, marker } = fixture();
    const tools = await assemble(home, ws, { trustWorkspace: false });
    expect(existsSync(marker)).toBe(false);
    const names = tools.tools().map((t) => t.name);
    expect(names).not.toContain('evil_tool');
    expect(names).not.toContain('proj_exec');
    expect(names).toContain('home_exec');
    expect(tools.notes).toHaveLength(1);
    expect(tools.notes[0]).toContain(join(ws, '.crystal', 'tools', 'evil'));
    expect(tools.notes[0]).toContain(join(ws, '.crystal', 'tools', 'proj'));
    expect(tools.notes[0]).toContain('--trust-workspace');
  });

  it('SEC-1 the explicit grant and a trusted.json entry both load the project sets', async () => {
    const { home, ws, marker } = fixture();
    const granted = await assemble(home, ws, { trustWorkspace: true });
    expect(existsSync(marker)).toBe(true);
    expect(granted.tools().map((t) => t.name)).toEqual(expect.arrayContaining(['evil_tool', 'proj_exec']));
    const second = fixture();
    await trustWorkspace(second.home, second.ws);
    const trusted = await assemble(second.home, second.ws, { trustWorkspace: false });
    expect(existsSync(second.marker)).toBe(true);
    expect(trusted.notes).toEqual([]);
  });

  it('SEC-1 the interactive surfaces load project code when the operator turned the trust question off', async () => {
    const { home, ws, marker } = fixture();
    await assemble(home, ws, { config: { workspaceTrust: false } as Config });
    expect(existsSync(marker)).toBe(true);
    const other = fixture();
    await assemble(other.home, other.ws);
    expect(existsSync(other.marker)).toBe(false);
  });
});
