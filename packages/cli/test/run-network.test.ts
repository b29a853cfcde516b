/**
 * The real `crystal run` binary on the network settings (issue 22 item 2, SEC-9): a private CA
 * through `caFile` or NODE_EXTRA_CA_CERTS, HTTPS_PROXY through a CONNECT proxy on 127.0.0.1,
 * and provider error bodies that never bring a key to the terminal or the session file.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { SessionFiles } from '@crystal/engine';
import {
  crystalBin,
  FakeProvider,
  fakeConfig,
  makeTestCertificates,
  runCrystal,
  startTestProxy,
  type TempHome,
  type TestCertificates,
  type TestProxy,
  tempDir,
  tempHome,
  testCompileCache,
} from '@crystal/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

let certs: TestCertificates;
let fake: FakeProvider | undefined;
let proxy: TestProxy | undefined;
let home: TempHome | undefined;
beforeAll(() => {
  certs = makeTestCertificates('provider.test');
});
afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));
afterEach(async () => {
  await fake?.close();
  await proxy?.close();
  home?.dispose();
  fake = undefined;
  proxy = undefined;
  home = undefined;
});

async function tlsFake(): Promise<FakeProvider> {
  fake = await FakeProvider.start({ replies: [{ text: 'secure hello' }], tls: { key: certs.key, cert: certs.cert } });
  return fake;
}

describe('crystal run: certificates, proxies and error bodies', () => {
  it('caFile in config.json (relative to Home) trusts a private CA', async () => {
    const server = await tlsFake();
    home = tempHome();
    home.writeFile('ca/corp.pem', readFileSync(certs.caFile, 'utf8'));
    home.writeConfig(fakeConfig(server.baseUri, { caFile: 'ca/corp.pem' }));
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'secure hello' });
  });

  it('NODE_EXTRA_CA_CERTS trusts a private CA', async () => {
    const server = await tlsFake();
    home = tempHome(fakeConfig(server.baseUri));
    const result = await runCrystal(['run', '--format', 'json', 'hi'], {
      home: home.path,
      env: { NODE_EXTRA_CA_CERTS: certs.caFile },
    });
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'secure hello' });
  });

  it('an untrusted certificate fails at once (no retries) with a message naming caFile', async () => {
    const server = await tlsFake();
    home = tempHome(fakeConfig(server.baseUri));
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path });
    expect(result.code).not.toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ stopReason: 'failed', retries: 0 });
    expect(out.error).toContain('caFile');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('a caFile that cannot be read is a clear usage error naming caFile', async () => {
    const server = await tlsFake();
    home = tempHome(fakeConfig(server.baseUri, { caFile: '/nonexistent/corp.pem' }));
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('caFile');
    expect(result.stderr).toContain('/nonexistent/corp.pem');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(server.requests).toHaveLength(0);
  });

  it('a caFile with no PEM certificate (a DER file) or a damaged one is a usage error naming caFile and the fix', async () => {
    const server = await tlsFake();
    const pem = readFileSync(certs.caFile, 'utf8');
    const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');
    home = tempHome();
    // The same CA in DER (what a Windows export or a `.cer` download often is): Node would take it without a word.
    home.writeFile('ca/corp.cer', Buffer.from(body, 'base64'));
    home.writeConfig(fakeConfig(server.baseUri, { caFile: 'ca/corp.cer' }));
    const der = await runCrystal(['run', 'hi'], { home: home.path });
    expect(der.code).toBe(1);
    expect(der.stderr).toContain('caFile');
    expect(der.stderr).toContain(join(home.path, 'ca/corp.cer'));
    expect(der.stderr).toContain('openssl x509 -inform der');
    expect(der.stderr).not.toMatch(/\n\s+at /);
    // A PEM block with one line of its body gone (still base64, no longer a certificate).
    home.writeFile('ca/cut.pem', pem.split('\n').toSpliced(3, 1).join('\n'));
    home.writeConfig(fakeConfig(server.baseUri, { caFile: 'ca/cut.pem' }));
    const cut = await runCrystal(['run', 'hi'], { home: home.path });
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain('Certificate 1 of 1');
    expect(cut.stderr).toContain('damaged');
    expect(server.requests).toHaveLength(0);
  });

  it('HTTPS_PROXY sends the request through a CONNECT tunnel', async () => {
    const server = await tlsFake();
    proxy = await startTestProxy();
    home = tempHome(fakeConfig(`https://provider.test:${server.port}/v1/`, { caFile: certs.caFile }));
    const result = await runCrystal(['run', '--format', 'json', 'hi'], {
      home: home.path,
      env: { HTTPS_PROXY: proxy.url },
    });
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'secure hello' });
    expect(proxy.seen).toEqual([`provider.test:${server.port}`]);
  });

  it('REL-5 a proxy that never answers the CONNECT: the connect timeout names the proxy, and SIGTERM ends the run at once, saved', async () => {
    // A proxy that takes every connection and never says a word.
    const held: Socket[] = [];
    const silent = createServer((socket) => {
      held.push(socket);
      socket.on('error', () => {});
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      home = tempHome(fakeConfig('https://provider.test/v1/', { retry: { connectTimeoutSeconds: 0.5, maxRetries: 0 } }));
      const timedOut = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, env: { HTTPS_PROXY: proxyUrl } });
      expect(timedOut.code).toBe(2);
      expect(timedOut.stderr).toContain(
        `the proxy ${proxyUrl.slice('http://'.length)} did not answer the CONNECT within 0.5 s (retry.connectTimeoutSeconds)`,
      );

      // Default timeouts (30 s to connect): SIGTERM while the CONNECT waits. Before, the abort never reached the
      // CONNECT, so the first SIGTERM did nothing and the run waited for the proxy for ever.
      home.writeConfig(fakeConfig('https://provider.test/v1/'));
      const run = spawn(process.execPath, [crystalBin, 'run', 'hi'], {
        cwd: tempDir('crystal-ws-'),
        env: {
          PATH: process.env.PATH,
          HOME: home.path,
          CRYSTAL_HOME: home.path,
          CRYSTAL_COMPILE_CACHE: testCompileCache(),
          HTTPS_PROXY: proxyUrl,
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let stdout = '';
      run.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      const closed = new Promise<number | null>((resolve) => run.once('close', resolve));
      for (let i = 0; i < 500 && held.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(held).toHaveLength(2);
      run.kill('SIGTERM');
      const killed = setTimeout(() => run.kill('SIGKILL'), 10_000);
      expect(await closed).toBe(5);
      clearTimeout(killed);
      expect(stdout).toContain('[Stopped] interrupted');
      const sessions = readdirSync(join(home.path, 'sessions')).filter((f) => /^[^.]+\.json$/.test(f));
      expect(sessions).toHaveLength(2);
      for (const head of sessions) {
        const { state } = SessionFiles.load(home.path, head.replace(/\.json$/, ''));
        expect(state.archive[0]).toMatchObject({ role: 'user' });
      }
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('SEC-9 a key echoed in an error body reaches neither the terminal nor the session file', async () => {
    const key = 'sk-live-echoed-0123456789abcdef';
    fake = await FakeProvider.start({
      replies: [{ error: { status: 401, message: `Incorrect API key provided: ${key}. Bearer ${key}` } }],
    });
    home = tempHome(fakeConfig(fake.baseUri));
    const config = JSON.parse(readFileSync(join(home.path, 'config.json'), 'utf8'));
    config.providers.fake.apiKey = key;
    home.writeConfig(config);
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Incorrect API key provided');
    expect(result.stdout + result.stderr).not.toContain(key);
    const sessions = join(home.path, 'sessions');
    for (const name of readdirSync(sessions)) expect(readFileSync(join(sessions, name), 'utf8')).not.toContain(key);
  });
});
