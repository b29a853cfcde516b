/**
 * Issue 22 item 4: a config.json validated before by the same build is not validated again (the
 * validated-configuration memo in Home, config/memo.ts). Real files in a real Home: what is
 * recalled is exactly what validating gave, only for the same text of the same file and build,
 * never from a file or folder someone else can write, and never for a config that failed.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Config,
  ConfigError,
  configWarnings,
  homeConfigMemo,
  homePaths,
  loadConfig,
  parseConfigText,
  type ValidatedConfigMemo,
} from '../src/index.js';

const BUILD = '0123456789abcdef';
const fake = { protocol: 'openai', baseUri: 'http://127.0.0.1:1/', models: { m: { contextWindow: 1000 } } };
const TEXT = `${JSON.stringify({ provider: 'fake', model: 'm', thinkingEffort: 'max', providers: { fake } }, null, 2)}\n`;

function home(text = TEXT): string {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-config-memo-'));
  writeFileSync(join(dir, 'config.json'), text);
  return dir;
}

const memoFiles = (dir: string): string[] =>
  existsSync(homePaths(dir).cache) ? readdirSync(homePaths(dir).cache).filter((f) => f.startsWith('validated-config-')) : [];

/** A memo that records what it was asked and recalls what it was given. */
function recording(recalled?: { config: unknown; warnings: readonly string[] }) {
  const remembered: Array<{ file: string; text: string; config: Config; warnings: readonly string[] }> = [];
  let recalls = 0;
  const memo: ValidatedConfigMemo = {
    recall: () => {
      recalls++;
      return recalled;
    },
    remember: (file, text, config, warnings) => {
      remembered.push({ file, text, config, warnings });
      return true;
    },
  };
  return { memo, remembered, recalls: () => recalls };
}

describe('issue 22 item 4: the validated-configuration memo', () => {
  it('issue 22 item 4 a validated config is remembered with its warnings, and a recalled one is used without validating', () => {
    const first = recording();
    const text = JSON.stringify({ provider: 'fake', providers: { fake }, retry: { maxRetrys: 2 } });
    const config = parseConfigText(text, '/h/config.json', first.memo);
    expect(first.remembered).toHaveLength(1);
    expect(first.remembered[0]).toMatchObject({ file: '/h/config.json', text, config: { provider: 'fake' } });
    expect(first.remembered[0]?.warnings).toEqual(configWarnings(config));
    expect(configWarnings(config)[0]).toMatch(/maxRetrys/);
    // What the memo gives is what the start uses: no schema runs (this object would fail it).
    const second = recording({ config: { provider: 'recalled', retry: 'not-an-object' }, warnings: ['a warning'] });
    const recalled = parseConfigText(text, '/h/config.json', second.memo);
    expect(recalled).toMatchObject({ provider: 'recalled', retry: 'not-an-object' });
    expect(configWarnings(recalled)).toEqual(['a warning']);
    expect(second.remembered).toEqual([]);
  });

  it('issue 22 item 4 an invalid config is never remembered and still stops start-up', () => {
    const memo = recording();
    expect(() => parseConfigText('{"retry": {"maxRetries": -1}}', '/h/config.json', memo.memo)).toThrow(ConfigError);
    expect(() => parseConfigText('{"retry": ', '/h/config.json', memo.memo)).toThrow(ConfigError);
    expect(memo.remembered).toEqual([]);
  });

  it('issue 22 item 4 Home keeps it (cache/, 0700; the file 0600); the next load of the same text recalls exactly what validating gave', () => {
    const dir = home();
    // Nothing of this build yet: `found` says so (the CLI then leaves its code cache to the next start).
    const first = homeConfigMemo(dir, BUILD);
    const validated = loadConfig(dir, first);
    expect(first?.found).toBe(false);
    expect(validated).toMatchObject({ provider: 'fake', thinkingEffort: 'maximum' });
    const [name] = memoFiles(dir);
    expect(name).toBe(`validated-config-${BUILD}.json`);
    const file = join(homePaths(dir).cache, name as string);
    expect(statSync(homePaths(dir).cache).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const recalled = homeConfigMemo(dir, BUILD)?.recall(join(dir, 'config.json'), TEXT);
    expect(recalled?.config).toEqual(JSON.parse(JSON.stringify(validated)));
    const again = homeConfigMemo(dir, BUILD);
    expect(loadConfig(dir, again)).toEqual(validated);
    expect(again?.found).toBe(true);
    // Another text of this build's file: not recalled, but an entry of this build was found.
    const edited = homeConfigMemo(dir, BUILD);
    expect(edited?.recall(join(dir, 'config.json'), `${TEXT} `)).toBeUndefined();
    expect(edited?.found).toBe(true);
    // Kept, it says so (the CLI then leaves its code cache to the next start, cli/src/build.ts).
    expect(homeConfigMemo(dir, BUILD)?.remember(join(dir, 'config.json'), TEXT, validated, [])).toBe(true);
  });

  it('issue 22 item 4 another text, another file or another build is validated again; a changed config that is now invalid is refused', () => {
    const dir = home();
    loadConfig(dir, homeConfigMemo(dir, BUILD));
    const memo = homeConfigMemo(dir, BUILD);
    expect(memo?.recall(join(dir, 'config.json'), `${TEXT} `)).toBeUndefined();
    expect(memo?.recall(join(dir, 'other.json'), TEXT)).toBeUndefined();
    expect(homeConfigMemo(dir, 'fedcba9876543210')?.recall(join(dir, 'config.json'), TEXT)).toBeUndefined();
    writeFileSync(join(dir, 'config.json'), TEXT.replace('"max"', '"loud"'));
    expect(() => loadConfig(dir, homeConfigMemo(dir, BUILD))).toThrow(/thinkingEffort/);
    // A new build's first validation replaces the old build's entry.
    writeFileSync(join(dir, 'config.json'), TEXT);
    loadConfig(dir, homeConfigMemo(dir, 'fedcba9876543210'));
    expect(memoFiles(dir)).toEqual(['validated-config-fedcba9876543210.json']);
  });

  it('issue 22 item 4 an entry someone else could have written (file or folder writable by others) or a damaged one is not used', () => {
    const dir = home();
    const configFile = join(dir, 'config.json');
    loadConfig(dir, homeConfigMemo(dir, BUILD));
    const file = join(homePaths(dir).cache, `validated-config-${BUILD}.json`);
    expect(homeConfigMemo(dir, BUILD)?.recall(configFile, TEXT)).toBeDefined();
    chmodSync(file, 0o666);
    expect(homeConfigMemo(dir, BUILD)?.recall(configFile, TEXT)).toBeUndefined();
    chmodSync(file, 0o600);
    chmodSync(homePaths(dir).cache, 0o777);
    expect(homeConfigMemo(dir, BUILD)?.recall(configFile, TEXT)).toBeUndefined();
    chmodSync(homePaths(dir).cache, 0o700);
    for (const damaged of [
      '{"file":',
      '[]',
      'null',
      JSON.stringify({ file: configFile, text: TEXT, config: [], warnings: [] }),
    ]) {
      writeFileSync(file, damaged, { mode: 0o600 });
      expect(homeConfigMemo(dir, BUILD)?.recall(configFile, TEXT)).toBeUndefined();
      // A miss validates; the start goes on and the entry is written again.
      expect(loadConfig(dir, homeConfigMemo(dir, BUILD))).toMatchObject({ provider: 'fake' });
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ file: configFile, text: TEXT });
    }
  });

  it('issue 22 item 4 no build, no memo; a memo that cannot be written only costs the validation', () => {
    const dir = home();
    expect(homeConfigMemo(dir, undefined)).toBeUndefined();
    expect(homeConfigMemo(dir, '../../escape')).toBeUndefined();
    // `cache` is a file, so no entry can be made (even by root): the start validates every time.
    writeFileSync(homePaths(dir).cache, 'not a folder');
    for (let i = 0; i < 2; i++) expect(loadConfig(dir, homeConfigMemo(dir, BUILD))).toMatchObject({ provider: 'fake' });
    expect(readFileSync(homePaths(dir).cache, 'utf8')).toBe('not a folder');
    // Not kept, and it says so: the start that validated is then as every later one.
    expect(homeConfigMemo(dir, BUILD)?.remember(join(dir, 'config.json'), TEXT, {}, [])).toBe(false);
  });
});
