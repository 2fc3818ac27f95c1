/** What a webhook body's schema cannot say, checked by the service (shared/webhooks/registrations.ts webhookBodyProblems). */
import { describe, expect, it } from 'vitest';
import { webhookBodyProblems } from '../../../shared/webhooks/registrations.js';

describe('webhookBodyProblems', () => {
  it('names a URL outside the target rule and an event no entity has', async () => {
    const details = await webhookBodyProblems({ url: 'https://10.1.2.3/hook', events: ['task.created', 'task.exploded'] });

    expect(Object.keys(details).sort()).toEqual(['events', 'url']);
    expect(details.events).toContain("'task.exploded'");
  });

  it('leaves alone the fields the schema refused, and finds nothing in a good body', async () => {
    const refused = await webhookBodyProblems({ url: 'https://10.1.2.3/hook', events: [5] }, { url: 'must be at most 2048 characters', events: 'must be a string' });
    const good = await webhookBodyProblems({ url: 'https://93.184.215.14/hook', events: ['task.created'] });

    expect(refused).toEqual({});
    expect(good).toEqual({});
  });
});
