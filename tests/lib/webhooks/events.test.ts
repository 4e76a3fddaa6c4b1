/** An event's id: the `webhook-id` of Standard Webhooks, in time order so the events' key grows at its end. */
import { describe, expect, test } from 'vitest';
import { eventId, messageEventId } from '../../../packages/site-forms/src/lib/webhooks/events.ts';

describe('eventId', () => {
  test('is msg_, the time in milliseconds as 12 hex digits, then 16 random hex digits', () => {
    const id = eventId(new Date(0x0123456789ab));
    expect(id).toMatch(/^msg_0123456789ab[0-9a-f]{16}$/);
    expect(eventId(new Date('2026-11-25T12:00:00.000Z')).slice(0, 16)).toBe('msg_01a21293b600');
  });

  test('sorts in the order of the times it was made at', () => {
    const times = [1, 255, 256, 4095, 1_764_000_000_000, 1_764_000_000_001];
    const ids = times.map((ms) => eventId(new Date(ms)));
    expect([...ids].sort()).toEqual(ids);
  });

  test('is unique among ten thousand made in the same millisecond', () => {
    const now = new Date();
    const ids = new Set(Array.from({ length: 10_000 }, () => eventId(now)));
    expect(ids.size).toBe(10_000);
  });
});

describe('messageEventId', () => {
  const message = { id: 42, createdAt: '2026-11-25T12:00:00.000Z' };

  test('is the same for the same news of the same message, in the form of eventId from its arrival', () => {
    const id = messageEventId('contact.received', message);
    expect(id).toMatch(/^msg_01a21293b600[0-9a-f]{16}$/);
    expect(messageEventId('contact.received', { ...message })).toBe(id);
  });

  test('differs for another news, another message, or a message that came later under a reused number', () => {
    const id = messageEventId('contact.received', message);
    expect(messageEventId('contact.held', message)).not.toBe(id);
    expect(messageEventId('contact.received', { ...message, id: 43 })).not.toBe(id);
    expect(messageEventId('contact.received', { ...message, createdAt: '2026-11-25T12:00:00.001Z' })).not.toBe(id);
  });
});
