/**
 * Start-up (issue 22 item 4, CLI-7): `crystal --version` and `--help` are answered by the bin
 * and one small CommonJS file, before the ES module loader starts (which alone costs a Node
 * start about a third more). Proved on the real bin by what the process loaded, written at
 * exit by a preloaded probe: Node's own module list and the files `require` read.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, runCrystal, tempDir } from '@crystal/testkit';
import { describe, expect, it } from 'vitest';

function loadProbe(): { env: Record<string, string>; loaded: () => { internal: string[]; files: string[] } } {
  const dir = tempDir('crystal-load-probe-');
  const probe = join(dir, 'load-probe.cjs');
  const report = join(dir, 'loaded.json');
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ internal: process.moduleLoadList, files: Object.keys(require.cache) })));\n`,
  );
  return {
    env: { NODE_OPTIONS: `--require ${probe}` },
    loaded: () => JSON.parse(readFileSync(report, 'utf8')),
  };
}

describe('CLI-7 the --version and --help fast path (issue 22 item 4)', () => {
  for (const args of [['--version'], ['-v'], ['version'], ['--help'], ['-h'], ['help']]) {
    it(`CLI-7 crystal ${args.join(' ')} answers before the ES module loader starts, from the bin and dist/fast-path.cjs alone`, async () => {
      const probe = loadProbe();
      const result = await runCrystal(args, { env: probe.env });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        args[0]?.includes('v') ? /^Crystal Code \d+\.\d+\.\d+\n/ : /^Crystal Code: an AI coding agent/,
      );
      const { internal, files } = probe.loaded();
      expect(internal).not.toContain('NativeModule internal/modules/esm/loader');
      expect(files.filter((f) => !f.endsWith('load-probe.cjs'))).toEqual([
        crystalBin,
        join(crystalBin, '../../dist/fast-path.cjs'),
      ]);
    });
  }

  it('CLI-7 (issue 22) every other command still loads the bundle (an unknown command is refused by it), and not dist/fast-path.cjs', async () => {
    const probe = loadProbe();
    const result = await runCrystal(['no-such-command'], { env: probe.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("crystal: unknown command 'no-such-command'. Run 'crystal --help' for the commands.\n");
    const { files } = probe.loaded();
    expect(files).toContain(join(crystalBin, '../../dist/launch.cjs'));
    expect(files).not.toContain(join(crystalBin, '../../dist/fast-path.cjs'));
  });
});
