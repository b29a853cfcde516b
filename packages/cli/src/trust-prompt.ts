/**
 * Workspace trust for the interactive surfaces (reference §2.4, CLI-8): on the first entry into
 * a directory the terminal asks whether to trust it, before any tool or plugin of the workspace
 * is loaded. A yes is stored (as the git root); a no exits without recording anything, so the
 * next launch asks again. Input that is not a terminal cannot answer: it is an error naming
 * the fix. `"workspaceTrust": false` in config.json turns the question off.
 */
import { createInterface } from 'node:readline/promises';
import { type Config, isTrusted, trustRoot, trustWorkspace, UsageError } from '@crystal/engine';

export async function ensureTrusted(
  home: string,
  workspace: string,
  config: Config,
  io: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } = { stdin: process.stdin, stdout: process.stdout },
): Promise<void> {
  if (config.workspaceTrust === false || isTrusted(home, workspace)) return;
  const root = trustRoot(home, workspace);
  if (!io.stdin.isTTY) {
    throw new UsageError(
      `Workspace ${root} is not trusted yet. Run crystal there in a terminal once and answer yes, or set "workspaceTrust": false in config.json.`,
    );
  }
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  try {
    const answer = await rl.question(
      `Do you trust the files in ${root}?\nCrystal Code will read them, and may edit them and run commands there after your approval. [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim()))
      throw new UsageError(`Not trusted; nothing was recorded. Run crystal again to be asked again.`);
  } finally {
    rl.close();
  }
  await trustWorkspace(home, workspace);
}
