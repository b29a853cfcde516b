import { lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  catalogOf,
  DEFAULT_PROVIDER,
  editJsonText,
  loadConfig,
  MissingApiKeyError,
  persistPreferences,
  removeApiKey,
  resolveApiKey,
  selectModel,
  STARTER_PROVIDERS,
  storeApiKey,
} from '../src/index.js';

function homeWith(text: string): string {
  const home = tempDir('crystal-setup-');
  writeFileSync(join(home, 'config.json'), text);
  return home;
}

describe('first-hour configuration', () => {
  it('SETUP-4 a built-in provider entry takes a partial override (only apiKey)', () => {
    const home = homeWith('{"providers": {"deepseek": {"apiKey": "sk-partial"}}}');
    const config = loadConfig(home);
    const selection = selectModel(config);
    expect(selection.providerName).toBe('deepseek');
    expect(selection.model.id).toBe('deepseek-flash');
    expect(selection.provider.baseUri).toBe(STARTER_PROVIDERS.deepseek?.baseUri);
    expect(resolveApiKey(home, 'deepseek', selection.provider, {})).toBe('sk-partial');
  });

  it('SETUP-4 a new provider without protocol is refused with the key, its line and the choices', () => {
    const text =
      '{\n  "providers": {\n    "mine": {\n      "baseUri": "http://127.0.0.1:1/v1/",\n      "models": {"m": {"contextWindow": 10}}\n    }\n  }\n}\n';
    const home = homeWith(text);
    let error: unknown;
    try {
      loadConfig(home);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).keyPath).toBe('providers.mine.protocol');
    expect((error as ConfigError).line).toBe(3);
    expect((error as Error).message).toContain('"openai"');
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe(text);
  });

  it('SETUP-4 the default provider is the one the README starts with, and a missing key explains how to connect', () => {
    expect(DEFAULT_PROVIDER).toBe('deepseek');
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const connect = readme.slice(readme.indexOf('## Connect a provider'));
    expect(connect).toMatch(/default provider is `deepseek`/);
    const home = tempDir();
    let error: unknown;
    try {
      resolveApiKey(home, 'deepseek', catalogOf({}).deepseek as never, {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MissingApiKeyError);
    const message = (error as Error).message;
    expect(message).toContain('crystal login deepseek');
    expect(message).toContain('ollama serve');
    expect(message).toContain('crystal demo');
    expect(message.split('\n').length).toBeLessThanOrEqual(6);
    // A key for another provider in the environment is pointed out.
    let withOther = '';
    try {
      resolveApiKey(home, 'deepseek', catalogOf({}).deepseek as never, { ANTHROPIC_API_KEY: 'sk-ant' });
    } catch (e) {
      withOther = (e as Error).message;
    }
    expect(withOther).toContain('crystal --provider anthropic');
    expect(withOther).toContain('ANTHROPIC_API_KEY is set');
    expect(withOther).not.toContain('sk-ant');
  });

  it('SETUP-2 storeApiKey writes credentials.json 0600 atomically and keeps other providers; removeApiKey drops one', async () => {
    const home = tempDir();
    await storeApiKey(home, 'openai', 'sk-one');
    await storeApiKey(home, 'anthropic', 'sk-two');
    const file = join(home, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ openai: { apiKey: 'sk-one' }, anthropic: { apiKey: 'sk-two' } });
    expect(resolveApiKey(home, 'openai', STARTER_PROVIDERS.openai as never, {})).toBe('sk-one');
    expect(await removeApiKey(home, 'openai')).toBe(true);
    expect(await removeApiKey(home, 'openai')).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ anthropic: { apiKey: 'sk-two' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('format-preserving config writes (SETUP-3, /model /thinking /approval)', () => {
  const handwritten = [
    '{',
    '\t"provider": "openai",   "model": "gpt-5.6-sol",',
    '',
    '\t"providers": {',
    '\t\t"openai": { "apiKey": "{env:MY_KEY}" }',
    '\t},',
    '\t"workspaceTrust": false',
    '}',
    '',
  ].join('\r\n');

  it('SETUP-3 /model-style writes change only the key: tabs, CRLF, blank lines and order stay', async () => {
    const home = homeWith(handwritten);
    await persistPreferences(home, { provider: 'anthropic', model: 'claude-sonnet-4-5' });
    const after = readFileSync(join(home, 'config.json'), 'utf8');
    expect(after).toBe(handwritten.replace('"openai",   "model": "gpt-5.6-sol"', '"anthropic",   "model": "claude-sonnet-4-5"'));
  });

  it("SETUP-3 a new key is added in the file's own indentation and line endings", async () => {
    const home = homeWith(handwritten);
    await persistPreferences(home, { thinkingEffort: 'high' });
    const after = readFileSync(join(home, 'config.json'), 'utf8');
    expect(after.startsWith(handwritten.slice(0, handwritten.indexOf('\t"workspaceTrust"')))).toBe(true);
    expect(after).toContain('\t"thinkingEffort": "high"');
    expect(after.includes('\n') && !/[^\r]\n/.test(after)).toBe(true);
    expect(loadConfig(home).thinkingEffort).toBe('high');
  });

  it('SETUP-3 a config.json that is a symlink stays a symlink; its target gets the change', async () => {
    const dotfiles = tempDir('crystal-dotfiles-');
    const target = join(dotfiles, 'crystal.json');
    writeFileSync(target, '{ "provider": "openai" }\n');
    const home = tempDir('crystal-setup-');
    symlinkSync(target, join(home, 'config.json'));
    await persistPreferences(home, { provider: 'anthropic' });
    expect(lstatSync(join(home, 'config.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('{ "provider": "anthropic" }\n');
  });

  it('SETUP-3 a malformed config is not rewritten', async () => {
    const home = homeWith('{"provider": "openai",, }');
    await expect(persistPreferences(home, { approval: 'edit' })).rejects.toBeInstanceOf(ConfigError);
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe('{"provider": "openai",, }');
  });

  it('SETUP-3 editJsonText follows the style around the new key: one-line objects stay on one line', () => {
    const text = '{\n  "providers": {"p": {"models": {"a": {"contextWindow": 1}}}},\n  "model": "a"\n}\n';
    expect(editJsonText(text, [{ path: ['providers', 'p', 'models', 'b'], value: { contextWindow: 2, maxTokens: 3 } }])).toBe(
      '{\n  "providers": {"p": {"models": {"a": {"contextWindow": 1}, "b": {"contextWindow": 2, "maxTokens": 3}}}},\n  "model": "a"\n}\n',
    );
    expect(editJsonText(text, [{ path: ['retry'], value: { maxRetries: 2 } }])).toBe(
      '{\n  "providers": {"p": {"models": {"a": {"contextWindow": 1}}}},\n  "model": "a",\n  "retry": {\n    "maxRetries": 2\n  }\n}\n',
    );
    expect(editJsonText(text, [{ path: ['model'], value: undefined }])).toBe(
      '{\n  "providers": {"p": {"models": {"a": {"contextWindow": 1}}}}\n}\n',
    );
    expect(editJsonText('{"a":1,"b":2}', [{ path: ['a'], value: undefined }])).toBe('{"b":2}');
  });

  it('SETUP-3 editJsonText creates missing parents and a file from nothing', () => {
    expect(JSON.parse(editJsonText('', [{ path: ['providers', 'x', 'models', 'm'], value: { contextWindow: 9 } }]))).toEqual({
      providers: { x: { models: { m: { contextWindow: 9 } } } },
    });
    expect(editJsonText('{"a": 1}', [{ path: ['a'], value: undefined }]).replace(/\s/g, '')).toBe('{}');
  });
});
