/**
 * `question`: asks the user one or more multiple-choice questions through the host. Without a
 * host prompt (as in `crystal run`) every question is dismissed, which is a failure the model
 * sees: `The user dismissed the question.`
 */
import type { ToolDefinition } from '@crystal/core';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import type { Question, ToolHost } from './host.js';

export const DISMISSED = 'The user dismissed the question.';

const schema = lazySchema(() =>
  z.object({
    questions: z
      .array(
        z.object({
          header: z.string(),
          question: z.string().check(z.minLength(1)),
          options: z.optional(
            z.array(z.object({ label: z.string().check(z.minLength(1)), description: z.optional(z.string()) })),
          ),
          multiple: z.optional(z.boolean()),
          custom: z.optional(z.boolean()),
        }),
      )
      .check(z.minLength(1)),
  }),
);

export function questionTool(host: ToolHost): ToolDefinition {
  return {
    name: 'question',
    description:
      "Ask the user one or more questions and wait for the answers. Each question has a short header, the question, options (label and description), multiple (allow several choices, default false) and custom (allow a typed answer, default true). Use it when a decision is really the user's; do not ask what you can find out yourself.",
    parameters: {
      type: 'object',
      properties: {
        questions: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: {
              header: { type: 'string', description: 'A short title, for example "Database".' },
              question: { type: 'string', description: 'The full question.' },
              options: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { label: { type: 'string' }, description: { type: 'string' } },
                  required: ['label'],
                  additionalProperties: false,
                },
              },
              multiple: { type: 'boolean', description: 'Allow several options. Default false.' },
              custom: { type: 'boolean', description: 'Allow a typed answer. Default true.' },
            },
            required: ['header', 'question'],
            additionalProperties: false,
          },
        },
      },
      required: ['questions'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const args = parseArgs('question', schema(), input);
      const questions = args.questions.map((q, index): Question => {
        const options = (q.options ?? []).map((o) => ({ label: o.label, description: o.description ?? '' }));
        const labels = new Set<string>();
        for (const option of options) {
          if (labels.has(option.label)) {
            throw new ToolFailure(`Question ${index + 1} has the option label '${option.label}' twice; labels must be unique.`);
          }
          labels.add(option.label);
        }
        const custom = q.custom ?? true;
        if (options.length === 0 && !custom) {
          throw new ToolFailure(`Question ${index + 1} has no options, so custom must be true.`);
        }
        return { header: q.header, question: q.question, options, multiple: q.multiple ?? false, custom };
      });
      const answers = host.ask ? await host.ask(questions, context) : 'dismissed';
      if (answers === 'dismissed') throw new ToolFailure(DISMISSED);
      return `User answers: ${JSON.stringify({ answers })}`;
    },
  };
}
