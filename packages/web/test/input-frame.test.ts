/** The `POST /api/send` body and its parser (WEB-4, WEB-11). */
import { describe, expect, it } from 'vitest';
import { bodyLimitFor, decodeInputFrame, MAX_MANIFEST_BYTES } from '../src/input-frame.js';
import { displayName, parseScopedInput } from '../src/input-registry.js';
import { inputFrame } from './support.js';

describe('input frame', () => {
  it('WEB-4: the body limit is the aggregate image limit plus the framing, nothing else', () => {
    expect(bodyLimitFor(50 * 1024 * 1024)).toBe(50 * 1024 * 1024 + 8 + MAX_MANIFEST_BYTES);
  });

  it('decodes the manifest and leaves the image bytes as a view of the body', () => {
    const body = inputFrame('s1', { kind: 'message', text: 'hi', images: [{ name: 'a.png', type: 'image/png', size: 3 }] }, [
      Buffer.from([1, 2, 3]),
    ]);
    const frame = decodeInputFrame(body);
    expect(frame.payload).toEqual(Buffer.from([1, 2, 3]));
    expect(frame.payload.buffer).toBe(body.buffer);
    expect(parseScopedInput(frame.manifest)).toEqual({
      scope: 's1',
      input: { kind: 'message', text: 'hi', images: [{ name: 'a.png', type: 'image/png', size: 3 }] },
    });
  });

  it('refuses a body that is not a frame, a manifest that is too long, and malformed inputs', () => {
    expect(() => decodeInputFrame(Buffer.from('hello world'))).toThrow(/not a Crystal input frame/);
    const long = Buffer.alloc(8);
    long.write('CRB1', 0, 'latin1');
    long.writeUInt32BE(MAX_MANIFEST_BYTES + 1, 4);
    expect(() => decodeInputFrame(long)).toThrow(/at most/);
    expect(() => parseScopedInput({ scope: 's', input: { kind: 'shell' } })).toThrow(
      /message, approval, question, plan or queue/,
    );
    expect(() => parseScopedInput({ scope: 's', input: { kind: 'approval', id: 1, answer: 'yes' } })).toThrow(/once, session/);
    expect(() => parseScopedInput({ input: { kind: 'message' } })).toThrow(/scope/);
    expect(() => parseScopedInput({ scope: 's', input: { kind: 'message', images: [{ size: -1 }] } })).toThrow(/Image 1/);
  });

  it('WEB-8: display names lose control, bidi and marker characters and are capped', () => {
    expect(displayName('a\u202eb\u2063c\n.png')).toBe('abc.png');
    expect(displayName('   ')).toBeUndefined();
    expect(displayName('x'.repeat(500))?.length).toBe(200);
  });
});
