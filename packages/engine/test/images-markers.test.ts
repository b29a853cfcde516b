import type { ChatMessage, ImagePart } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import {
  deletedDrafts,
  imageMarker,
  MARKER_PREFIX,
  type MarkerImages,
  projectMessage,
  projectMessages,
  referencedImageNumbers,
  requireImageInput,
  stripMarkerPrefix,
  tagAttachedSpans,
  taggedMarker,
  taggedMarkerNumbers,
  tagLegacyMarkers,
  tagLegacyMessage,
} from '../src/images/index.js';

const P = MARKER_PREFIX;
const images: MarkerImages = new Map([
  [1, { mime: 'image/png', data: 'AAAA', attachmentId: 'a'.repeat(64), name: 'one.png' }],
  [2, { mime: 'image/jpeg', data: 'BBBB', attachmentId: 'b'.repeat(64) }],
  [3, { mime: 'image/webp', uri: 'https://example.com/three.webp' }],
]);

describe('markers', () => {
  it('IMG-4 the provenance prefix is U+2063 INVISIBLE SEPARATOR right before an attached marker', () => {
    expect(MARKER_PREFIX).toBe('\u2063');
    expect(taggedMarker(7)).toBe('\u2063[Image #7]');
    expect(imageMarker(7)).toBe('[Image #7]');
  });

  it('IMG-4 on submit only the attached spans get the prefix; IMG-3 the same text typed stays plain', () => {
    const text = 'compare [Image #1] with [Image #2], not the typed [Image #1]';
    const tagged = tagAttachedSpans(text, [
      { start: text.indexOf('[Image #2]'), number: 2 },
      { start: text.indexOf('[Image #1]'), number: 1 },
    ]);
    expect(tagged).toBe(`compare ${P}[Image #1] with ${P}[Image #2], not the typed [Image #1]`);
    expect(taggedMarkerNumbers(tagged)).toEqual([1, 2]);
  });

  it('IMG-3 a pasted look-alike that already carries the invisible prefix is neutralised at submit', () => {
    const pasted = `text copied from elsewhere ${P}[Image #4] and ${P}${P}[Image #5]`;
    expect(tagAttachedSpans(pasted, [])).toBe('text copied from elsewhere [Image #4] and [Image #5]');
    const span = `${P}[Image #1]`;
    expect(tagAttachedSpans(span, [{ start: 1, number: 1 }])).toBe(`${P}[Image #1]`);
  });

  it('IMG-4 refuses a span that does not hold its own marker (a frontend bug, never silently tagged)', () => {
    expect(() => tagAttachedSpans('see [Image #2]', [{ start: 4, number: 3 }])).toThrow(/does not hold \[Image #3\]/);
    expect(() => tagAttachedSpans('[Image #1]', [{ start: 1, number: 1 }])).toThrow();
  });

  it('IMG-1 projection turns tagged markers into typed image parts in marker order; the label stays beside its bytes', () => {
    const parts = projectMessage(`look at ${P}[Image #2] then ${P}[Image #1], and the typed [Image #3]`, images);
    expect(parts).toEqual([
      { type: 'text', text: 'look at [Image #2]' },
      { type: 'image', mime: 'image/jpeg', data: 'BBBB', attachmentId: 'b'.repeat(64) },
      { type: 'text', text: ' then [Image #1]' },
      { type: 'image', mime: 'image/png', data: 'AAAA', attachmentId: 'a'.repeat(64), name: 'one.png' },
      { type: 'text', text: ', and the typed [Image #3]' },
    ]);
    expect(parts.filter((p): p is ImagePart => p.type === 'image').every((p) => p.data !== undefined)).toBe(true);
  });

  it('IMG-17 an image known by absolute URI projects as a URI part', () => {
    expect(projectMessage(`${P}[Image #3]`, images)).toEqual([
      { type: 'text', text: '[Image #3]' },
      { type: 'image', mime: 'image/webp', uri: 'https://example.com/three.webp' },
    ]);
  });

  it('IMG-13 a tagged marker whose image is unavailable stays its label only: no image part, no prefix', () => {
    expect(projectMessage(`a ${P}[Image #9] b`, images)).toEqual([{ type: 'text', text: 'a [Image #9] b' }]);
    expect(projectMessage('', images)).toEqual([{ type: 'text', text: '' }]);
  });

  it('IMG-5 display and text-only requests strip the prefix', () => {
    const text = `see ${P}[Image #1] and ${P}[Image #2]`;
    expect(stripMarkerPrefix(text)).toBe('see [Image #1] and [Image #2]');
    expect(stripMarkerPrefix(text)).not.toContain(P);
    const request = projectMessages([{ role: 'user', content: [{ type: 'text', text }] }], undefined);
    expect(request).toEqual([{ role: 'user', content: [{ type: 'text', text: 'see [Image #1] and [Image #2]' }] }]);
  });

  it('IMG-1 WIRE-5 only user and tool-result text produce images; assistant and system text are only stripped', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: [{ type: 'text', text: `sys ${P}[Image #1]` }] },
      { role: 'user', content: [{ type: 'text', text: `user ${P}[Image #1]` }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: `I see ${P}[Image #1]` },
          { type: 'tool-call', id: 'c1', name: 'view', arguments: '{}' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: 'c1',
            name: 'view',
            isError: false,
            content: [{ type: 'text', text: `shot ${P}[Image #2]` }],
          },
        ],
      },
    ];
    const projected = projectMessages(messages, images);
    expect(projected[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'sys [Image #1]' }] });
    expect(projected[1]?.content.map((p) => p.type)).toEqual(['text', 'image']);
    expect(projected[2]?.content).toEqual([
      { type: 'text', text: 'I see [Image #1]' },
      { type: 'tool-call', id: 'c1', name: 'view', arguments: '{}' },
    ]);
    const result = projected[3]?.content[0];
    expect(result?.type === 'tool-result' && result.content.map((c) => c.type)).toEqual(['text', 'image']);
    // Text-only: the same transcript has no image at all.
    const textOnly = projectMessages(messages, undefined);
    expect(JSON.stringify(textOnly)).not.toContain('"image"');
    expect(JSON.stringify(textOnly)).not.toContain(P);
  });

  it('IMG-6 an older session tags the plain markers of its saved images at load, and nothing else', () => {
    const saved = new Set([1, 3]);
    expect(tagLegacyMarkers('[Image #1], [Image #2] and [Image #3]', saved)).toBe(
      `${P}[Image #1], [Image #2] and ${P}[Image #3]`,
    );
    const once = tagLegacyMarkers('[Image #1]', saved);
    expect(tagLegacyMarkers(once, saved)).toBe(once);
    const user = tagLegacyMessage({ role: 'user', content: [{ type: 'text', text: 'see [Image #1]' }] }, saved);
    expect(user.content).toEqual([{ type: 'text', text: `see ${P}[Image #1]` }]);
    const tool = tagLegacyMessage(
      {
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'c', name: 't', isError: false, content: [{ type: 'text', text: '[Image #3]' }] },
        ],
      },
      saved,
    );
    expect(JSON.stringify(tool)).toContain(`${P}[Image #3]`);
    const assistant: ChatMessage = { role: 'assistant', content: [{ type: 'text', text: 'about [Image #1]' }] };
    expect(tagLegacyMessage(assistant, saved)).toBe(assistant);
  });

  it('IMG-7 the unsent images whose markers are gone from the composer are discarded; a typed look-alike keeps nothing alive', () => {
    const composer = 'keep [Image #1], typed [Image #2]';
    const tagged = tagAttachedSpans(composer, [{ start: 5, number: 1 }]);
    expect(deletedDrafts(tagged, [1, 2, 3])).toEqual([2, 3]);
    expect(deletedDrafts(tagged, [])).toEqual([]);
  });

  it('IMG-12 the referenced numbers are the tagged markers of user and tool-result text', () => {
    const archive: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: `a ${P}[Image #1] typed [Image #5]` }] },
      { role: 'assistant', content: [{ type: 'text', text: `${P}[Image #6]` }] },
    ];
    const context: ChatMessage[] = [
      {
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'c', name: 't', isError: false, content: [{ type: 'text', text: `${P}[Image #4]` }] },
        ],
      },
    ];
    expect([...referencedImageNumbers(archive, context)].sort()).toEqual([1, 4]);
  });

  it('MODEL-1 a message with attached images is refused before any request when the model has no imageInput', () => {
    const text = `see ${P}[Image #2] and ${P}[Image #2]`;
    expect(() => requireImageInput(text, { provider: 'deepseek', model: 'deepseek-flash', imageInput: false })).toThrow(
      UsageError,
    );
    expect(() => requireImageInput(text, { provider: 'deepseek', model: 'deepseek-flash', imageInput: false })).toThrow(
      'The model deepseek/deepseek-flash does not accept images (its catalog entry has no "imageInput": true). Remove [Image #2] or pick an image-capable model with /model.',
    );
    expect(() => requireImageInput('typed [Image #2]', { provider: 'd', model: 'm', imageInput: false })).not.toThrow();
    expect(() => requireImageInput(text, { provider: 'openai', model: 'gpt', imageInput: true })).not.toThrow();
  });
});
