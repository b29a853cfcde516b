/**
 * Baseline copy for save-hops.mjs (do not use elsewhere): the session store as it was before issue 22's
 * save change (commit c2191ad, packages/engine/src/session-store.ts, compiled), writing through ~20
 * sequential fs.promises calls. Only its writes differ from the current store; the modules it
 * imports are the current built ones.
 */
import { closeSync, promises as fs, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { uniqueHex } from '../../../packages/core/dist/index.js';
import { writeFileAtomic } from './atomic-write.mjs';
import { UsageError } from '../../../packages/engine/dist/errors.js';
import { describeFsError } from '../../../packages/engine/dist/fs-errors.js';
import { homePaths } from '../../../packages/engine/dist/home.js';
import { archiveLength, DeferredArchive, deferArchive, pendingArchive } from '../../../packages/engine/dist/session-archive.js';
import {
  companionGeneration,
  isCompanionName,
  isSessionId,
  requireSessionId,
} from '../../../packages/engine/dist/session-names.js';
import { fromItems, toItems } from '../../../packages/engine/dist/transcript-items.js';
function newSessionId(now = /* @__PURE__ */ new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${uniqueHex(3)}`;
}
function sessionsDir(home) {
  return homePaths(home).sessions;
}
function sessionPath(home, id) {
  return join(sessionsDir(home), `${requireSessionId(id)}.json`);
}
class SessionChangedError extends UsageError {
  constructor(sessionId, path) {
    super(
      `Session ${sessionId} (${path}) was changed by another process since it was opened here; it is not overwritten. This conversation stays in memory: /fork saves it as a new session, or reopen the session to see the other changes.`,
    );
    this.sessionId = sessionId;
    this.path = path;
  }
  sessionId;
  path;
  name = 'SessionChangedError';
}
const stampOf = (stat) => ({ ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs });
function headStamp(path) {
  try {
    return stampOf(statSync(path));
  } catch {
    return void 0;
  }
}
const sameStamp = (a, b) =>
  a === b || (a !== void 0 && b !== void 0 && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs);
const usageShape = (u) => ({
  inputTokenCount: u.inputTokens,
  outputTokenCount: u.outputTokens,
  reasoningTokenCount: u.reasoningTokens ?? null,
});
const usageOf = (raw) => {
  const u = raw ?? {};
  return {
    inputTokens: typeof u.inputTokenCount === 'number' ? u.inputTokenCount : 0,
    outputTokens: typeof u.outputTokenCount === 'number' ? u.outputTokenCount : 0,
    ...(typeof u.reasoningTokenCount === 'number' ? { reasoningTokens: u.reasoningTokenCount } : {}),
  };
};
const messageLine = (message) => `${JSON.stringify(toItems([message]))}
`;
function serialiseSession(state) {
  return `${JSON.stringify({ ...headFields(state), items: toItems(state.context), archive: toItems(state.archive) }, null, 2)}
`;
}
function headFields(state) {
  return {
    id: state.id,
    workspace: state.workspace,
    planMode: false,
    createdUtc: state.createdUtc,
    updatedUtc: state.updatedUtc,
    provider: state.provider,
    model: state.model,
    title: titleNow(state),
    messageCount: archiveLength(state),
    images: state.images ?? [],
    imageMarkersTagged: true,
    todos: [],
    userTurns: state.userTurns,
    modelCalls: state.modelCalls,
    toolCalls: state.toolCalls,
    usage: usageShape(state.usage),
    cumulativeUsage: usageShape(state.cumulativeUsage),
    queued: state.queued,
    pendingApprovals: state.pendingApprovals ?? [],
  };
}
function titleNow(state) {
  const pending = pendingArchive(state);
  return pending ? pending.title || titleOf(pending.tail) : titleOf(state.archive);
}
function titleOf(archive) {
  const first = archive.find((m) => m.role === 'user');
  const text = first?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}\u2026` : line;
}
class PersistedLog {
  constructor(ref, committed, prefix) {
    this.ref = ref;
    this.committed = committed;
    this.prefix = prefix;
  }
  ref;
  committed;
  prefix;
  /**
   * How many leading messages of `messages` are committed, when `messages` extends what is
   * committed (same objects, in order); undefined when it does not. `tail` says `messages` is
   * only what follows the prefix (the archive was not read); otherwise a prefix must be the very
   * messages read from the file.
   */
  committedPart(messages, tail) {
    let offset = 0;
    if (this.prefix && !tail) {
      const loaded = this.prefix.loaded;
      if (!loaded || !this.prefix.intact || messages.length < loaded.length) return void 0;
      for (let i = 0; i < loaded.length; i++) if (messages[i] !== loaded[i]) return void 0;
      offset = loaded.length;
    }
    if (messages.length - offset < this.committed.length) return void 0;
    for (let i = 0; i < this.committed.length; i++) if (messages[offset + i] !== this.committed[i]) return void 0;
    return offset + this.committed.length;
  }
}
class SessionFiles {
  constructor(home, id, generation, archive, context, stamp) {
    this.home = home;
    this.id = id;
    this.generation = generation;
    this.archive = archive;
    this.context = context;
    this.stamp = stamp;
  }
  home;
  id;
  generation;
  archive;
  context;
  stamp;
  queue = Promise.resolve();
  static create(home, id) {
    return new SessionFiles(home, requireSessionId(id), 0, void 0, void 0, void 0);
  }
  /** Saves the state; resolves to the head path once committed. */
  save(state) {
    const run = this.queue.then(() => this.saveNow(state));
    this.queue = run.catch(() => void 0);
    return run;
  }
  async saveNow(state) {
    const dir = sessionsDir(this.home);
    const path = sessionPath(this.home, this.id);
    const onDisk = headStamp(path);
    if (!sameStamp(onDisk, this.stamp)) throw new SessionChangedError(this.id, path);
    const created = [];
    try {
      return await this.write(dir, path, state, created);
    } catch (error) {
      for (const file of created) await fs.rm(join(dir, file), { force: true }).catch(() => void 0);
      throw describeFsError(error, `save session ${this.id}`, path);
    }
  }
  async write(dir, path, state, created) {
    await fs.mkdir(dir, { recursive: true, mode: 448 });
    const contextBody = state.context[0]?.role === 'system' ? state.context.slice(1) : [...state.context];
    const pending = pendingArchive(state);
    const tail = pending !== void 0 && this.archive?.prefix === pending;
    const archiveNow = tail ? [...pending.tail] : [...state.archive];
    const fields = headFields(state);
    const old = [];
    let generation = this.generation;
    const nextFile = (kind) => {
      generation++;
      const name = `${this.id}.${kind}.${generation}.jsonl`;
      created.push(name);
      return name;
    };
    const [archiveSaved, contextSaved] = await Promise.allSettled([
      this.persist(dir, this.archive, archiveNow, () => nextFile('archive'), old, tail),
      this.persist(dir, this.context, contextBody, () => nextFile('context'), old, false),
    ]);
    if (archiveSaved.status === 'rejected') throw archiveSaved.reason;
    if (contextSaved.status === 'rejected') throw contextSaved.reason;
    const archive = archiveSaved.value;
    const context = contextSaved.value;
    const head = { version: 1, generation, archive: archive.ref, context: context.ref };
    await writeFileAtomic(
      path,
      `${JSON.stringify({ ...fields, items: null, archive: null, log: head }, null, 2)}
`,
    );
    created.length = 0;
    this.stamp = headStamp(path);
    this.generation = generation;
    this.archive = archive;
    this.context = context;
    for (const file of old) await fs.rm(join(dir, file), { force: true });
    return path;
  }
  /**
   * Appends what is new, or writes a new generation when the transcript was rewritten. `live`
   * is a snapshot taken before the first await: a turn may append while the write runs, and
   * those later messages belong to the next save, not to the bytes written now. `tail`: `live` is
   * what follows the persisted prefix of an archive left on disk (it can only be appended).
   */
  async persist(dir, persisted, live, nextFile, old, tail) {
    const messages = live;
    const committed = persisted?.committedPart(messages, tail);
    if (persisted && committed !== void 0) {
      const fresh = messages.slice(committed);
      if (fresh.length === 0) return persisted;
      const data2 = fresh.map(messageLine).join('');
      await writeAt(join(dir, persisted.ref.file), persisted.ref.bytes, data2);
      const ref = {
        file: persisted.ref.file,
        bytes: persisted.ref.bytes + Buffer.byteLength(data2),
        messages: persisted.ref.messages + fresh.length,
      };
      return tail ? new PersistedLog(ref, messages, persisted.prefix) : new PersistedLog(ref, messages);
    }
    if (tail) throw new Error(`internal: the archive of session ${this.id} was changed without being read`);
    const file = nextFile();
    const data = messages.map(messageLine).join('');
    await writeAt(join(dir, file), 0, data);
    if (persisted && persisted.prefix?.intact !== false) old.push(persisted.ref.file);
    return new PersistedLog({ file, bytes: Buffer.byteLength(data), messages: messages.length }, messages);
  }
  /**
   * Loads a session; a missing, empty or unreadable head is a clear error (CLI-1). REL-4: damage
   * loads what can be loaded with one note: a truncated or missing companion restores its
   * readable lines and the next save starts a fresh generation (so nothing later is lost), and
   * a damaged head is rebuilt from its companions. `deferArchive`: leave the archive's committed
   * messages on disk until something reads `state.archive` (session-archive.ts); only an archive
   * file that is all there (not shorter than its head records) is left so, any other is read now.
   */
  static load(home, id, options = {}) {
    const path = sessionPath(home, id);
    const dir = sessionsDir(home);
    let notes = [];
    let text;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      text = void 0;
    }
    const stamp = headStamp(path);
    let raw = text === void 0 ? void 0 : parseHead(text);
    let archive = [];
    let context = [];
    let files;
    let deferred;
    const log = raw ? validLog(raw.log, id) : void 0;
    if (raw && log) {
      deferred = options.deferArchive ? deferrable(dir, log.archive, raw.title) : void 0;
      const a = deferred ? { messages: [], intact: true } : readLog(dir, log.archive, notes);
      const c = readLog(dir, log.context, notes);
      archive = a.messages;
      context = c.messages;
      files = new SessionFiles(
        home,
        id,
        log.generation,
        deferred
          ? new PersistedLog({ ...log.archive }, [], deferred)
          : a.intact
            ? new PersistedLog({ ...log.archive, messages: archive.length }, [...archive])
            : void 0,
        c.intact ? new PersistedLog({ ...log.context, messages: context.length }, [...context]) : void 0,
        stamp,
      );
    } else if (raw && raw.log === void 0) {
      try {
        const items = Array.isArray(raw.items) ? raw.items : [];
        archive = fromItems(Array.isArray(raw.archive) ? raw.archive : items);
        context = fromItems(items);
        if (context[0]?.role === 'system' && !isSummary(context[0])) context = context.slice(1);
        files = new SessionFiles(home, id, 0, void 0, void 0, stamp);
      } catch {
        raw = void 0;
      }
    } else raw = void 0;
    if (!files) {
      const rebuilt = rebuildFromCompanions(dir, id);
      if (!rebuilt) {
        if (text === void 0)
          throw new UsageError(`No saved session '${id}' (looked for ${path}). List sessions with 'crystal sessions'.`);
        let reason = 'it does not hold a session object';
        try {
          JSON.parse(text);
        } catch (error) {
          reason = `it is not valid JSON (${error.message})`;
        }
        throw new UsageError(
          `Session file ${path} ${reason.replace(/^it /, '')}; no transcript files were found to rebuild it from, so it was left unchanged.`,
        );
      }
      archive = rebuilt.archive;
      context = rebuilt.context;
      notes = [
        `Session file ${path} was ${text === void 0 ? 'missing' : 'damaged'}; it was rebuilt from its transcript files (${archive.length} messages)${rebuilt.skipped > 0 ? `, ${rebuilt.skipped} unreadable line(s) skipped` : ''}.`,
      ];
      raw = text === void 0 ? {} : salvageHead(text);
      files = new SessionFiles(home, id, rebuilt.generation, void 0, void 0, stamp);
    }
    if (notes.length > 1) notes = [notes.join(' ')];
    if ((deferred?.committed ?? archive.length) === 0 && context.length === 0) {
      throw new UsageError(`Session '${id}' (${path}) is empty; there is nothing to resume.`);
    }
    const head = raw;
    const str = (key, fallback) => (typeof head[key] === 'string' ? head[key] : fallback);
    const num = (key) => (typeof head[key] === 'number' && Number.isFinite(head[key]) && head[key] >= 0 ? head[key] : 0);
    const strings = (key) => (Array.isArray(head[key]) ? head[key].filter((q) => typeof q === 'string') : []);
    const state = {
      // SEC-8: the id is the validated one the file was found under, never one read from it.
      id,
      workspace: str('workspace', ''),
      createdUtc: str('createdUtc', /* @__PURE__ */ new Date().toISOString()),
      updatedUtc: str('updatedUtc', /* @__PURE__ */ new Date().toISOString()),
      provider: str('provider', ''),
      model: str('model', ''),
      context,
      archive,
      userTurns: num('userTurns'),
      modelCalls: num('modelCalls'),
      toolCalls: num('toolCalls'),
      usage: usageOf(head.usage),
      cumulativeUsage: usageOf(head.cumulativeUsage),
      queued: strings('queued'),
      images: Array.isArray(head.images) ? head.images : [],
      imageMarkersTagged: head.imageMarkersTagged === true,
      pendingApprovals: strings('pendingApprovals'),
    };
    if (deferred) deferArchive(state, deferred);
    return { state, files, notes };
  }
}
function isSummary(message) {
  return message.content.some((p) => p.type === 'text' && p.text.startsWith('## Earlier context'));
}
function deferrable(dir, ref, title) {
  if (ref.bytes === 0 || ref.messages === 0 || typeof title !== 'string' || title === '') return void 0;
  try {
    if (statSync(join(dir, ref.file)).size < ref.bytes) return void 0;
  } catch {
    return void 0;
  }
  const committed = { ...ref };
  return new DeferredArchive(
    ref.messages,
    title,
    () => readLog(dir, committed, []),
    (count) => readLastLines(join(dir, committed.file), committed.bytes, count),
  );
}
function readLastLines(path, bytes, count) {
  const BLOCK = 64 * 1024;
  let handle;
  try {
    handle = openSync(path, 'r');
    const blocks = [];
    let start = bytes;
    let newlines = 0;
    while (start > 0 && newlines <= count) {
      const size = Math.min(BLOCK, start);
      start -= size;
      const block = Buffer.alloc(size);
      const read = readSync(handle, block, 0, size, start);
      if (read < size) return [];
      for (const byte of block) if (byte === 10) newlines++;
      blocks.unshift(block);
    }
    let text = Buffer.concat(blocks);
    if (start > 0) text = text.subarray(text.indexOf(10) + 1);
    const { messages } = parseLines(text);
    return messages.slice(-count);
  } catch {
    return [];
  } finally {
    if (handle !== void 0) closeSync(handle);
  }
}
async function writeAt(path, offset, data) {
  const handle = await fs.open(path, offset === 0 ? 'w' : 'r+', 384);
  try {
    await handle.truncate(offset);
    await handle.write(data, offset, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}
function readLog(dir, ref, notes) {
  let buffer;
  try {
    buffer = readFileSync(join(dir, ref.file));
  } catch {
    if (ref.bytes > 0) {
      notes.push(
        `Transcript file ${ref.file} is missing; that part of the session is not restored, and the next save starts a new file.`,
      );
      return { messages: [], intact: false };
    }
    return { messages: [], intact: true };
  }
  let intact = true;
  if (buffer.length < ref.bytes) {
    intact = false;
    notes.push(`Transcript file ${ref.file} is shorter than recorded; the readable part is restored.`);
  }
  const { messages, skipped } = parseLines(buffer.subarray(0, Math.min(buffer.length, ref.bytes)));
  if (skipped > 0) {
    intact = false;
    notes.push(`${skipped} unreadable transcript line(s) in ${ref.file} were skipped.`);
  }
  return { messages, intact };
}
function parseLines(bytes) {
  const messages = [];
  let skipped = 0;
  for (const line of bytes.toString('utf8').split('\n')) {
    if (line === '') continue;
    try {
      const items = JSON.parse(line);
      const [message] = fromItems(Array.isArray(items) ? items : []);
      if (message && Array.isArray(message.content)) messages.push(message);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { messages, skipped };
}
function parseHead(text) {
  try {
    const raw = JSON.parse(text);
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : void 0;
  } catch {
    return void 0;
  }
}
function validLog(value, id) {
  if (!value || typeof value !== 'object') return void 0;
  const log = value;
  const count = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  const ref = (v, kind) => {
    if (!v || typeof v !== 'object') return void 0;
    const r = v;
    if (!isCompanionName(r.file, id, kind) || !count(r.bytes)) return void 0;
    return { file: r.file, bytes: r.bytes, messages: count(r.messages) ? r.messages : 0 };
  };
  if (log.version !== 1 || !count(log.generation)) return void 0;
  const archive = ref(log.archive, 'archive');
  const context = ref(log.context, 'context');
  if (!archive || !context) return void 0;
  return { version: 1, generation: log.generation, archive, context };
}
function companionsOf(dir, id) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return { generation: 0 };
  }
  const found = { generation: 0 };
  for (const kind of ['archive', 'context']) {
    for (const name of names) {
      if (!isCompanionName(name, id, kind)) continue;
      const generation = companionGeneration(name);
      found.generation = Math.max(found.generation, generation);
      const current = found[kind];
      if (current === void 0 || companionGeneration(current) < generation) found[kind] = name;
    }
  }
  return found;
}
function rebuildFromCompanions(dir, id) {
  const found = companionsOf(dir, id);
  if (!found.archive && !found.context) return void 0;
  const read = (name) => {
    if (!name) return { messages: [], skipped: 0 };
    try {
      return parseLines(readFileSync(join(dir, name)));
    } catch {
      return { messages: [], skipped: 0 };
    }
  };
  const archive = read(found.archive);
  const context = read(found.context);
  return {
    archive: archive.messages,
    // Without a context file the model context restarts from the archive.
    context: found.context ? context.messages : [...archive.messages],
    generation: found.generation,
    skipped: archive.skipped + context.skipped,
  };
}
function salvageHead(text) {
  const out = {};
  for (const key of ['workspace', 'createdUtc', 'updatedUtc', 'provider', 'model', 'title']) {
    const match = new RegExp(`"${key}":\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
    if (!match) continue;
    try {
      out[key] = JSON.parse(match[1]);
    } catch {}
  }
  return out;
}
async function listSessions(home, workspace) {
  const dir = sessionsDir(home);
  let names;
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out = [];
  const heads = /* @__PURE__ */ new Set();
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const id = name.slice(0, -'.json'.length);
    if (!isSessionId(id)) continue;
    heads.add(id);
    let text;
    try {
      text = await fs.readFile(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const summary = summarise(dir, id, text, names);
    if (!summary) continue;
    if (workspace !== void 0 && summary.workspace !== workspace && !(summary.note && summary.workspace === '')) continue;
    out.push(summary);
  }
  for (const name of names) {
    const id = /^(.+)\.archive\.\d+\.jsonl$/.exec(name)?.[1];
    if (!id || heads.has(id) || !isSessionId(id)) continue;
    heads.add(id);
    const summary = summarise(dir, id, void 0, names);
    if (summary && (workspace === void 0 || summary.workspace === '' || summary.workspace === workspace)) out.push(summary);
  }
  return out.sort((a, b) => (a.updatedUtc < b.updatedUtc ? 1 : a.updatedUtc > b.updatedUtc ? -1 : 0));
}
function summarise(dir, id, text, names) {
  const raw = text === void 0 ? void 0 : parseHead(text);
  const log = raw ? validLog(raw.log, id) : void 0;
  if (raw && (log || raw.log === void 0)) {
    const count = typeof raw.messageCount === 'number' ? raw.messageCount : Array.isArray(raw.archive) ? raw.archive.length : 0;
    if (count === 0 && !log?.archive.bytes) return void 0;
    const damaged = log ? [log.archive, log.context].filter((ref) => companionDamaged(dir, ref, names)) : [];
    return {
      id,
      workspace: typeof raw.workspace === 'string' ? raw.workspace : '',
      updatedUtc: typeof raw.updatedUtc === 'string' ? raw.updatedUtc : '',
      title: typeof raw.title === 'string' ? raw.title : '',
      messageCount: count,
      ...(damaged.length > 0
        ? {
            note: `transcript file ${damaged.map((r) => r.file).join(', ')} is missing or shortened; the readable part is restored on resume`,
          }
        : {}),
    };
  }
  const rebuilt = rebuildFromCompanions(dir, id);
  if (!rebuilt || (rebuilt.archive.length === 0 && rebuilt.context.length === 0)) {
    if (text === void 0 || text.trim() === '') return void 0;
    const fields2 = salvageHead(text);
    return {
      id,
      workspace: typeof fields2.workspace === 'string' ? fields2.workspace : '',
      updatedUtc: typeof fields2.updatedUtc === 'string' ? fields2.updatedUtc : '',
      title: typeof fields2.title === 'string' ? fields2.title : '',
      messageCount: 0,
      note: 'the session file is damaged and no transcript files were found; it cannot be resumed',
    };
  }
  const fields = text === void 0 ? {} : salvageHead(text);
  return {
    id,
    workspace: typeof fields.workspace === 'string' ? fields.workspace : '',
    updatedUtc: typeof fields.updatedUtc === 'string' ? fields.updatedUtc : '',
    title: typeof fields.title === 'string' ? fields.title : titleOf(rebuilt.archive),
    messageCount: rebuilt.archive.length,
    note: `the session file is ${text === void 0 ? 'missing' : 'damaged'}; it is rebuilt from its transcript files on resume`,
  };
}
function companionDamaged(dir, ref, names) {
  if (ref.bytes === 0) return false;
  if (!names.includes(ref.file)) return true;
  try {
    return statSync(join(dir, ref.file)).size < ref.bytes;
  } catch {
    return true;
  }
}
export { SessionChangedError, SessionFiles, listSessions, newSessionId, serialiseSession, sessionPath, sessionsDir };
