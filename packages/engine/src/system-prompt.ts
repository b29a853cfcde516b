/** The system message: the mode body and an environment block (issue 5 extends it with instruction files). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface PromptContext {
  readonly workspace: string;
  readonly provider: string;
  readonly model: string;
  readonly now?: Date;
}

const WORK_BODY = `You are Crystal Code, a coding agent working in the user's repository from a terminal.
Be direct and precise. Read before you edit, keep changes minimal, and say what you changed.`;

export function buildSystemPrompt(context: PromptContext): string {
  const date = (context.now ?? new Date()).toISOString().slice(0, 10);
  const git = existsSync(join(context.workspace, '.git')) ? 'yes' : 'no';
  return `${WORK_BODY}

<env>
Workspace: ${context.workspace}
Git repository: ${git}
Platform: ${process.platform}
Date: ${date}
Model: ${context.provider}/${context.model}
</env>`;
}
