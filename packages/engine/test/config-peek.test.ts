import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { peekStart } from '../src/early.js';
import { selectModel, trustWorkspace } from '../src/index.js';
import { parseConfigText } from '../src/config/load.js';

const dir = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

function homeWith(config: unknown): string {
  const home = dir('crystal-peek-home-');
  writeFileSync(join(home, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return home;
}

describe('the peek at config.json before the engine loads (issue 22)', () => {
  it('CONF-6 CLI-6 names provider/model exactly as selectModel chooses them, or nothing when the catalog must decide', () => {
    const ws = dir('crystal-peek-ws-');
    const config = { provider: 'anthropic', model: 'claude-sonnet-4-5', workspaceTrust: false };
    const home = homeWith(config);
    const cases: { provider?: string; model?: string }[] = [{}, { model: 'claude-sonnet-4-5' }, { provider: 'anthropic' }];
    for (const flags of cases) {
      const chosen = selectModel(parseConfigText(JSON.stringify(config), 'config.json'), flags);
      expect(peekStart(home, ws, flags)?.model).toBe(`${chosen.providerName}/${chosen.model.id}`);
    }
    // Another provider by flag and no model: the catalog decides (its only or default model), so the peek says nothing.
    expect(peekStart(home, ws, { provider: 'ollama' })?.model).toBeUndefined();
    expect(peekStart(homeWith({ workspaceTrust: false }), ws, {})?.model).toBeUndefined();
  });

  it('APPR-1 CLI-2 the approval mode: the flag, else config (legacy names mapped), else default; the view from config', () => {
    const ws = dir('crystal-peek-ws-');
    expect(peekStart(homeWith({ approval: 'autoedit', terminalView: 'fullscreen' }), ws, {})).toMatchObject({
      approval: 'edit',
      terminalView: 'fullscreen',
    });
    expect(peekStart(homeWith({ approval: 'autoedit' }), ws, { approval: 'full' })?.approval).toBe('full');
    expect(peekStart(homeWith({}), ws, {})).toMatchObject({ approval: 'default', terminalView: undefined });
  });

  it('CLI-8 CONF-5 says when the trust question comes first, and answers nothing when it cannot be sure', async () => {
    const ws = dir('crystal-peek-ws-');
    const home = homeWith({ provider: 'fake' });
    expect(peekStart(home, ws, {})?.trustNeeded).toBe(true);
    await trustWorkspace(home, ws);
    expect(peekStart(home, ws, {})?.trustNeeded).toBe(false);
    expect(peekStart(homeWith({ workspaceTrust: false }), ws, {})?.trustNeeded).toBe(false);
    // No file, not JSON, not an object, a corrupt trusted.json: the engine loads first and reports, as before.
    expect(peekStart(dir('crystal-peek-empty-'), ws, {})).toBeUndefined();
    expect(peekStart(homeWith('{ "provider": '), ws, {})).toBeUndefined();
    expect(peekStart(homeWith('[1, 2]'), ws, {})).toBeUndefined();
    const corrupt = homeWith({ provider: 'fake' });
    writeFileSync(join(corrupt, 'trusted.json'), '{ "trusted": [');
    expect(peekStart(corrupt, ws, {})).toBeUndefined();
  });
});
