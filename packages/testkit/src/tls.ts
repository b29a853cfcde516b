/**
 * Test TLS material made at test time with `openssl`: a private CA and a server certificate
 * for `provider.test`, `localhost` and 127.0.0.1 signed by it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  readonly dir: string;
  /** The CA certificate file (PEM). */
  readonly caFile: string;
  readonly key: string;
  readonly cert: string;
}

export function makeTestCertificates(hostname = 'provider.test'): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-tls-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Crystal Test CA',
  ]);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${hostname}`]);
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=DNS:${hostname},DNS:localhost,IP:127.0.0.1\n`);
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  ]);
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
}
