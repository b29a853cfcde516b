import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleWorkspaceTools, type Config } from '../src/index.js';

describe('scope of the built-in tools', () => {
  it('SCOPE-1 no tool captures the screen or drives a browser, phone or virtual machine, in Plan or Work, with or without images', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-scope-'));
    const config: Config = { imageModel: { provider: 'openai', model: 'gpt-5.6-sol' } };
    for (const imageInput of [false, true]) {
      const tools = await assembleWorkspaceTools({
        home,
        workspace: home,
        config,
        mode: 'work',
        sessionId: () => 's',
        imageInput: () => imageInput,
        externalTools: false,
      });
      for (const mode of ['plan', 'work'] as const) {
        tools.setMode(mode);
        const names = tools.tools().map((t) => t.name);
        expect(names.length).toBeGreaterThan(5);
        for (const name of names)
          expect(name).not.toMatch(/screen|capture|browser|click|mouse|keyboard|device|phone|vm|computer/i);
        for (const tool of tools.tools())
          expect(tool.description).not.toMatch(/take a screenshot|control the browser|tap on|click at/i);
      }
    }
  });
});
