/**
 * REL-5 and REL-6 in the turn loop: a stalled provider is retried as `timeout` with the usual
 * countdown (config `retry.idleTimeoutSeconds`), and a Retry-After beyond the ceiling stops the
 * turn `failed` naming the wait; invalid or past values fall back to the computed backoff; long
 * sleeps are split, never truncated.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, ConfigError, loadConfig, systemClock } from '../src/index.js';
import { type Harness, manualClock, openSession } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const NO_JITTER = { jitter: 0, baseDelaySeconds: 2, maxRetries: 3 };

describe('REL-6 Retry-After', () => {
  it('REL-6 a Retry-After of a day stops the turn failed, naming the wait, after one request', async () => {
    const clock = manualClock();
    h = await openSession([{ error: { status: 429, headers: { 'retry-after': '86400' } } }, { text: 'never' }], { clock });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('failed');
    expect(result.error?.message).toContain('86400 s (24 h)');
    expect(result.error?.message).toContain('retry.maxRetryAfterSeconds');
    expect(clock.sleeps).toEqual([]);
    expect(h.fake.requests).toHaveLength(1);
  });

  it('REL-6 retry.maxRetryAfterSeconds raises the ceiling', async () => {
    const clock = manualClock();
    h = await openSession([{ error: { status: 429, headers: { 'retry-after': '3600' } } }, { text: 'ok' }], {
      clock,
      config: { retry: { maxRetryAfterSeconds: 7200 } } as Partial<Config>,
    });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('completed');
    expect(clock.sleeps).toEqual([3_600_000]);
  });

  it('REL-6 retry-after: -5 falls back to the computed backoff', async () => {
    const clock = manualClock();
    h = await openSession([{ error: { status: 503, headers: { 'retry-after': '-5' } } }, { text: 'ok' }], {
      clock,
      config: { retry: NO_JITTER } as Partial<Config>,
    });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('completed');
    expect(clock.sleeps).toEqual([2000]);
  });

  it('REL-6 a Retry-After date in the past falls back to the computed backoff', async () => {
    const clock = manualClock();
    h = await openSession(
      [{ error: { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } } }, { text: 'ok' }],
      { clock, config: { retry: NO_JITTER } as Partial<Config> },
    );
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('completed');
    expect(clock.sleeps).toEqual([2000]);
  });

  it('REL-6 a sleep longer than the timer maximum is split, never truncated to 1 ms', async () => {
    const controller = new AbortController();
    let resolved = false;
    const sleeping = systemClock.sleep(2 ** 31 + 60_000, controller.signal).then(() => {
      resolved = true;
    });
    // A truncated timer would fire after 1 ms; a split one is still waiting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(resolved).toBe(false);
    controller.abort();
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('REL-6 a scheduled deadline beyond the timer maximum does not fire early', async () => {
    let fired = false;
    const cancel = systemClock.schedule(2 ** 31 + 60_000, () => {
      fired = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancel();
    expect(fired).toBe(false);
  });
});

describe('REL-5 stalled providers in a turn', () => {
  it('REL-5 a stream that stalls is retried as timeout with the usual countdown, then completes', async () => {
    const clock = manualClock();
    h = await openSession([{ text: 'lost words', stallAfter: 1 }, { text: 'second try' }], {
      clock,
      config: { retry: { ...NO_JITTER, idleTimeoutSeconds: 0.2 } } as Partial<Config>,
    });
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'completed', text: 'second try', retries: 1 });
    const retry = h.events.find((e) => e.type === 'retry-scheduled');
    expect(retry).toMatchObject({ attempt: 1, delayMs: 2000, reason: 'timeout' });
    expect((retry as { message: string }).message).toContain('retry.idleTimeoutSeconds');
  });

  it('REL-5 a provider that never answers is retried as timeout (retry.firstByteTimeoutSeconds)', async () => {
    const clock = manualClock();
    h = await openSession([{ noAnswer: true }, { text: 'answered' }], {
      clock,
      config: { retry: { ...NO_JITTER, firstByteTimeoutSeconds: 0.2 } } as Partial<Config>,
    });
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'completed', text: 'answered' });
    expect(h.events.find((e) => e.type === 'retry-scheduled')).toMatchObject({ reason: 'timeout' });
  });

  it('REL-5 the timeout settings are range-checked in config.json', () => {
    for (const bad of [{ idleTimeoutSeconds: 0 }, { connectTimeoutSeconds: -1 }, { firstByteTimeoutSeconds: 1e10 }]) {
      const dir = mkdtempSync(join(tmpdir(), 'crystal-rel5-'));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ retry: bad }));
      const key = Object.keys(bad)[0] as string;
      expect(() => loadConfig(dir)).toThrow(ConfigError);
      expect(() => loadConfig(dir)).toThrow(new RegExp(`retry\\.${key}`));
    }
  });
});
