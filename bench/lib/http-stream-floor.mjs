/**
 * The streaming floor: the least a correct client does with a Chat Completions stream over `node:http` (keep-alive
 * agent): split the SSE body into events, JSON.parse each `data:` payload, take the delta's text, and print the text
 * and usage as one JSON line at the end. Usage: node http-stream-floor.mjs BASE_URI MODEL API_KEY.
 */
import http from 'node:http';

const [baseUri, model, apiKey] = process.argv.slice(2);
const body = JSON.stringify({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
});

let text = '';
let usage;
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
        const events = (rest + chunk).split('\n\n');
        rest = events.pop();
        for (const event of events) {
          for (const line of event.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const data = line.slice(5).trim();
            if (data === '[DONE]') {
              done = true;
              continue;
            }
            const frame = JSON.parse(data);
            const delta = frame.choices?.[0]?.delta?.content;
            if (typeof delta === 'string') text += delta;
            if (frame.usage) usage = frame.usage;
          }
        }
      }
      resolve();
    },
  );
  req.on('error', reject);
  req.end(body);
});
process.stdout.write(`${JSON.stringify({ done, text, usage })}\n`);
process.exit(0);
