/**
 * The floor for `crystal run`: the same streaming Chat Completions POST made with plain `fetch`, reading the SSE body to
 * the end and counting `data:` lines. Usage: node fetch-floor.mjs BASE_URI MODEL API_KEY. Prints {"dataLines":N,"done":bool}.
 */
const [baseUri, model, apiKey] = process.argv.slice(2);

const system =
  'You are Crystal Code, a terminal AI coding agent. You help the user with software engineering tasks in their ' +
  'project: read and edit files, run commands, and explain what you did. Be concise and precise; prefer small, ' +
  'verifiable steps. This text stands in for the real system prompt, at about its size.';

const response = await fetch(new URL('chat/completions', baseUri), {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
  body: JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'hi' },
    ],
    stream: true,
    stream_options: { include_usage: true },
  }),
});
if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);

let dataLines = 0;
let done = false;
let rest = '';
for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
  const lines = (rest + chunk).split('\n');
  rest = lines.pop();
  for (const line of lines) {
    if (!line.startsWith('data:')) continue;
    dataLines++;
    if (line.slice(5).trim() === '[DONE]') done = true;
  }
}
process.stdout.write(`${JSON.stringify({ dataLines, done })}\n`);
