/**
 * The streaming floor: the least a correct client does with a Chat Completions stream over `node:http` (keep-alive
 * agent): read the SSE body line by line, JSON.parse each `data:` payload, take the delta's text, and print the text
 * and usage as one JSON line at the end. Usage: node http-stream-floor.mjs BASE_URI MODEL API_KEY.
 */
import { postStream } from './sse-post.mjs';

const [baseUri, model, apiKey] = process.argv.slice(2);

let text = '';
let usage;
let done = false;
await postStream(baseUri, apiKey, { model, messages: [{ role: 'user', content: 'hi' }] }, (line) => {
  if (!line.startsWith('data:')) return;
  const data = line.slice(5).trim();
  if (data === '[DONE]') {
    done = true;
    return;
  }
  const frame = JSON.parse(data);
  const delta = frame.choices?.[0]?.delta?.content;
  if (typeof delta === 'string') text += delta;
  if (frame.usage) usage = frame.usage;
});
process.stdout.write(`${JSON.stringify({ done, text, usage })}\n`);
process.exit(0);
