/**
 * The shared part of the node:http floors (http-floor.mjs, http-stream-floor.mjs): one streaming Chat Completions
 * POST over a keep-alive agent; every line of the SSE body goes to `onLine` as it arrives.
 */
import http from 'node:http';

export function postStream(baseUri, apiKey, payload, onLine) {
  const body = JSON.stringify({ ...payload, stream: true, stream_options: { include_usage: true } });
  return new Promise((resolve, reject) => {
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
          for (const line of lines) onLine(line);
        }
        resolve();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
