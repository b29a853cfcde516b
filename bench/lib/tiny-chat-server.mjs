/**
 * A Chat Completions server on 127.0.0.1 that answers every request with the same two-frame
 * stream ("ok", then stop): for start-up figures, where the reply should cost nothing.
 * `onRequest` is called as each request arrives (before its body is read).
 */
import http from 'node:http';

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const reply = `${chunk({ content: 'ok' })}${chunk({}, 'stop')}data: [DONE]\n\n`;

/** Resolves `{ server, baseUri }` once listening. */
export async function startTinyChatServer(onRequest = () => {}) {
  const server = http.createServer((req, res) => {
    onRequest();
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(reply);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUri: `http://127.0.0.1:${server.address().port}/v1/` };
}
