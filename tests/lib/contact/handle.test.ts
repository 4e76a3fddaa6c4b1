import { describe, expect, test, vi } from 'vitest';
import { handleContact } from '../../../src/lib/contact/handle.ts';
import type { SubmissionStore } from '../../../src/lib/contact/store.ts';
import { silentLogger } from '../../../src/lib/log.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

function post(fields: Record<string, string>): Request {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return new Request('http://site.test/api/contact', { method: 'POST', body });
}

function memoryStore() {
  const saved: unknown[] = [];
  const store: SubmissionStore = { save: (input) => saved.push(input) };
  return { store, saved };
}

describe('POST /api/contact handler', () => {
  test('stores a valid submission, then answers 200 { success: true }', async () => {
    const { store, saved } = memoryStore();
    const onStored = vi.fn();
    const response = await handleContact(post(valid), { store, logger: silentLogger, onStored });
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    expect(saved).toEqual([valid]);
    expect(onStored).toHaveBeenCalledWith(1);
  });

  test('answers 400 with every failing field and stores nothing', async () => {
    const { store, saved } = memoryStore();
    const response = await handleContact(post({ name: 'A', email: 'x', message: 'short', honeypot: 'bot' }), { store, logger: silentLogger });
    expect(response.status).toBe(400);
    await expect(response.json()).resolves.toEqual({
      success: false,
      errors: {
        name: ['Name must be between 2 and 100 characters'],
        email: ['Please enter a valid email address'],
        message: ['Message must be at least 10 characters'],
        honeypot: ['This field must be left empty'],
      },
    });
    expect(saved).toEqual([]);
  });

  test('answers 500 "Internal server error" when storing fails, and logs the cause', async () => {
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (event: string, fields?: Record<string, unknown>) => errors.push({ event, ...fields }) };
    const store: SubmissionStore = {
      save: () => {
        throw new Error('disk full');
      },
    };
    const response = await handleContact(post(valid), { store, logger });
    expect(response.status).toBe(500);
    await expect(response.json()).resolves.toEqual({ success: false, error: 'Internal server error' });
    expect(errors).toEqual([expect.objectContaining({ event: 'contact.store_failed', error: 'Error: disk full' })]);
  });
});
