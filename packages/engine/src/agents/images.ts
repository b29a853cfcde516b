/** The images a child returns with its answer (AGENT-1): session images by number, as typed image parts. */
import type { ChatMessage, ToolResultContent } from '@crystal/core';
import type { AttachmentService } from '../images/index.js';

export async function imagePartsOf(attachments: AttachmentService, numbers: readonly number[]): Promise<ToolResultContent[]> {
  const parts: ToolResultContent[] = [];
  for (const number of numbers) {
    const image = await attachments.registry.get(number);
    if (image?.uri) parts.push({ type: 'image', mime: image.mime, uri: image.uri });
    else if (image?.hash) {
      // A missing or changed media file is left out (the answer's text still names it).
      const read = await attachments.readImage(image.hash);
      if (read.ok)
        parts.push({
          type: 'image',
          mime: read.mime,
          data: read.bytes.toString('base64'),
          ...(image.name ? { name: image.name } : {}),
        });
    }
  }
  return parts;
}

/** The `<env>` block of a system message (workspace, platform, date, mode), or ''. */
export function envBlockOf(system: ChatMessage | undefined): string {
  const text = system?.role === 'system' ? system.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
  return /<env>[\s\S]*?<\/env>/.exec(text)?.[0] ?? '';
}
