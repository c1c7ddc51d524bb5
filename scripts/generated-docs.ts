/** The blocks of the docs that a script writes, between a begin and an end marker. */
export interface GeneratedBlock {
  file: string;
  begin: string;
  end: string;
}

/** The markdown with its generated block replaced by `content`. */
export function withGeneratedBlock(markdown: string, block: GeneratedBlock, content: string): string {
  const begin = markdown.indexOf(block.begin);
  const end = markdown.indexOf(block.end, begin);
  if (begin === -1 || end === -1)
    throw new Error(`${block.file} has no generated block between ${block.begin} and ${block.end}`);
  return `${markdown.slice(0, begin + block.begin.length)}\n${content}\n${markdown.slice(end)}`;
}
