// In charge of counts in words ("1 project", "2 projects", "1,204 members") wherever the product
// tells a number: pages, toasts and e-mails. One place, so no count reads "1 messages"; the
// product speaks English, and Intl.PluralRules says which of its two forms a number takes.
const rules = new Intl.PluralRules('en-US');

/** The word for `n` of something: `one` or `other` (the noun plus s unless given). */
export function nounFor(n: number, one: string, other = `${one}s`): string {
  return rules.select(n) === 'one' ? one : other;
}

/** "1 project", "2 projects", "1,204 members": the number with its word. */
export function count(n: number, one: string, other = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${nounFor(n, one, other)}`;
}
