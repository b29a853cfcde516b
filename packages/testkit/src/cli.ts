/** `crystal-fake-provider --script FILE [--port N] [--wire NAME] [--record FILE]`: the fake provider as a process. */
import { appendFileSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FakeProvider } from './fake-provider.js';
import type { FakeScript } from './script.js';

const usage = 'Usage: crystal-fake-provider --script FILE [--port N] [--wire openai|deepseek] [--record FILE]';

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      script: { type: 'string' },
      port: { type: 'string', default: '0' },
      wire: { type: 'string' },
      record: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.script) {
    process.stdout.write(`${usage}\n`);
    process.exitCode = values.help ? 0 : 1;
    return;
  }
  let script: FakeScript;
  try {
    script = JSON.parse(readFileSync(values.script, 'utf8')) as FakeScript;
  } catch (error) {
    process.stderr.write(`crystal-fake-provider: cannot read script ${values.script}: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const fake = await FakeProvider.start({
    wire: values.wire ?? script.wire ?? 'openai',
    replies: script.replies,
    whenExhausted: script.whenExhausted ?? 'repeat-last',
    port: Number(values.port),
    ...(script.models ? { models: script.models } : {}),
  });
  const record = values.record;
  if (record) {
    let seen = 0;
    setInterval(() => {
      while (seen < fake.requests.length) appendFileSync(record, `${JSON.stringify(fake.requests[seen++])}\n`);
    }, 50).unref();
  }
  process.stdout.write(`listening ${fake.url} (baseUri ${fake.baseUri})\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
