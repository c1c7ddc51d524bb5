/** C0 controls, DEL and C1 controls: characters a terminal acts on rather than shows. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Text a client sent (a path, an object key, an error message quoting one), as a log line
 * shows it: each control character as `\xNN`, so that a newline cannot forge a log line nor
 * an escape sequence retitle or recolour the terminal. Backslashes stay as they are.
 */
export function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** An error for the log: its name and message printable (they may quote a client's key), then its stack frames. */
export function printableError(error: unknown): string {
  if (!(error instanceof Error)) return printable(String(error));
  const head = String(error);
  const stack = error.stack ?? head;
  return stack.startsWith(head) ? `${printable(head)}${stack.slice(head.length)}` : printable(stack);
}
