/**
 * REL-12: keys `config.json` holds that the schema does not know. zod drops them silently, so
 * the typo `maximumModelCall` would quietly keep the default budget; each is warned about once,
 * naming its path and the nearest known key. The known keys are read from the schema itself,
 * so a key added to the schema is known here at once.
 */
import type * as z from 'zod/mini';

type Def = {
  type: string;
  shape?: Record<string, z.ZodMiniType>;
  innerType?: z.ZodMiniType;
  options?: z.ZodMiniType[];
  in?: z.ZodMiniType;
  valueType?: z.ZodMiniType;
  element?: z.ZodMiniType;
};

const defOf = (schema: z.ZodMiniType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object shapes a value may match (unions contribute every object member). */
function shapesOf(schema: z.ZodMiniType, depth = 0): Def[] {
  if (depth > 20) return [];
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'nonoptional':
      return def.innerType ? shapesOf(def.innerType, depth + 1) : [];
    case 'pipe':
      return def.in ? shapesOf(def.in, depth + 1) : [];
    case 'union':
      return (def.options ?? []).flatMap((o) => shapesOf(o, depth + 1));
    case 'object':
    case 'record':
    case 'array':
      return [def];
    default:
      return [];
  }
}

/** Warnings for every key of `value` the schema does not know, with the nearest known key. */
export function unknownKeyWarnings(value: unknown, schema: z.ZodMiniType, file: string): string[] {
  const warnings: string[] = [];
  const walk = (node: unknown, node_schema: z.ZodMiniType, path: string, depth: number): void => {
    if (depth > 32 || node === null || typeof node !== 'object') return;
    const shapes = shapesOf(node_schema);
    if (Array.isArray(node)) {
      const array = shapes.find((d) => d.type === 'array');
      if (array?.element) for (const [i, item] of node.entries()) walk(item, array.element, `${path}.${i}`, depth + 1);
      return;
    }
    const record = shapes.find((d) => d.type === 'record');
    if (record?.valueType) {
      for (const [key, item] of Object.entries(node)) walk(item, record.valueType, path ? `${path}.${key}` : key, depth + 1);
      return;
    }
    const objects = shapes.filter((d) => d.type === 'object' && d.shape);
    if (objects.length === 0) return;
    const known = new Map<string, z.ZodMiniType>();
    for (const o of objects) for (const [k, v] of Object.entries(o.shape ?? {})) if (!known.has(k)) known.set(k, v);
    for (const [key, item] of Object.entries(node)) {
      const child = path ? `${path}.${key}` : key;
      const schemaOf = known.get(key);
      if (schemaOf) {
        walk(item, schemaOf, child, depth + 1);
        continue;
      }
      const nearest = nearestKey(key, [...known.keys()]);
      warnings.push(
        `${file}: unknown key ${child} is ignored${nearest ? `; did you mean ${path ? `${path}.` : ''}${nearest}?` : '.'}`,
      );
    }
  };
  walk(value, schema, '', 0);
  return warnings;
}

/** The known key closest to `key` (edit distance, case-insensitive), when it is close enough to be a typo. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  if (a.length > 200 || b.length > 200) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
    }
    previous = current;
  }
  return previous[b.length] as number;
}
