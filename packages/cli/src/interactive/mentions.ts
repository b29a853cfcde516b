/**
 * `@path` in a sent message (TUIX-5): each mentioned workspace file is attached, text files as a
 * `<file>` block after the user's words, images through the session's attachment service as
 * `[Image #N]` (the same path Ctrl+V takes). The rules (fence, size, binary) are the engine's.
 */
import { mentionBlock, mentionedPaths, resolveMention, type SessionController, taggedMarker } from '@crystal/engine';
import { attachmentsOf } from './intents.js';

export interface ExpandedMessage {
  readonly text: string;
  /** Operator notes: mentions that were refused or failed. */
  readonly notes: readonly string[];
}

export async function expandMentions(controller: SessionController, text: string): Promise<ExpandedMessage> {
  const paths = mentionedPaths(text);
  if (paths.length === 0) return { text, notes: [] };
  const workspace = controller.session.workspace;
  const blocks: string[] = [];
  const notes: string[] = [];
  let out = text;
  for (const path of paths) {
    let mention: Awaited<ReturnType<typeof resolveMention>>;
    try {
      mention = await resolveMention(workspace, path);
    } catch (error) {
      notes.push(`@${path} could not be read: ${(error as Error).message}`);
      continue;
    }
    if (!mention) continue;
    if (mention.kind === 'refused') notes.push(mention.reason);
    else if (mention.kind === 'text') blocks.push(mentionBlock(mention.path, mention.text));
    else {
      const attachments = attachmentsOf(controller);
      if (!attachments) {
        notes.push(`@${path} is an image, and image attachments are not available in this session.`);
        continue;
      }
      try {
        const { number } = await attachments.attach(mention.bytes, { name: mention.path });
        out = out.replace(new RegExp(`(^|\\s)@${escapeRegExp(path)}(?=$|[\\s,;:!?).])`), `$1@${path} ${taggedMarker(number)}`);
      } catch (error) {
        notes.push(`@${path} was not attached: ${(error as Error).message}`);
      }
    }
  }
  return { text: blocks.length > 0 ? `${out}\n\n${blocks.join('\n\n')}` : out, notes };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
