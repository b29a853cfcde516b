/** The testkit's fake provider as a process, for the figures that talk HTTP to it (run-stream, transport, spikes). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../node_modules/.bin/crystal-fake-provider', import.meta.url));

/**
 * Starts the fake provider with a reply script on a free port; resolves `{ child, url, baseUri }` once it prints its
 * listening line (`url` its origin, `baseUri` what a provider's config names).
 */
export function startFakeProvider(scriptFile) {
  const child = spawn(process.execPath, [bin, '--script', scriptFile, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error('fake provider did not start within 10 s')), 10_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill();
      reject(error);
    };
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const match = /listening (\S+) \(baseUri (\S+)\)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], baseUri: match[2] });
      }
    });
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`fake provider exited ${code} before listening\n${err}${out}`)));
  });
}

/** Stops a provider `startFakeProvider` started (undefined: nothing to stop). */
export function stopFakeProvider(fake) {
  fake?.child.removeAllListeners('exit');
  fake?.child.kill();
}
