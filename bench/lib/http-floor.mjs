/**
 * The node:http floor for `crystal run`: the same streaming Chat Completions POST as fetch-floor.mjs, made with
 * `node:http` and a keep-alive agent, reading the SSE body to the end and counting `data:` lines.
 * Usage: node http-floor.mjs BASE_URI MODEL API_KEY. Prints {"dataLines":N,"done":bool}.
 */
import http from 'node:http';

const [baseUri, model, apiKey] = process.argv.slice(2);

const system =
  'You are Crystal Code, a terminal AI coding agent. You help the user with software engineering tasks in their ' +
  'project: read and edit files, run commands, and explain what you did. Be concise and precise; prefer small, ' +
  'verifiable steps. This text stands in for the real system prompt, at about its size.';

const body = JSON.stringify({
  model,
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: 'hi' },
  ],
  stream: true,
  stream_options: { include_usage: true },
});

let dataLines = 0;
let done = false;
await new Promise((resolve, reject) => {
  const req = http.request(
    new URL('chat/completions', baseUri),
    {
      method: 'POST',
      agent: new http.Agent({ keepAlive: true }),
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${apiKey}`,
        'content-length': Buffer.byteLength(body),
      },
    },
    async (res) => {
      if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      let rest = '';
      for await (const chunk of res) {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop();
        for (const line of lines) {
          if (!line.startsWith('data:')) continue;
          dataLines++;
          if (line.slice(5).trim() === '[DONE]') done = true;
        }
      }
      resolve();
    },
  );
  req.on('error', reject);
  req.end(body);
});
process.stdout.write(`${JSON.stringify({ dataLines, done })}\n`);
process.exit(0);
