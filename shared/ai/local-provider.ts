/**
 * The provider of `npm start`: deterministic (the same model, prompt, maxTokens and temperature
 * give the same text) and free, so the API, credits and limits can be used without a cloud
 * account. A token is a word here: `countTokens` counts what it generates, and the result
 * reports tokens in the same shape as Bedrock's usage (inputTokens, outputTokens).
 */
import { createHash } from 'node:crypto';
import type { GenerationRequest, GenerationResult, TextProvider } from './provider.js';

const WORDS = (
  'the a record entity field value list page query index table request response token model ' +
  'data user tenant key scope limit window credit balance answer question result system service ' +
  'quick small large clear simple exact stable local remote fast careful short long new old ' +
  'is are was has makes keeps shows holds reads writes counts builds checks sends returns finds ' +
  'and or but so then with from into over under for of to in on by'
).split(' ');

export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** An endless stream of bytes derived from the seed (SHA-256 in counter mode). */
function* bytes(seed: string): Generator<number> {
  for (let block = 0; ; block++) {
    yield* createHash('sha256').update(`${seed}#${block}`).digest();
  }
}

export class LocalProvider implements TextProvider {
  async generate({ prompt, maxTokens, temperature, modelId }: GenerationRequest): Promise<GenerationResult> {
    const stream = bytes(`${modelId}\n${maxTokens}\n${temperature}\n${prompt}`);
    const next = () => stream.next().value as number;
    // Between half of maxTokens and maxTokens words, like a model that stops on its own.
    const least = Math.ceil(maxTokens / 2);
    const count = least + (((next() << 8) | next()) % (maxTokens - least + 1));
    const words: string[] = [];
    for (let i = 0; i < count; i++) words.push(WORDS[next() % WORDS.length]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    const text = `${words.join(' ')}.`;
    return { text, inputTokens: countTokens(prompt), outputTokens: countTokens(text) };
  }
}
