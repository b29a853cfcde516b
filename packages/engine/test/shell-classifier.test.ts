import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParsedToolCall } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { autoPasses, classify } from '../src/approval/index.js';

function workspace(): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec10-')));
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'build'), { recursive: true });
  writeFileSync(join(ws, 'a.o'), '');
  return ws;
}

const bash = (command: string): ParsedToolCall => ({
  id: 'b',
  name: 'bash',
  arguments: JSON.stringify({ command }),
  input: { command },
});

/** Whether `full` mode would run the command without asking (APPR-1). */
function passesInFull(ws: string, command: string): boolean {
  return autoPasses('full', 'bash', classify(bash(command), { workspace: ws }), false);
}

// SEC-10: each of these asks in full mode, however it is spelled.
const ASKS: ReadonlyArray<[string, string]> = [
  ['rm -rf /.', 'a trailing /. still names the root'],
  ['rm -rf `echo /`', 'a substitution gives the target'],
  ['rm -rf $(echo /)', 'a substitution gives the target'],
  ['r""m -rf /', 'quotes inside the program name'],
  ["'r'm -rf /", 'quotes inside the program name'],
  ['\\rm -rf /', 'a backslash before the program name'],
  ['cat ~/.s?h/id_rsa', 'a glob that matches ~/.ssh'],
  ['cat ~/.ss*/id_*', 'a glob that matches ~/.ssh'],
  ['git push origin +main', 'a force push by refspec'],
  ['git push --force-with-lease=main origin main', 'a force push'],
  ['git push origin :main', 'a branch deletion'],
  ['git push --mirror', 'a mirror push'],
  ['pkill -9 node', 'pkill'],
  ['killall node', 'killall'],
  ['su -c "id"', 'su'],
  ['halt', 'halt'],
  ['poweroff', 'poweroff'],
  ['systemctl stop sshd', 'systemctl'],
  ['echo x > /etc/passwd', 'an outside redirection'],
  ['echo x >> ~/.bashrc', 'an outside redirection'],
  ['echo x 2> /etc/x', 'an outside redirection of a descriptor'],
  ['echo x &> /etc/x', 'an outside redirection of both'],
  ['rm -rf ..', 'the parent of the workspace'],
  ['rm -rf ../other', 'a sibling of the workspace'],
  ['rm -rf .', 'the workspace itself'],
  ['rm -rf "$HOME/x"', 'an expansion in the target'],
  ['rm -rf $' + '{TMPDIR}/x', 'an expansion in the target'],
  ['rm -rf ../*', 'a glob that climbs out'],
  ['cd / && rm -rf tmp', 'a cd out of the workspace, then a relative target'],
  ['cd "$X" && rm -rf build', 'a cd to a place that cannot be known'],
  ['cp a.o /usr/local/bin/a', 'a copy out'],
  ['mv a.o ~/a.o', 'a move out'],
  ['tee /etc/hosts < a.o', 'tee out'],
  ['ln -sf /etc/passwd x && echo y > x', 'a link to an outside file'],
  ["sed -i 's/a/b/' /etc/hosts", 'sed -i outside'],
  ['find / -name x -delete', 'find -delete outside'],
  ['find .. -exec rm {} +', 'find -exec outside'],
  ['dd if=/dev/zero of=/dev/sda', 'dd of= outside'],
  ['$CMD -rf /', 'a program that cannot be known'],
  ['"$(echo rm)" -rf /', 'a program that cannot be known'],
  ["$'\\x72m' -rf /", 'ANSI-C quoting in the program name'],
  ['eval "rm -rf /tmp/x"', 'eval of an outside delete'],
  ['sh -c "rm -rf /tmp/x"', 'sh -c of an outside delete'],
  ['bash -lc "echo x > /etc/y"', 'bash -c of an outside write'],
  ['echo $(rm -rf /tmp/x)', 'a substitution that deletes outside'],
  ['ls | xargs rm -rf', 'xargs feeds rm unknown operands'],
  ['timeout 5 rm -rf /tmp/x', 'a wrapper before rm'],
  ['env FOO=1 rm -rf /tmp/x', 'env before rm'],
  ['nohup rm -rf /opt/x &', 'nohup before rm'],
  ['X=1 rm -rf /opt/x', 'an assignment before rm'],
  ['git -C /etc commit -am x', 'git in another folder'],
];

// And these stay in the workspace: full mode runs them without asking.
const PASSES: readonly string[] = [
  'npm test',
  'rm -rf build',
  'rm -rf ./build dist',
  'rm -f *.o',
  'mkdir -p out && cp a.o out/',
  'echo done > build/log.txt 2>&1',
  'make 2>/dev/null',
  'cd build && rm -rf obj',
  'git push origin feature-f',
  'git status && git diff',
  "sed 's/a/b/' a.o",
  'find . -name "*.o" -delete',
  'cat a.o | grep x',
  'echo "$HOME"',
  'ls -la ~',
];

describe('the full-mode shell classifier (SEC-10, APPR-1)', () => {
  it('SEC-10 APPR-1 writes, deletes and escalations outside the workspace ask in full mode, however they are spelled', () => {
    const ws = workspace();
    const passed = ASKS.filter(([command]) => passesInFull(ws, command)).map(([command, why]) => `${command}  (${why})`);
    expect(passed).toEqual([]);
  });

  it('SEC-10 commands the classifier can prove stay in the workspace still pass in full mode', () => {
    const ws = workspace();
    const asked = PASSES.filter((command) => !passesInFull(ws, command)).map(
      (command) => `${command}: ${classify(bash(command), { workspace: ws }).summary}`,
    );
    expect(asked).toEqual([]);
  });

  it('SEC-10 the card names what the command reaches', () => {
    const ws = workspace();
    expect(classify(bash('echo x > /etc/passwd'), { workspace: ws })).toMatchObject({
      authority: 'outside_workspace',
      summary: expect.stringContaining('/etc/passwd'),
    });
    expect(classify(bash('cat ~/.s?h/id_rsa'), { workspace: ws }).risk).toBe('forbidden');
    expect(classify(bash('git push origin +main'), { workspace: ws }).risk).toBe('forbidden');
    expect(classify(bash('pkill -9 node'), { workspace: ws }).risk).toBe('privileged');
  });
});
