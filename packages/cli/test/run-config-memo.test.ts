/**
 * Issue 22 item 4 through the real bin: `crystal run` validates config.json once per build and
 * text; later starts use what validating gave (Home's `cache/validated-config-<build>.json`,
 * engine config/memo.ts), and any change to the file is validated again.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, FakeProvider, fakeConfig, runCrystal, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeProvider(text: string): Promise<FakeProvider> {
  const fake = await FakeProvider.start({ replies: [{ text }, { text }, { text }] });
  cleanups.push(() => fake.close());
  return fake;
}

/** The main bundle's content hash, as scripts/bundle.mjs names the build. */
const build = createHash('sha256')
  .update(readFileSync(join(crystalBin, '../../dist/crystal.cjs')))
  .digest('hex')
  .slice(0, 16);

describe('issue 22 item 4: crystal run validates an unchanged config.json once per build', () => {
  it('issue 22 item 4 the first run keeps the validated config in Home (named for the build); the next run starts from it', async () => {
    const fake = await fakeProvider('from the configured provider');
    const other = await fakeProvider('from the remembered provider');
    const home = tempHome(fakeConfig(fake.baseUri));
    cleanups.push(() => home.dispose());
    const first = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ text: 'from the configured provider' });
    const cache = join(home.path, 'cache');
    expect(readdirSync(cache)).toEqual([`validated-config-${build}.json`]);
    const file = join(cache, `validated-config-${build}.json`);
    const entry = JSON.parse(readFileSync(file, 'utf8'));
    expect(entry).toMatchObject({
      file: join(home.path, 'config.json'),
      text: readFileSync(join(home.path, 'config.json'), 'utf8'),
    });
    // The next start uses what the entry says (here altered to name another provider), not the file.
    entry.config.providers.fake.baseUri = other.baseUri;
    writeFileSync(file, JSON.stringify(entry), { mode: 0o600 });
    const second = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ text: 'from the remembered provider' });
    expect(fake.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(1);
  }, 30_000);

  it('issue 22 item 4 a config.json changed since is validated again: an invalid edit is refused, a valid one is used', async () => {
    const fake = await fakeProvider('answer');
    const home = tempHome(fakeConfig(fake.baseUri));
    cleanups.push(() => home.dispose());
    expect((await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path })).code).toBe(0);
    home.writeConfig({ ...fakeConfig(fake.baseUri), thinkingEffort: 'loud' });
    const refused = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/config\.json:\d+: thinkingEffort: expected one of/);
    home.writeConfig({ ...fakeConfig(fake.baseUri), model: 'fake-model', thinkingEffort: 'high' });
    const used = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(used.code, used.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home.path, 'cache', `validated-config-${build}.json`), 'utf8')).config).toMatchObject({
      thinkingEffort: 'high',
    });
  }, 30_000);
});
