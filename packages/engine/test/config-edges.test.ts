/** REL-12: hostile tool sets and configuration edge cases fail clearly, never as internal errors. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  configWarnings,
  discoverToolSets,
  homeToolsDir,
  parseConfigText,
  selectModel,
  UsageError,
} from '../src/index.js';

const FILE = '/home/me/.crystal/config.json';
const dir = () => mkdtempSync(join(tmpdir(), 'crystal-rel12-'));
const fake = { protocol: 'openai', baseUri: 'http://127.0.0.1:1/', models: { m: { contextWindow: 1000 } } };

describe('REL-12 tool sets and configuration edge cases', () => {
  it('REL-12 100,000 nested [ in a tools.json skips that set with a note, no stack overflow', async () => {
    const home = dir();
    const set = join(homeToolsDir(home), 'deep');
    mkdirSync(set, { recursive: true });
    for (const [name, text] of [
      ['deep', '['.repeat(100_000)],
      ['closed', `{"runner": "exec", "tools": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ] as const) {
      mkdirSync(join(homeToolsDir(home), name), { recursive: true });
      writeFileSync(join(homeToolsDir(home), name, 'tools.json'), text);
    }
    const discovery = await discoverToolSets({ home, workspace: dir() });
    expect(discovery.sets).toEqual([]);
    expect(discovery.notes).toHaveLength(2);
    for (const note of discovery.notes) {
      expect(note).toMatch(
        /tools\.json:1: is not valid JSON \(nested deeper than 256 levels, column \d+\); the home tool set \w+ was skipped\./,
      );
    }
  });

  it('REL-12 "provider": "constructor" is a clear error naming the known providers, not an internal error', () => {
    const config = parseConfigText(JSON.stringify({ provider: 'constructor' }), FILE);
    const error = (() => {
      try {
        selectModel(config);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/^Unknown provider 'constructor'\. Known providers: openai, /);
  });

  it('REL-12 "model": "toString" (or "__proto__") is not a model of the catalog', () => {
    for (const model of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      const config = parseConfigText(JSON.stringify({ provider: 'fake', model, providers: { fake } }), FILE);
      expect(() => selectModel(config), model).toThrow(
        new UsageError(
          `Model '${model}' is not in the catalog of provider 'fake'. Its models: m. Add it under providers.fake.models in config.json.`,
        ),
      );
    }
  });

  it('REL-12 an unknown key is warned about once, naming the nearest known key', () => {
    const config = parseConfigText(
      JSON.stringify({
        executionBudget: { maximumModelCall: 3 },
        retyr: { maxRetries: 1 },
        providers: { fake: { ...fake, baseUrl: 'x', models: { m: { contextWindow: 1000, maxToken: 5 } } } },
        somethingElseEntirely: true,
      }),
      FILE,
    );
    expect(configWarnings(config)).toEqual([
      `${FILE}: unknown key executionBudget.maximumModelCall is ignored; did you mean executionBudget.maximumModelCalls?`,
      `${FILE}: unknown key retyr is ignored; did you mean retry?`,
      `${FILE}: unknown key providers.fake.models.m.maxToken is ignored; did you mean providers.fake.models.m.maxTokens?`,
      `${FILE}: unknown key providers.fake.baseUrl is ignored; did you mean providers.fake.baseUri?`,
      `${FILE}: unknown key somethingElseEntirely is ignored.`,
    ]);
    expect(configWarnings(parseConfigText(JSON.stringify({ retry: { maxRetries: 2 } }), FILE))).toEqual([]);
  });

  it('REL-12 every number is range-checked: retry.maxRetries 1e15 and friends are CONF errors naming the key', () => {
    const cases: [unknown, string][] = [
      [{ retry: { maxRetries: 1e15 } }, 'retry.maxRetries: expected at most 100 retries'],
      [{ retry: { baseDelaySeconds: 1e9 } }, 'retry.baseDelaySeconds: expected at most 3,600 seconds'],
      [{ retry: { maxDelaySeconds: 1e12 } }, 'retry.maxDelaySeconds: expected at most 2147483 seconds'],
      [{ retry: { backoffFactor: 1e6 } }, 'retry.backoffFactor: expected at most 100'],
      [{ executionBudget: { maximumModelCalls: 1e15 } }, 'executionBudget.maximumModelCalls: expected at most 1,000,000'],
      [{ executionBudget: { maximumToolCalls: 1e15 } }, 'executionBudget.maximumToolCalls: expected at most 1,000,000'],
      [{ images: { maxImagesPerMessage: 1e9 } }, 'images.maxImagesPerMessage: expected at most 1,000 images'],
      [
        { providers: { fake: { ...fake, models: { m: { contextWindow: 1e15 } } } } },
        'providers.fake.models.m.contextWindow: expected at most 100,000,000 tokens',
      ],
    ];
    for (const [config, message] of cases) {
      expect(() => parseConfigText(JSON.stringify(config), FILE), message).toThrow(ConfigError);
      expect(() => parseConfigText(JSON.stringify(config), FILE), message).toThrow(message);
    }
  });
});
