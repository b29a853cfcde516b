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
