/**
 * A session's archive left on disk (issue 22 item 5, HIST-2). `crystal run` only appends to the
 * archive, so a resume there reads the head and the model context and leaves the archive's
 * committed messages in their companion file: a 2,000-item session resumes like a 10-item one.
 *
 * The state keeps its plain `archive` field for every reader: the first read of `state.archive`
 * (an export, a fork, /status, a side question) loads the committed messages and puts them in
 * front of the ones appended since, so no reader ever sees half an archive. Until then, appends
 * go through `appendToArchive` and a save writes only them (`pendingArchive`).
 */
import type { ChatMessage } from '@crystal/core';

/** The committed part of an archive that has not been read yet, and the messages appended after it. */
export class DeferredArchive {
  /** Messages appended since the load, in order; shared with the array a first read builds. */
  readonly tail: ChatMessage[] = [];
  /** The committed messages, once something read them. */
  loaded: ChatMessage[] | undefined;
  /** False when the read found the file damaged: it is never appended to again (REL-4). */
  intact = true;

  constructor(
    /** How many messages the companion file holds up to its committed length. */
    readonly committed: number,
    /** The session's title (its first user message) as the head recorded it. */
    readonly title: string,
    private readonly read: () => { messages: ChatMessage[]; intact: boolean },
    /** The last `count` committed messages, read from the end of the file (fewer if lines are damaged). */
    private readonly readLast: (count: number) => ChatMessage[],
  ) {}

  /** The last `count` committed messages, without reading the rest. */
  last(count: number): ChatMessage[] {
    if (count <= 0) return [];
    return this.loaded ? this.loaded.slice(-count) : this.readLast(count);
  }

  load(): ChatMessage[] {
    if (!this.loaded) {
      const { messages, intact } = this.read();
      this.loaded = messages;
      this.intact = intact;
    }
    return this.loaded;
  }
}

const deferred = new WeakMap<object, DeferredArchive>();

/** Makes `state.archive` read `archive`'s committed messages on first use (see the file comment). */
export function deferArchive(state: { archive: ChatMessage[] }, archive: DeferredArchive): void {
  deferred.set(state, archive);
  const settle = (value: ChatMessage[]): ChatMessage[] => {
    deferred.delete(state);
    Object.defineProperty(state, 'archive', { value, writable: true, enumerable: true, configurable: true });
    return value;
  };
  Object.defineProperty(state, 'archive', {
    enumerable: true,
    configurable: true,
    get: () => settle([...archive.load(), ...archive.tail]),
    set: (value: ChatMessage[]) => settle(value),
  });
}

/** The archive still on disk, or undefined once it is in memory (or was never deferred). */
export function pendingArchive(state: object): DeferredArchive | undefined {
  return deferred.get(state);
}

/** Appends to the archive without reading its committed part. */
export function appendToArchive(state: { archive: ChatMessage[] }, ...messages: ChatMessage[]): void {
  const pending = deferred.get(state);
  if (pending) pending.tail.push(...messages);
  else state.archive.push(...messages);
}

/** The archive's length without reading its committed part. */
export function archiveLength(state: { archive: ChatMessage[] }): number {
  const pending = deferred.get(state);
  return pending ? pending.committed + pending.tail.length : state.archive.length;
}

/** The messages of the archive that are in memory: all of it, or what was appended since a deferred load. */
export function archiveInMemory(state: { archive: ChatMessage[] }): readonly ChatMessage[] {
  return deferred.get(state)?.tail ?? state.archive;
}
