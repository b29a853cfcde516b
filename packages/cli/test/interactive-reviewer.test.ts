/**
 * Reviewer approvals in the terminal (REV-1, REV-3): the real binary in a pty, read through
 * @xterm/headless; the fake provider plays both the session model and the reviewer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const touch = { toolCalls: [{ id: 'call_touch', name: 'bash', arguments: { command: 'touch reviewed.txt' } }] };

describe('reviewer approvals in the terminal (REV-1, REV-3)', () => {
  it('REV-3 a review allow shows the auto-pass card with Reason Review, the verdict and the rationale', async () => {
    current = await scenario({
      args: ['--approval', 'review'],
      config: { sandbox: 'off' },
      replies: [
        touch,
        {
          text: '{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"The user asked for reviewed.txt."}',
        },
        { text: 'Created it.' },
      ],
    });
    const { session, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('create reviewed.txt');
    session.write('\r');
    await session.waitFor('Created it.');
    const screen = await session.waitIdle();
    expect(screen).toContain('Auto-approved');
    expect(screen).toContain('Status: Approved · Reason: Review · Risk: Write · Authority: Workspace');
    expect(screen).toContain('Outcome: Allow · Review risk: Low · Authorization: High');
    expect(screen).toContain('Rationale: The user asked for reviewed.txt.');
    expect(screen).not.toContain('Approve Bash?');
    expect(existsSync(join(workspace, 'reviewed.txt'))).toBe(true);
  });

  it('REV-3 verboseApprovals false hides the auto-pass card; REV-1 a reviewer ask shows its verdict on the ask card', async () => {
    current = await scenario({
      args: ['--approval', 'review'],
      config: { sandbox: 'off', verboseApprovals: false },
      replies: [
        { toolCalls: [{ id: 'l', name: 'list', arguments: {} }] },
        touch,
        { text: '{"outcome":"ask","risk":"medium","authorization":"medium","rationale":"Not clearly requested."}' },
        { text: 'Stopped.' },
      ],
    });
    const { session, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('look around');
    session.write('\r');
    const card = await session.waitFor(/Awaiting Approval · \d/);
    expect(card).toContain('Approve Bash?');
    expect(card).toContain('Reviewer: Ask (risk Medium, authorization Medium) · Not clearly requested.');
    session.write('n');
    await session.waitFor('Stopped.');
    const screen = await session.waitIdle();
    expect(screen).not.toContain('Auto-approved');
    expect(existsSync(join(workspace, 'reviewed.txt'))).toBe(false);
  });
});
