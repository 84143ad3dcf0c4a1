// In charge of how the advisor's findings are shown: a table for people (id, level, object, fix)
// with a count per level, JSON for programs, and the exit code (1 when any finding is an ERROR).
import { LEVELS, type Finding, type Level } from './finding.js';

export function counts(findings: Finding[]): Record<Level, number> {
  const result: Record<Level, number> = { ERROR: 0, WARN: 0, INFO: 0 };
  for (const finding of findings) result[finding.level]++;
  return result;
}

export function exitCode(findings: Finding[]): 0 | 1 {
  return findings.some((finding) => finding.level === 'ERROR') ? 1 : 0;
}

export function toJson(findings: Finding[]): string {
  return JSON.stringify({ findings, counts: counts(findings) }, null, 2) + '\n';
}

function summary(findings: Finding[]): string {
  const count = counts(findings);
  const words: Record<Level, [string, string]> = {
    ERROR: ['error', 'errors'],
    WARN: ['warning', 'warnings'],
    INFO: ['note', 'notes'],
  };
  return LEVELS.map((level) => `${count[level]} ${words[level][count[level] === 1 ? 0 : 1]}`).join(', ');
}

/** A table whose last column (the fix) runs on; each finding's detail follows it, indented. */
export function toTable(findings: Finding[]): string {
  if (findings.length === 0) return `No findings: ${summary(findings)}.\n`;
  const header = { id: 'ID', level: 'LEVEL', object: 'OBJECT', fix: 'FIX' };
  const rows = [header, ...findings];
  const width = (key: 'id' | 'level' | 'object') => Math.max(...rows.map((row) => row[key].length));
  const [id, level, object] = [width('id'), width('level'), width('object')];
  const line = (row: { id: string; level: string; object: string; fix: string }) =>
    `${row.id.padEnd(id)}  ${row.level.padEnd(level)}  ${row.object.padEnd(object)}  ${row.fix}`.trimEnd();
  const out = [line(header)];
  for (const finding of findings) {
    out.push(line(finding));
    out.push(`${' '.repeat(id + 2)}${finding.detail}`);
  }
  return `${out.join('\n')}\n\n${summary(findings)}.\n`;
}
