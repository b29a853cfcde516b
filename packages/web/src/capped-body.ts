/**
 * Reads a request body while counting it (WEB-4): a declared `Content-Length` above the limit is
 * refused before one byte is read, and a body without one is refused as soon as the count
 * passes the limit, so the host never holds more than the limit. The rest of a refused body is
 * not read here; the HTTP server discards it after the answer and closes the connection.
 */
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  constructor(
    readonly limit: number,
    /** Bytes read before the refusal (0 when the declared length alone was too large). */
    readonly received: number,
    readonly declared: number | undefined,
  ) {
    super(
      declared !== undefined
        ? `The request declares ${declared} bytes; this host takes at most ${limit} bytes per message (derived from images.maxBatchBytes).`
        : `The request passed ${limit} bytes, the most this host takes per message (derived from images.maxBatchBytes).`,
    );
  }
}

export class BodyError extends Error {
  override readonly name = 'BodyError';
}

/**
 * Called as a body of declared length arrives: the buffer it is read into and how many of its
 * bytes are in. Bytes below `received` do not change any more.
 */
export type BodyProgress = (body: Buffer, received: number) => void;

/** The whole body, at most `limit` bytes, in one buffer (allocated once when the length is declared). */
export function readCappedBody(incoming: IncomingMessage, limit: number, onProgress?: BodyProgress): Promise<Buffer> {
  const header = incoming.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && (!Number.isSafeInteger(declared) || declared < 0)) {
    return Promise.reject(new BodyError(`Content-Length '${header}' is not a byte count.`));
  }
  if (declared !== undefined && declared > limit) return Promise.reject(new BodyTooLargeError(limit, 0, declared));
  return new Promise<Buffer>((resolve, reject) => {
    const whole = declared !== undefined ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (error?: Error): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      if (error) {
        incoming.pause();
        reject(error);
      }
    };
    const onData = (chunk: Buffer): void => {
      if (received + chunk.length > limit) {
        stop(new BodyTooLargeError(limit, received, undefined));
        return;
      }
      if (whole) {
        if (received + chunk.length > whole.length) {
          stop(new BodyError('The body is longer than its Content-Length.'));
          return;
        }
        chunk.copy(whole, received);
      } else {
        chunks.push(chunk);
      }
      received += chunk.length;
      if (whole && onProgress) onProgress(whole, received);
    };
    const onEnd = (): void => {
      stop();
      if (whole && received !== whole.length) {
        reject(new BodyError(`The body ended after ${received} of ${whole.length} declared bytes.`));
        return;
      }
      resolve(whole ?? (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received)));
    };
    const onError = (error: Error): void => stop(new BodyError(`The request failed while it was read: ${error.message}`));
    const onClose = (): void => {
      if (!incoming.readableEnded) stop(new BodyError('The client closed the request before its body ended.'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
    incoming.resume();
  });
}
