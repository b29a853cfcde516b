/**
 * Replays one recorded response body (a real provider's stream, `../shared/realstreams/`) to
 * every request, over real HTTP on 127.0.0.1, so a wire's decoder is tested through its client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedServer {
  readonly baseUri: string;
  readonly requests: number;
  close(): Promise<void>;
}

export async function serveRecorded(body: Buffer, contentType: string): Promise<RecordedServer> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUri: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
