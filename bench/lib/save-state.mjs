/** The session save-hops.mjs saves: a new session holding its first user message (what REL-1 saves before the first request). */
export function benchState(id) {
  const user = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
  return {
    id,
    workspace: '/bench',
    createdUtc: new Date().toISOString(),
    updatedUtc: new Date().toISOString(),
    provider: 'fake',
    model: 'm',
    context: [{ role: 'system', content: [{ type: 'text', text: 'system' }] }, user],
    archive: [user],
    userTurns: 1,
    modelCalls: 0,
    toolCalls: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    cumulativeUsage: { inputTokens: 0, outputTokens: 0 },
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  };
}

/** Times the first save of `state` through `files`, then the save of one appended reply: `{ first, append }` in ms. */
export async function timeTwoSaves(files, state) {
  let t = performance.now();
  await files.save(state);
  const first = performance.now() - t;
  const reply = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] };
  state.archive.push(reply);
  state.context.push(reply);
  t = performance.now();
  await files.save(state);
  return { first, append: performance.now() - t };
}
