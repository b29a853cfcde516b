/**
 * The node:http floor for `crystal run`: the same streaming Chat Completions POST as fetch-floor.mjs, made with
 * `node:http` and a keep-alive agent, reading the SSE body to the end and counting `data:` lines.
 * Usage: node http-floor.mjs BASE_URI MODEL API_KEY. Prints {"dataLines":N,"done":bool}.
 */
import { postStream } from './sse-post.mjs';

const [baseUri, model, apiKey] = process.argv.slice(2);

const system =
  'You are Crystal Code, a terminal AI coding agent. You help the user with software engineering tasks in their ' +
  'project: read and edit files, run commands, and explain what you did. Be concise and precise; prefer small, ' +
  'verifiable steps. This text stands in for the real system prompt, at about its size.';

let dataLines = 0;
let done = false;
const messages = [
  { role: 'system', content: system },
  { role: 'user', content: 'hi' },
];
await postStream(baseUri, apiKey, { model, messages }, (line) => {
  if (!line.startsWith('data:')) return;
  dataLines++;
  if (line.slice(5).trim() === '[DONE]') done = true;
});
process.stdout.write(`${JSON.stringify({ dataLines, done })}\n`);
process.exit(0);
