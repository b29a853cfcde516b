/**
 * Skills (SKILL-1, reference 9.4): `SKILL.md` files in the search roots of search-paths.ts,
 * each in its own directory. Front matter needs `name` and `description`. The id is the
 * directory name when it is a valid id, else a valid front-matter `name`; a later root
 * replaces an earlier skill of the same id. The system prompt lists id and description only;
 * the `skill` tool loads the body on demand. Skills are text: they load in any workspace.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { ToolFailure } from '../tools/builtin/failure.js';
import { listField, parseFrontMatter, textField } from './front-matter.js';
import { type ExtensionPlaces, skillSearchRoots } from './search-paths.js';

export interface Skill {
  readonly id: string;
  readonly description: string;
  /** The `SKILL.md` file. */
  readonly path: string;
  /** The skill's directory (its files may be read without asking). */
  readonly dir: string;
  /** `allowed-tools`: once loaded, the rest of the turn may use only these (allowed-tools.ts). */
  readonly allowedTools: readonly string[];
}

export interface SkillCatalog {
  readonly skills: ReadonlyMap<string, Skill>;
  /** Every search root that exists, links resolved: reads inside them auto-pass. */
  readonly roots: readonly string[];
  /** Skills skipped and why (named by path). */
  readonly notes: readonly string[];
}

export const SKILL_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_SKILL_BYTES = 1024 * 1024;

export function isSkillId(value: string): boolean {
  return value.length >= 1 && value.length <= 64 && SKILL_ID.test(value);
}

export function discoverSkills(places: ExtensionPlaces): SkillCatalog {
  const skills = new Map<string, Skill>();
  const roots: string[] = [];
  const notes: string[] = [];
  for (const root of skillSearchRoots(places)) {
    let real: string;
    let entries: string[];
    try {
      // Most search roots do not exist: no exception for those (issue 22).
      if (!statSync(root, { throwIfNoEntry: false })) continue;
      real = realpathSync(root);
      entries = readdirSync(real).sort();
    } catch {
      continue;
    }
    if (!roots.includes(real)) roots.push(real);
    for (const entry of entries) {
      const dir = join(root, entry);
      const path = join(dir, 'SKILL.md');
      let text: string;
      try {
        const info = statSync(path);
        if (!info.isFile()) continue;
        if (info.size > MAX_SKILL_BYTES) {
          notes.push(`Skill ${path} skipped: larger than 1 MiB.`);
          continue;
        }
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      const { fields, present } = parseFrontMatter(text);
      const name = textField(fields, 'name');
      const description = textField(fields, 'description').replace(/\s+/g, ' ');
      if (!present || name === '' || description === '') {
        notes.push(`Skill ${path} skipped: its front matter needs "name" and "description".`);
        continue;
      }
      const id = isSkillId(entry) ? entry : isSkillId(name) ? name : undefined;
      if (id === undefined) {
        notes.push(
          `Skill ${path} skipped: neither the directory name nor "name" is a valid id (lower-case letters and digits in hyphen-separated words, 1 to 64 characters).`,
        );
        continue;
      }
      skills.set(id, { id, description, path, dir, allowedTools: listField(fields, 'allowed-tools') });
    }
  }
  return { skills, roots, notes };
}

/** The system prompt's skill guidance (names and descriptions only); '' when there are none. */
export function skillGuidance(catalog: SkillCatalog): string {
  if (catalog.skills.size === 0) return '';
  const lines = [...catalog.skills.values()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((skill) => `- ${skill.id}: ${skill.description}`);
  return [
    '# Skills',
    'These skills hold instructions for particular tasks. When a task matches a description, load the skill with the skill tool before you start, then follow it.',
    ...lines,
  ].join('\n');
}

/** The `skill` tool: loads one skill's `SKILL.md` by id, rediscovering so edits show at once. */
export function skillTool(catalog: () => SkillCatalog, onLoad?: (skill: Skill) => void): ToolDefinition {
  return {
    name: 'skill',
    description: 'Load an available skill by name: returns its SKILL.md instructions and the directory its other files are in.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', description: 'The skill name as listed under Skills in the system prompt.' } },
      required: ['name'],
      additionalProperties: false,
    },
    async execute(input) {
      const name = typeof (input as { name?: unknown })?.name === 'string' ? (input as { name: string }).name.trim() : '';
      const skills = catalog().skills;
      const skill = skills.get(name);
      if (!skill) {
        const known = [...skills.keys()].sort().join(', ');
        throw new ToolFailure(
          name === ''
            ? `The skill tool needs a name. Available skills: ${known || 'none'}.`
            : `Unknown skill '${name}'. Available skills: ${known || 'none'}.`,
        );
      }
      let text: string;
      try {
        text = readFileSync(skill.path, 'utf8');
      } catch (error) {
        throw new ToolFailure(
          `Skill '${name}' could not be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
        );
      }
      const { body } = parseFrontMatter(text);
      onLoad?.(skill);
      const limit =
        skill.allowedTools.length > 0
          ? `\n\nFor the rest of this turn only these tools may be used (the skill's allowed-tools): ${skill.allowedTools.join(', ')}.`
          : '';
      return `<skill name="${skill.id}" directory="${dirname(skill.path)}">\n${body.trim()}\n</skill>\n\nFiles this skill names are relative to ${dirname(skill.path)} (${basename(skill.dir)}/).${limit}`;
    },
  };
}
