// Every relative link of the README and docs/ names a file of the repository, and a heading of it when it names one.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';

/** GitHub's anchor of a heading: lower case, punctuation but `-` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The Markdown files a reader of the docs follows links through. */
function pages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return under(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'bench/README.md', ...under('bench/notes'), ...under('docs')];
}

test('every relative link of the README, docs/, bench/README.md and bench/notes/ resolves, anchors included', () => {
  let checked = 0;
  for (const page of pages()) {
    // Code spans and blocks hold examples, not links.
    const text = readFileSync(page, 'utf8')
      .replace(/```[\s\S]*?```/g, '')
      .replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const path = file === '' ? page : normalize(join(dirname(page), file));
      assert.ok(existsSync(path), `${page} links to ${target}, and ${path} does not exist`);
      if (anchor !== undefined && path.endsWith('.md')) {
        const headings = new Set([...readFileSync(path, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
        assert.ok(headings.has(anchor), `${page} links to ${target}, which is no heading of ${path}`);
      }
      checked++;
    }
  }
  assert.ok(checked > 40, `only ${checked} links found: the pattern no longer matches the pages`);
});

test('no shell example of the README or docs/ holds a placeholder that would not run as written', () => {
  let blocks = 0;
  for (const page of pages()) {
    for (const [, script] of readFileSync(page, 'utf8').matchAll(/```(?:sh|bash)\n([\s\S]*?)\n```/g)) {
      // `query=…` answers 400: write a real query, or a variable the block sets.
      assert.doesNotMatch(script!, /…|\.\.\.|<[A-Za-z-]+>|(?<![$\w])KEY\b(?!=)/, `${page}: a placeholder in\n${script}`);
      blocks++;
    }
  }
  assert.ok(blocks >= 3, `only ${blocks} shell examples found`);
});

test('every repository path the README, docs/ and bench/ name in a code span exists', () => {
  let named = 0;
  for (const page of pages()) {
    for (const [, path] of readFileSync(page, 'utf8').matchAll(/`((?:test|src|bench|scripts|deploy|policies|rules|docs|ui)\/[^`\s]+)`/g)) {
      // A pattern or a placeholder names no one file.
      if (/[<>*{}…]/.test(path!)) continue;
      assert.ok(existsSync(path!.replace(/#.*$/, '').replace(/[/:]$/, '')), `${page} names ${path}, which does not exist`);
      named++;
    }
  }
  assert.ok(named > 50, `only ${named} paths found`);
});
