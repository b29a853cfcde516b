/** `crystal web` options (CLI-3): usage errors exit 1 before anything listens. */
import { runCrystal } from '@crystal/testkit';
import { describe, expect, it } from 'vitest';

describe('crystal web options', () => {
  it('CLI-3: --help describes --port, --host and --open', async () => {
    const result = await runCrystal(['web', '--help']);
    expect(result.code).toBe(0);
    for (const flag of ['--port N', '--host ADDR', '--open', '--resume ID']) expect(result.stdout).toContain(flag);
  });

  it('CLI-3: a bad port, a host name that is not an address, a prompt or a run-only flag is a usage error', async () => {
    const cases: [string[], RegExp][] = [
      [['web', '--port', 'eighty'], /--port must be a port number/],
      [['web', '--port', '70000'], /--port must be a port number/],
      [['web', '--host', 'example.com'], /--host must be an IP address/],
      [['web', 'hello'], /takes no prompt/],
      [['web', '--format', 'json'], /belong to 'crystal run'/],
      [['web', '--bogus'], /Unknown option/],
    ];
    for (const [args, message] of cases) {
      const result = await runCrystal(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
  });
});
