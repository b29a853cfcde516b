/**
 * The built-in tool catalogs (TOOLS-1). Plan: read, list, glob, grep, todowrite, todoread,
 * question. Work: those plus edit, write and bash. Tools that are not built-in (describe_image,
 * view_image, external and plugin tools) pass through unchanged: their own registration decides
 * the modes they belong to.
 */
import type { ToolDefinition } from '@crystal/core';
import { bashTool } from './builtin/bash.js';
import { editTool } from './builtin/edit.js';
import { globTool } from './builtin/glob.js';
import { grepTool } from './builtin/grep.js';
import type { ToolHost } from './builtin/host.js';
import { listTool } from './builtin/list.js';
import { questionTool } from './builtin/question.js';
import { readTool } from './builtin/read.js';
import { todoReadTool, todoWriteTool } from './builtin/todo.js';
import { writeTool } from './builtin/write.js';

export type { ToolHost } from './builtin/host.js';

export type Mode = 'plan' | 'work';

export const PLAN_TOOLS: readonly string[] = ['read', 'list', 'glob', 'grep', 'todowrite', 'todoread', 'question'];
export const WORK_TOOLS: readonly string[] = [...PLAN_TOOLS, 'edit', 'write', 'bash'];
const BUILTIN = new Set(WORK_TOOLS);

/** Every built-in tool, in catalog order. */
export function createBuiltinTools(host: ToolHost): ToolDefinition[] {
  return [
    readTool(host),
    listTool(host),
    globTool(host),
    grepTool(host),
    todoWriteTool(host),
    todoReadTool(host),
    questionTool(host),
    editTool(host),
    writeTool(host),
    bashTool(host),
  ];
}

/** The tools of a mode, in the order given: Plan drops edit, write and bash. */
export function catalogFor(mode: Mode, tools: readonly ToolDefinition[]): ToolDefinition[] {
  const allowed = new Set(mode === 'plan' ? PLAN_TOOLS : WORK_TOOLS);
  return tools.filter((tool) => !BUILTIN.has(tool.name) || allowed.has(tool.name));
}
