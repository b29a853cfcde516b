/**
 * `crystal demo [--run] [--keep]`: the main job end to end with no key and no network. It
 * starts the bundled fake provider on a free 127.0.0.1 port with a scripted session, makes a
 * temporary Home and workspace, and runs `crystal` (or, with `--run`, `crystal run`) there:
 * a read, an edit that asks for approval, and a streamed Markdown answer with a table.
 * Afterwards it stops the server and removes both folders (unless `--keep`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '@crystal/engine';
import { type FakeReply, FakeProvider } from '@crystal/testkit';

/** The JavaScript the demo's edit writes: a template literal, as source text. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: source code for the demo file, not a template
const TEMPLATE_LINE = 'return `Hello, ${name}`;';

const GREET = `export function greet(name) {\n  return 'Hello, ' + name;\n}\n`;

export const DEMO_PROMPT = 'Make greet() use a template literal and tell me what changed.';

/** The scripted model: read, edit (asks in the terminal), then a streamed Markdown answer. */
export function demoReplies(): FakeReply[] {
  return [
    {
      text: "I'll read the file first.",
      toolCalls: [{ id: 'call_read', name: 'read', arguments: { path: 'greet.js' } }],
      usage: { input: 420, output: 18 },
      delayMs: 15,
    },
    {
      text: 'Now the edit.',
      toolCalls: [
        {
          id: 'call_edit',
          name: 'edit',
          arguments: { path: 'greet.js', old_string: "return 'Hello, ' + name;", new_string: TEMPLATE_LINE },
        },
      ],
      usage: { input: 520, output: 40 },
      delayMs: 15,
    },
    {
      text: [
        '## Done\n\n',
        '`greet()` now builds its string with a **template literal**.\n\n',
        '| | Before | After |\n',
        '| :-- | :-- | :-- |\n',
        `| Code | \`'Hello, ' + name\` | \`\` ${TEMPLATE_LINE.slice(7, -1)} \`\` |\n`,
        '| Lines changed | | 1 |\n\n',
        'This was the offline demo: a scripted fake provider on 127.0.0.1, no key, no network. ',
        "Connect a real provider with `crystal login`; see the README's *Connect a provider*.\n",
      ].flatMap((piece) => piece.match(/\S+\s*|\s+/g) ?? []),
      usage: { input: 640, output: 90 },
      delayMs: 12,
    },
  ];
}

export async function demoCommand(argv: readonly string[]): Promise<number> {
  let values: { run?: boolean; keep?: boolean; help?: boolean };
  try {
    values = parseArgs({
      args: [...argv],
      options: { run: { type: 'boolean' }, keep: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Usage: crystal demo [--run] [--keep]`);
  }
  if (values.help) {
    process.stdout.write(
      'Usage: crystal demo [--run] [--keep]\n\nA scripted session against the bundled fake provider in a temporary workspace: no key,\nno network. In the terminal by default: it sends the first prompt itself, you approve the\nedit when asked, and /quit or Ctrl+C twice ends it. --run prints the same session headless.\n--keep leaves the temporary folders for a look.\n',
    );
    return 0;
  }
  const root = mkdtempSync(join(tmpdir(), 'crystal-demo-'));
  const home = join(root, 'home');
  const workspace = join(root, 'workspace');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'greet.js'), GREET);
  const fake = await FakeProvider.start({ replies: demoReplies(), whenExhausted: 'error' });
  const cleanup = async (): Promise<void> => {
    await fake.close().catch(() => undefined);
    if (!values.keep) rmSync(root, { recursive: true, force: true });
  };
  writeFileSync(
    join(home, 'config.json'),
    `${JSON.stringify(
      {
        provider: 'demo',
        model: 'demo-model',
        providers: {
          demo: {
            protocol: 'openai',
            baseUri: fake.baseUri,
            apiKey: 'demo',
            models: { 'demo-model': { contextWindow: 128000, maxTokens: 4096 } },
          },
        },
        workspaceTrust: false,
      },
      null,
      2,
    )}\n`,
  );
  process.stderr.write(`Crystal Code demo: fake provider on ${fake.url}, workspace ${workspace}\n`);
  try {
    if (values.run) {
      const { runCommand } = await import('./run-command.js');
      // Headless, an edit that would ask is denied; --approval edit lets the demo's edit through.
      return await runCommand(['--home', home, '--workspace', workspace, '--approval', 'edit', DEMO_PROMPT]);
    }
    const { interactiveCommand } = await import('./interactive/index.js');
    return await interactiveCommand(['--home', home, '--workspace', workspace], { firstPrompt: DEMO_PROMPT });
  } finally {
    await cleanup();
    process.stderr.write(
      values.keep
        ? `Demo finished; kept ${root}. The fake provider is stopped.\n`
        : 'Demo finished; the fake provider is stopped and its temporary folders are removed (the session above went with them).\n',
    );
  }
}
