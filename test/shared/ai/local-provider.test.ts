/** The local provider of `npm start`: deterministic, within maxTokens, tokens counted as words. */
import { describe, expect, it } from 'vitest';
import { LocalProvider, countTokens } from '../../../shared/ai/local-provider.js';

const provider = new LocalProvider();
const request = { prompt: 'Tell me about tables', maxTokens: 60, temperature: 0.7, modelId: 'local-fast' };

describe('LocalProvider', () => {
  it('gives the same output for the same input', async () => {
    expect(await provider.generate(request)).toEqual(await provider.generate({ ...request }));
  });

  it('gives another output when the model, the prompt or the temperature changes', async () => {
    const base = await provider.generate(request);

    expect((await provider.generate({ ...request, modelId: 'local-quality' })).text).not.toBe(base.text);
    expect((await provider.generate({ ...request, prompt: 'Tell me about keys' })).text).not.toBe(base.text);
    expect((await provider.generate({ ...request, temperature: 0.1 })).text).not.toBe(base.text);
  });

  it('generates between half of maxTokens and maxTokens tokens, counted the way it reports them', async () => {
    for (const maxTokens of [10, 11, 100, 500]) {
      const result = await provider.generate({ ...request, maxTokens });
      expect(result.outputTokens).toBe(countTokens(result.text));
      expect(result.outputTokens).toBeGreaterThanOrEqual(Math.ceil(maxTokens / 2));
      expect(result.outputTokens).toBeLessThanOrEqual(maxTokens);
      expect(result.inputTokens).toBe(4);
    }
  });

  it('counts whitespace-separated words as tokens', () => {
    expect(countTokens('  one two\nthree\tfour  ')).toBe(4);
    expect(countTokens('')).toBe(0);
  });
});
