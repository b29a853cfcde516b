/** SBX-3 and the host ask in the real terminal (node-pty, @xterm/headless, real bwrap, real proxy). */
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
let web: Server | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
  web?.closeAllConnections();
  await new Promise((r) => (web ? web.close(r) : r(undefined)));
  web = undefined;
});

describe('the OS sandbox in the terminal', () => {
  it('SBX-3 the bash card says the call runs sandboxed; a host off the allow list asks on its own card', async () => {
    web = createServer((_req, res) => res.end('page from the host\n'));
    await new Promise<void>((r) => web?.listen(0, '127.0.0.1', r));
    const port = (web.address() as { port: number }).port;
    const workspace = tempDir('crystal-ws-');
    // A workspace script: the classifier sees a Workspace command; the host decision is the proxy's.
    writeFileSync(join(workspace, 'fetch.sh'), 'curl -s "$1"\n');
    const call = { id: 'call_bash', name: 'bash', arguments: { command: `sh fetch.sh http://localhost:${port}/` } };
    current = await scenario({ workspace, replies: [{ toolCalls: [call] }, { text: 'Fetched it.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('fetch the page');
    session.write('\r');
    const card = await session.waitFor('Approve Bash?');
    expect(card).toContain('Sandboxed: workspace-write (bubblewrap)');
    session.write('y');
    const hostCard = await session.waitFor('Network access to localhost');
    expect(hostCard).toContain('Authority Network');
    session.write('s');
    await session.waitFor('Fetched it.');
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('page from the host');
  });
});
