/** Reading README.md and docs/ for the tests that hold them to what they say. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function readme(): string {
  return readFileSync(join(ROOT, 'README.md'), 'utf8');
}

/** README.md and every Markdown file under docs/, as paths relative to the root. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs.sort()];
}

/** The fenced code blocks (language, text) under the `## <heading>` section of a Markdown text. */
export function codeBlocksUnder(markdown: string, heading: string): { lang: string; code: string }[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section '## ${heading}'`);
  const rest = markdown.slice(start + heading.length + 5);
  const end = rest.search(/\n## /);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
}
