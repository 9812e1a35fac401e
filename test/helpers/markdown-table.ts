// Reads the tables and code blocks of the project's Markdown docs, for the tests that hold them to the code.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** A document of the repository, read once by path from the package root. */
export function readDoc(path: string): string {
  return readFileSync(path, 'utf8');
}

/** The text under `heading` (any level, `## Keys`, `### Errors`) up to the next heading of that level or higher. */
export function sectionOf(text: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start !== -1, `no heading "${heading}"`);
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end === -1 ? rest : rest.slice(0, end);
}

/** The rows of the first table in `section`, each keyed by its column's header, code marks kept. */
export function tableOf(section: string): Record<string, string>[] {
  const lines = section.split('\n');
  const first = lines.findIndex((line) => line.startsWith('| '));
  assert.ok(first !== -1, 'no table in the section');
  const after = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  const table = lines.slice(first, after === -1 ? lines.length : after);
  const cells = (line: string) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '').trim());
  const header = cells(table[0]!);
  return table.slice(2).map((line) => Object.fromEntries(cells(line).map((cell, i) => [header[i] ?? String(i), cell])));
}

/** A cell without its code marks: `` `auth.jwt` `` is auth.jwt. */
export function plain(cell: string | undefined): string {
  return (cell ?? '').replace(/`/g, '');
}

/** The text of the first ```lang block after `marker`. */
export function codeBlockAfter(text: string, marker: string, lang: string): string {
  const rest = text.split(marker)[1] ?? '';
  const block = rest.split('```' + lang + '\n')[1]?.split('\n```')[0];
  assert.ok(block !== undefined, `no ${lang} block after ${marker}`);
  return block;
}
