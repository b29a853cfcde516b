/**
 * SEC-6: which variable names count as secrets and never reach a child (child-env.ts). The rule
 * is case-insensitive and whole-word at the end; these cases pin it down name by name.
 */
import { describe, expect, it } from 'vitest';
import { childEnvironment, looksSecret } from '../src/child-env.js';

describe('SEC-6 secret-looking variable names', () => {
  it('SEC-6 keys, tokens, passwords, secrets, private and access keys, auth and credentials are secret, in any case', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'API_KEY',
      'APIKEY',
      'MY_APIKEY',
      'openai_api_key',
      'GITHUB_TOKEN',
      'TOKEN',
      'npm_token',
      'AWS_SECRET_ACCESS_KEY',
      'CLIENT_SECRET',
      'SECRETS_DIR',
      'DB_PASSWORD',
      'MYSQL_PASSWD',
      'SSH_PRIVATE_KEY',
      'PRIVATE_KEY',
      'S3_ACCESS_KEY',
      'BASIC_AUTH',
      'AUTH',
      'GOOGLE_CREDENTIALS',
      'AZURE_CREDENTIAL',
      'Some_Secret_Thing',
    ])
      expect(looksSecret(name), name).toBe(true);
  });

  it('SEC-6 a word that only ends like one, or has it in the middle, is not: the suffix must be the whole name or follow an underscore', () => {
    for (const name of [
      'PATH',
      'HOME',
      'KEYBOARD_LAYOUT',
      'MONKEY',
      'MYTOKEN',
      'TOKENS_DIR',
      'OAUTH',
      'AUTHOR',
      'AUTH_MODE',
      'API_KEY_FILE_DIR',
      'PUBLIC_KEY',
      'PRIVATE_KEYS',
      'CREDENTIALSX',
      'TERM',
    ])
      expect(looksSecret(name), name).toBe(false);
  });

  it('SEC-6 childEnvironment drops them and CRYSTAL_HOME, keeps the rest, and passes a listed one', () => {
    const env = { PATH: '/bin', GITHUB_TOKEN: 't', DB_PASSWORD: 'p', CRYSTAL_HOME: '/h', KEYBOARD_LAYOUT: 'us', NPM_TOKEN: 'n' };
    expect(childEnvironment({ shellEnvironment: { pass: ['NPM_TOKEN'] } }, env)).toEqual({
      PATH: '/bin',
      KEYBOARD_LAYOUT: 'us',
      NPM_TOKEN: 'n',
    });
  });
});
