/** What the dashboard shows for a time (src/ui/time.tsx): `YYYY-MM-DD HH:MM:SS[.mmm] UTC`. */
export function timestampText(at: string, precise = false): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, precise ? 23 : 19)} UTC`;
}

/** The markup of a time as the server writes it: a <time> with the instant in ISO form and the format ui.js keeps. */
export const timestampHtml = (at: string, precise = false) =>
  `<time class="timestamp" datetime="${new Date(at).toISOString()}" data-format="datetime${precise ? '-ms' : ''}">` +
  `${timestampText(at, precise)}</time>`;
