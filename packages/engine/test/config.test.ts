import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, homePaths, loadConfig, resolveApiKey, resolveHome, selectModel, STARTER_PROVIDERS } from '../src/index.js';

function home(config?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-cfg-'));
  if (config !== undefined) writeFileSync(join(dir, 'config.json'), config);
  return dir;
}

function configError(text: string): ConfigError {
  const dir = home(text);
  try {
    loadConfig(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(text);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it("CONF-1 issue 22 Home's layout is computed once per Home, read-only; another Home gets its own", () => {
    const a = homePaths('/tmp/home-a');
    expect(a).toEqual({
      config: '/tmp/home-a/config.json',
      credentials: '/tmp/home-a/credentials.json',
      permissions: '/tmp/home-a/permissions.json',
      sessions: '/tmp/home-a/sessions',
      media: '/tmp/home-a/media',
      logs: '/tmp/home-a/logs',
      cache: '/tmp/home-a/cache',
    });
    expect(homePaths('/tmp/home-a')).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    const b = homePaths('/tmp/home-b');
    expect(b.sessions).toBe('/tmp/home-b/sessions');
    expect(homePaths('/tmp/home-a')).toEqual(a);
  });

  it('CONF-1 Home is CRYSTAL_HOME when set, else ~/.crystal, and --home wins', () => {
    expect(resolveHome(undefined, { CRYSTAL_HOME: '/tmp/ch' })).toBe('/tmp/ch');
    expect(resolveHome('/tmp/flag', { CRYSTAL_HOME: '/tmp/ch' })).toBe('/tmp/flag');
    expect(resolveHome(undefined, {})).toMatch(/\.crystal$/);
  });

  it('CONF-2 reads provider, model and the providers catalog', () => {
    const dir = home(
      JSON.stringify({
        provider: 'local',
        model: 'm',
        providers: {
          local: { protocol: 'openai', baseUri: 'http://127.0.0.1:1/v1/', models: { m: { contextWindow: 1000, maxTokens: 10 } } },
        },
      }),
    );
    const selection = selectModel(loadConfig(dir));
    expect(selection.providerName).toBe('local');
    expect(selection.model).toMatchObject({ id: 'm', contextWindow: 1000, maxTokens: 10 });
  });

  it('CONF-5 malformed JSON names the file and the line, and the file is left unchanged', () => {
    const text = '{\n  "provider": "x",\n  "model": \n}\n';
    const error = configError(text);
    expect(error.message).toContain('config.json');
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/config\.json:4: is not valid JSON/);
  });

  it('CONF-5 a wrong type names the key path, the line and what is expected', () => {
    const error = configError('{\n  "retry": {\n    "maxRetries": "five"\n  }\n}');
    expect(error.keyPath).toBe('retry.maxRetries');
    expect(error.line).toBe(3);
    expect(error.message).toContain('expected number');
  });

  it('CONF-5 an unknown protocol lists the protocols that exist', () => {
    const error = configError(
      JSON.stringify(
        { providers: { x: { protocol: 'grpc', baseUri: 'http://h/', models: { m: { contextWindow: 1 } } } } },
        null,
        2,
      ),
    );
    expect(error.keyPath).toBe('providers.x.protocol');
    expect(error.message).toContain('"responses", "openai", "deepseek", "anthropic", "gemini", "ollama"');
  });

  it('SEC-9 CONF-5 a baseUri that is not http or https is refused, naming the key and the fix', () => {
    for (const baseUri of ['file:///etc/passwd', 'ftp://h/v1/', 'javascript:alert(1)', 'data:text/plain,x', 'ws://h/']) {
      const error = configError(
        JSON.stringify({ providers: { x: { protocol: 'openai', baseUri, models: { m: { contextWindow: 1 } } } } }, null, 2),
      );
      expect(error.keyPath, baseUri).toBe('providers.x.baseUri');
      expect(error.line, baseUri).toBe(5);
      expect(error.message, baseUri).toContain('http:// or https://');
      expect(error.message, baseUri).toContain('fix the baseUri');
    }
    for (const baseUri of ['http://127.0.0.1:1/v1/', 'https://api.example.com/', 'HTTPS://API.EXAMPLE.COM/']) {
      const dir = home(
        JSON.stringify({ providers: { x: { protocol: 'openai', baseUri, models: { m: { contextWindow: 1 } } } } }),
      );
      expect(() => loadConfig(dir), baseUri).not.toThrow();
    }
  });

  it('CONF-5 an out-of-range value is refused with its key path', () => {
    const error = configError('{"executionBudget": {"maximumDurationSeconds": 9999999}}');
    expect(error.keyPath).toBe('executionBudget.maximumDurationSeconds');
    expect(error.message).toContain('2147483');
  });

  it('CONF-3 starter providers exist with their public endpoints; ollama needs no key', () => {
    expect(Object.keys(STARTER_PROVIDERS).sort()).toEqual(['anthropic', 'deepseek', 'gemini', 'ollama', 'openai']);
    expect(STARTER_PROVIDERS.ollama?.baseUri).toBe('http://127.0.0.1:11434/');
    expect(resolveApiKey(home(), 'ollama', STARTER_PROVIDERS.ollama as never, {})).toBeUndefined();
  });

  it('CONF-4 environment beats the config key, {env:} and {file:} expand, credentials.json is last', () => {
    const dir = home();
    const provider = { ...(STARTER_PROVIDERS.openai as object), apiKey: '{file:key.txt}' } as never;
    writeFileSync(join(dir, 'key.txt'), 'from-file\n');
    expect(resolveApiKey(dir, 'openai', provider, {})).toBe('from-file');
    expect(resolveApiKey(dir, 'openai', provider, { OPENAI_API_KEY: 'from-env', CRYSTAL_API_KEY: 'generic' })).toBe('from-env');
    const viaEnvRef = { ...(STARTER_PROVIDERS.openai as object), apiKey: '{env:MY_KEY}' } as never;
    expect(resolveApiKey(dir, 'openai', viaEnvRef, { MY_KEY: 'k2' })).toBe('k2');
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ openai: { apiKey: 'stored' } }));
    expect(resolveApiKey(dir, 'openai', STARTER_PROVIDERS.openai as never, {})).toBe('stored');
    expect(() => resolveApiKey(home(), 'openai', STARTER_PROVIDERS.openai as never, {})).toThrow(/OPENAI_API_KEY/);
  });

  it('CONF-6 a model outside the catalog cannot be selected', () => {
    expect(() => selectModel({}, { provider: 'openai', model: 'gpt-imaginary' })).toThrow(
      /not in the catalog of provider 'openai'/,
    );
    expect(() => selectModel({}, { provider: 'nowhere' })).toThrow(/Unknown provider 'nowhere'/);
  });
});
