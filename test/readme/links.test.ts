/**
 * README.md and docs/ hold no dead ends: every relative link reaches a file (and, for a Markdown
 * file, the heading its #fragment names), and every `npm run <script>` they name exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, documentationFiles, readme } from './readme.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

describe('README.md and docs/', () => {
  const files = documentationFiles();

  it.each(files)('%s: every relative link reaches a file and heading', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, fragment] = link.split('#');
      const target = path ? normalize(join(dirname(file), path)) : file;
      if (!existsSync(join(ROOT, target))) {
        broken.push(`${link} (no ${target})`);
        continue;
      }
      if (fragment && target.endsWith('.md') && !anchorsOf(readFileSync(join(ROOT, target), 'utf8')).has(fragment)) {
        broken.push(`${link} (no heading #${fragment} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: every npm run script it names exists', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const rootScripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const missing: string[] = [];
    for (const m of text.matchAll(/npm run (?:-[a-z-]+ )*([\w:@/-]+)(?: --workspace[ =]([\w@/.-]+))?/g)) {
      const [, script, workspace] = m;
      let scripts = rootScripts;
      if (workspace) {
        const dir = workspace.startsWith('@entity-record-api/') ? join('packages', workspace.split('/')[1]) : workspace;
        scripts = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')).scripts;
      }
      if (!(script in scripts)) missing.push(m[0]);
    }
    expect(missing).toEqual([]);
  });

  it('keeps the README at most 300 lines: a door, not the manual', () => {
    expect(readme().split('\n').length).toBeLessThanOrEqual(300);
  });

  it('needs nothing outside the repository: no link or path to ../shared', () => {
    const outside = files.filter((file) => /\.\.\/shared\/(SPEC|CONTRACT|DESIGN)\.md/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(outside).toEqual([]);
  });
});
